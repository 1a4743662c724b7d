import {
  PAYOUT_RUNS_STREAM,
  PayoutRunApproved,
  PayoutRunCancelled,
  PayoutRunDrafted,
  PayoutRunFileTaken,
  PayoutRunSent,
  PayoutRunUnpaidReleased,
} from '../events/payout-run-events';
import { dataOf, type EventData, isEvent } from '../events/catalog';
import type { EventStore, RecordedEvent } from '../store/types';
import { PayoutRunRefused } from './errors';

/** A payout run as its events make it: draft → approved → sent, or cancelled before it is sent. */

export type PayoutRunStatus = 'draft' | 'approved' | 'sent' | 'cancelled';

export type DraftData = EventData<typeof PayoutRunDrafted>;

export interface PayoutRun extends Omit<DraftData, 'runId'> {
  readonly id: string;
  readonly status: PayoutRunStatus;
  readonly approvedBy: string | null;
  readonly approvedAt: string | null;
  readonly executionDate: string | null;
  readonly sentBy: string | null;
  readonly sentAt: string | null;
  readonly fileSha256: string | null;
  /** who took the approved run's payment file, first time each, in order (the bank may have it since) */
  readonly fileTaken: ReadonlyArray<{ readonly by: string; readonly at: string }>;
  readonly cancelledBy: string | null;
  readonly cancelledAt: string | null;
  readonly cancelReason: string | null;
  /** cancelled after its file was taken: the person cancelling said the bank did not execute it */
  readonly bankDidNotExecute: boolean;
  /**
   * a sent run's transfers the bank did not pay in full, freed for a new run by a named person, in order (absent:
   * none): what each line released no longer counts as taken by this run (plan.ts referencesTaken)
   */
  readonly unpaidReleased?: ReadonlyArray<UnpaidRelease>;
}

export type UnpaidRelease = Omit<EventData<typeof PayoutRunUnpaidReleased>, 'runId'>;

export interface PayoutRuns {
  /** in the order drafted */
  readonly runs: ReadonlyMap<string, PayoutRun>;
  /** the stream's last revision (-1: no stream), appended against so a stale view is refused */
  readonly revision: number;
}

/** Folds the `payout-runs` stream, in order. Pure: the same events give the same runs. */
export function foldRuns(events: readonly RecordedEvent[]): PayoutRuns {
  const runs = new Map<string, PayoutRun>();
  let revision = -1;
  const update = (id: string, change: Partial<PayoutRun>) => {
    const r = runs.get(id);
    if (r) runs.set(id, { ...r, ...change });
  };
  for (const e of events) {
    revision = e.revision;
    if (isEvent(PayoutRunDrafted, e)) {
      const { runId, ...d } = dataOf(PayoutRunDrafted, e);
      runs.set(runId, { ...d, id: runId, status: 'draft', ...NOTHING_YET });
    } else if (isEvent(PayoutRunApproved, e)) {
      const d = dataOf(PayoutRunApproved, e);
      update(d.runId, {
        status: 'approved',
        approvedBy: d.approvedBy,
        approvedAt: d.approvedAt,
        executionDate: d.executionDate,
      });
    } else if (isEvent(PayoutRunSent, e)) {
      const d = dataOf(PayoutRunSent, e);
      update(d.runId, { status: 'sent', sentBy: d.sentBy, sentAt: d.sentAt, fileSha256: d.fileSha256 });
    } else if (isEvent(PayoutRunFileTaken, e)) {
      const d = dataOf(PayoutRunFileTaken, e);
      const r = runs.get(d.runId);
      if (r) update(d.runId, { fileTaken: [...r.fileTaken, { by: d.takenBy, at: d.takenAt }] });
    } else if (isEvent(PayoutRunCancelled, e)) {
      const d = dataOf(PayoutRunCancelled, e);
      update(d.runId, {
        status: 'cancelled',
        cancelledBy: d.cancelledBy,
        cancelledAt: d.cancelledAt,
        cancelReason: d.reason,
        bankDidNotExecute: d.bankDidNotExecute === true,
      });
    } else if (isEvent(PayoutRunUnpaidReleased, e)) {
      const { runId, ...d } = dataOf(PayoutRunUnpaidReleased, e);
      const r = runs.get(runId);
      if (r) update(runId, { unpaidReleased: [...(r.unpaidReleased ?? []), d] });
    }
  }
  return { runs, revision };
}

const NOTHING_YET = {
  approvedBy: null,
  approvedAt: null,
  executionDate: null,
  sentBy: null,
  sentAt: null,
  fileSha256: null,
  fileTaken: [],
  cancelledBy: null,
  cancelledAt: null,
  cancelReason: null,
  bankDidNotExecute: false,
} as const;

export async function readRuns(store: EventStore): Promise<PayoutRuns> {
  return foldRuns(await store.readStream(PAYOUT_RUNS_STREAM));
}

/** What named people released of each of a run's references (minor units): no longer taken by the run. */
export function releasedOf(run: Pick<PayoutRun, 'unpaidReleased'>): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const r of run.unpaidReleased ?? [])
    for (const l of r.lines) out.set(l.reference, (out.get(l.reference) ?? 0n) + BigInt(l.amount));
  return out;
}

export function runOf(runs: PayoutRuns, id: string): PayoutRun {
  const r = runs.runs.get(id);
  if (!r) throw new PayoutRunRefused('NO_SUCH_RUN', `run: no payout run ${JSON.stringify(id.slice(0, 80))}`);
  return r;
}

/** The sum of a run's lines per currency (minor units), sorted by currency. */
export function totalsOf(run: Pick<PayoutRun, 'lines'>): { currency: string; amount: bigint; count: number }[] {
  const t = new Map<string, { amount: bigint; count: number }>();
  for (const l of run.lines) {
    const s = t.get(l.currency) ?? { amount: 0n, count: 0 };
    t.set(l.currency, { amount: s.amount + BigInt(l.amount), count: s.count + 1 });
  }
  return [...t.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([currency, s]) => ({ currency, ...s }));
}

/** A run as JSON (the CLI's --format json, the HTTP API): its fields and totals per currency, amounts as strings. */
export function runJson(r: PayoutRun) {
  return { ...r, totals: totalsOf(r).map((t) => ({ ...t, amount: t.amount.toString() })) };
}
