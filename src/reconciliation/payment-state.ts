import type { ReportWait, ResendRequest } from './discrepancy-rules';
import type { DiscrepancyRow } from './discrepancies/columns';
import { matchMethod, type MatchedOperation } from './matching';
import { observationFromRow, type Observation } from './observations';

/**
 * A payment as the reconciliation holds it while a batch runs: its observations (by method, so that a new
 * observation re-matches its method only), the re-sends asked for it, its discrepancies, when it is due to
 * be judged again and which reports it waits for. `stored` is what the build's tables held when the batch
 * loaded it: the batch writes back only what differs from it.
 */

/** A wait as the report_pending table keeps it: what a completed window must match to judge the payment again. */
export type StoredWait = Pick<ReportWait, 'operationKey' | 'reportId' | 'dateTime'>;

export interface StoredPayment {
  /** the observations, text of a JSON array of observationToRow; null when none (no operation rows yet) */
  readonly observations: string | null;
  readonly due: number | null;
  readonly waits: readonly StoredWait[];
}

export interface PaymentState {
  readonly posId: string;
  readonly paymentId: string;
  readonly observations: Observation[];
  readonly methods: Map<string, { observations: Observation[]; ops: MatchedOperation[] | null }>;
  readonly resends: ResendRequest[];
  readonly discrepancies: Map<string, DiscrepancyRow>;
  readonly stored: StoredPayment;
  /** earliest dateTime or seenAt of any observation (ms): no operation is older (see judge.ts) */
  earliest: number | null;
  /** the matched operations, null until asked for (operationsOf) or after a new observation */
  ops: MatchedOperation[] | null;
  /** its operation and receiver rows are written again: new observations, or a receiver's sub-merchant may have changed */
  rowsChanged: boolean;
  /** when it is judged again (ms), null when nothing can change by the clock alone */
  due: number | null;
  /** operations whose judgement waits for a report, as of its last full judgement (one per operation, report and time) */
  waits: readonly StoredWait[];
}

export const paymentKey = (posId: string, paymentId: string) => `${posId}\u0000${paymentId}`;

function timeOf(o: Observation): number | null {
  const a = o.dateTime === null ? NaN : Date.parse(o.dateTime);
  const b = o.seenAt === null ? NaN : Date.parse(o.seenAt);
  if (Number.isNaN(a)) return Number.isNaN(b) ? null : b;
  return Number.isNaN(b) ? a : Math.min(a, b);
}

export function addObservation(p: PaymentState, o: Observation): void {
  p.observations.push(o);
  const m = p.methods.get(o.method);
  if (m) {
    m.observations.push(o);
    m.ops = null;
  } else p.methods.set(o.method, { observations: [o], ops: null });
  const t = timeOf(o);
  if (t !== null && (p.earliest === null || t < p.earliest)) p.earliest = t;
  p.ops = null;
}

/** A payment as loaded: its stored observations replayed into the state. */
export function paymentOf(posId: string, paymentId: string, stored: StoredPayment): PaymentState {
  const p: PaymentState = {
    posId,
    paymentId,
    observations: [],
    methods: new Map(),
    resends: [],
    discrepancies: new Map(),
    stored,
    earliest: null,
    ops: null,
    rowsChanged: false,
    due: stored.due,
    waits: stored.waits,
  };
  if (stored.observations !== null)
    for (const row of JSON.parse(stored.observations) as unknown[][])
      addObservation(p, observationFromRow(posId, paymentId, row));
  return p;
}

/** The payment's operations (matchPayment), re-matching only the methods that got new observations. */
export function operationsOf(p: PaymentState): MatchedOperation[] {
  if (p.ops !== null) return p.ops;
  const ops: MatchedOperation[] = [];
  for (const method of [...p.methods.keys()].sort()) {
    const m = p.methods.get(method)!;
    m.ops ??= matchMethod(m.observations);
    ops.push(...m.ops);
  }
  p.ops = ops;
  return ops;
}

/** Could one of the payment's operations have its time in [from, to)? (Its time is one of the observations' times.) */
export function mayHaveTimeIn(p: PaymentState, from: number, to: number): boolean {
  for (const o of p.observations) {
    for (const t of [o.dateTime, o.seenAt]) {
      if (t === null) continue;
      const ms = Date.parse(t);
      if (ms >= from && ms < to) return true;
    }
  }
  return false;
}
