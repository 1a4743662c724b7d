import type { RecordedEvent } from '../store/types';
import { eventTime } from './event-clock';
import type { ResendRequest, SyncWindow } from './discrepancy-rules';
import type { DueHeap } from './due-heap';
import type { DiscrepancyRow } from './discrepancies/columns';
import type { Lifecycle, Stamp } from './discrepancies/lifecycle';
import type { Observation } from './observations';
import type { PaymentState } from './payment-state';
import type { SubMerchantNames } from './sub-merchant-names';

/**
 * The reconciliation's state for one batch of events: only the payments the batch may touch (loaded by
 * load-batch.ts), the completed sync windows, the directory, the report-level discrepancies and what the
 * batch adds. It is dropped after the batch: nothing is cached across batches, so memory does not grow with
 * the log. write-batch.ts writes back what changed.
 */
export interface Batch {
  readonly graceMs: number;
  /** the latest time carried by the events so far (ms): the projection's only notion of "now" */
  clock: number | null;
  readonly payments: Map<string, PaymentState>;
  /** the observation of each observation event of the batch (read once, when planning) */
  readonly observed: ReadonlyMap<RecordedEvent, Observation>;
  /** completed sync windows per pos, and their report ids */
  readonly windows: Map<string, SyncWindow[]>;
  readonly completedReports: Map<string, Set<string>>;
  readonly names: SubMerchantNames;
  /** report-level discrepancies (report_count_mismatch), loaded when the batch may change them */
  readonly reportLevel: Map<string, DiscrepancyRow>;
  /** ids of discrepancy rows in the table before this batch */
  readonly storedDiscrepancies: Set<string>;
  readonly lifecycle: Lifecycle;
  readonly due: DueHeap<PaymentState>;
  /** what the batch appends to the logs it keeps */
  readonly added: {
    readonly observations: Observation[];
    readonly resends: Array<ResendRequest & { outcome: string }>;
    readonly windows: SyncWindow[];
  };
  /** payments the current append touched, each named by the first of its events that touched it */
  readonly toJudge: Map<PaymentState, string>;
}

export function advanceClock(b: Batch, e: RecordedEvent): void {
  const t = eventTime(e);
  if (t !== null && (b.clock === null || t > b.clock)) b.clock = t;
}

export function stamp(b: Batch, eventId: string): Stamp {
  return { now: b.clock === null ? null : new Date(b.clock).toISOString(), eventId };
}

export function addWindow(b: Batch, w: SyncWindow): void {
  const list = b.windows.get(w.posId);
  if (list) list.push(w);
  else b.windows.set(w.posId, [w]);
  const reports = b.completedReports.get(w.posId);
  if (reports) reports.add(w.reportId);
  else b.completedReports.set(w.posId, new Set([w.reportId]));
}

/** The payment is judged at the end of the current append (named by the first event that asked). */
export function judgeLater(b: Batch, p: PaymentState, eventId: string): void {
  if (!b.toJudge.has(p)) b.toJudge.set(p, eventId);
}
