import { judgeLater, stamp, type Batch } from './batch';
import { findDiscrepancies, nextDue, reportWaits, type ReportWait, type SyncWindow } from './discrepancy-rules';
import { applyFindings } from './discrepancies/lifecycle';
import type { MatchedOperation } from './matching';
import { mayHaveTimeIn, operationsOf, type PaymentState, type StoredWait } from './payment-state';
import { subMerchantLookup } from './sub-merchant-names';

/**
 * When and how a payment is judged. At the end of every append (the events of one append's transaction)
 * the payments it concerns are judged again, and so is every payment whose grace period or re-send grace
 * has run out by the new clock: so the rows (detection and resolution times and events included) are the
 * same whatever the batch sizes, and a sync page's rows, records and webhooks re-match a payment once.
 */

function setDue(b: Batch, p: PaymentState, due: number | null): void {
  if (due === p.due) return;
  p.due = due;
  if (due !== null) b.due.push(due, p);
}

const waitKey = (w: StoredWait) => `${w.operationKey}\u0000${w.reportId}\u0000${w.dateTime ?? ''}`;
const waitsKey = (ws: readonly StoredWait[]) => [...new Set(ws.map(waitKey))].sort().join('\u0001');

export const sameWaits = (a: readonly StoredWait[], b: readonly StoredWait[]) =>
  (a.length === 0 && b.length === 0) || waitsKey(a) === waitsKey(b);

/** Keeps the payment's waits, one per operation, report and time (what the table stores). */
function setWaits(p: PaymentState, waits: readonly ReportWait[]): void {
  if (sameWaits(waits, p.waits)) return;
  const seen = new Set<string>();
  p.waits = waits
    .filter((w) => !seen.has(waitKey(w)) && !!seen.add(waitKey(w)))
    .map((w) => ({ operationKey: w.operationKey, reportId: w.reportId, dateTime: w.dateTime }));
}

/**
 * Judges one payment at the clock. When no operation can be older than the grace period yet (every
 * operation's time is one of its observations' dateTime or seenAt, so none is earlier than `earliest`),
 * the rules find nothing and the payment has no open discrepancy (one would have needed an operation that
 * old, and the clock only moves forward): the matching is skipped and the payment is due again at
 * `earliest + grace` (or an earlier re-send grace), where it is judged in full. Judging a payment when
 * nothing but the clock changed never changes a row unless something came of age, so this extra visit
 * changes no result.
 */
function evaluate(b: Batch, p: PaymentState, eventId: string): void {
  if (b.clock === null || p.earliest === null || b.clock < p.earliest + b.graceMs) {
    let due = p.earliest === null ? null : p.earliest + b.graceMs;
    for (const r of p.resends) {
      const t = Date.parse(r.requestedAt);
      if ((b.clock === null || t > b.clock) && (due === null || t < due)) due = t;
    }
    setDue(b, p, due);
    return;
  }
  const ops = operationsOf(p);
  const rules = {
    now: b.clock,
    graceMs: b.graceMs,
    windows: b.windows.get(p.posId) ?? [],
    completedReports: b.completedReports.get(p.posId) ?? new Set<string>(),
    resends: p.resends,
    subMerchantOf: subMerchantLookup(b.names),
  };
  const findings = findDiscrepancies(ops, rules);
  const waits = reportWaits(ops, rules);
  // an operation still waiting for a report keeps its judgement of the waiting types as it was (neither
  // resolved nor re-opened): split_mismatch for a split wait, missing_in_* for a missing wait
  const split = new Set(waits.filter((w) => w.judges === 'split').map((w) => w.operationKey));
  const missing = new Set(waits.filter((w) => w.judges === 'missing').map((w) => w.operationKey));
  applyFindings(b.lifecycle, p.discrepancies, findings, stamp(b, eventId), (r) =>
    r.type === 'split_mismatch'
      ? !split.has(r.operation_key)
      : r.type === 'missing_in_report' || r.type === 'missing_in_period'
        ? !missing.has(r.operation_key)
        : true,
  );
  const kept = waits.filter((w) => w.judges !== 'split' || splitMayChange(p, ops, w.operationKey));
  setWaits(p, kept);
  setDue(b, p, nextDue(ops, p.resends, b.clock, b.graceMs, kept));
}

/**
 * Can the end of a split wait change the operation's rows? Only when its receivers' shares do not add up to
 * its amount, or it has a split_mismatch already (resolved or kept then). Otherwise its report's end judges
 * it and finds nothing: a receiver row arriving before then is an observation and judges it again (and waits
 * again if it must). Not kept, such a wait spares the payment's load and judgement when its window completes
 * (issue 26: about 10,000 payments of the 10k month at one append, each with nothing to change).
 */
function splitMayChange(p: PaymentState, ops: readonly MatchedOperation[], key: string): boolean {
  for (const d of p.discrepancies.values()) if (d.type === 'split_mismatch' && d.operation_key === key) return true;
  const r = ops.find((op) => op.key === key)?.register;
  if (!r || r.receivers.length === 0 || r.amount === null) return false;
  return r.receivers.reduce((a, x) => a + x.share, 0n) !== r.amount;
}

/** End of an append: the payments it touched are judged, then every payment due by the clock. */
export function judgeAppend(b: Batch, lastEventId: string): void {
  for (const [p, eventId] of b.toJudge) evaluate(b, p, eventId);
  b.toJudge.clear();
  if (b.clock === null) return;
  const clock = b.clock;
  for (const p of b.due.takeReady(clock)) if (p.due !== null && p.due <= clock) evaluate(b, p, lastEventId);
}

/** Does this completed window end one of the payment's waits? (its report, or a window covering the row) */
function endsWait(p: PaymentState, w: SyncWindow, from: number, to: number): boolean {
  if (p.posId !== w.posId) return false;
  for (const x of p.waits) {
    if (x.reportId === w.reportId) return true;
    if (x.dateTime !== null) {
      const t = Date.parse(x.dateTime);
      if (t >= from && t < to) return true;
    }
  }
  return false;
}

const inWindow = (op: MatchedOperation, from: number, to: number) => {
  if (op.occurredAt === null) return false;
  const t = Date.parse(op.occurredAt);
  return t >= from && t < to;
};

/**
 * A completed window: the payments of its pos that waited for it, and those with an operation in it that
 * lacks a register or period row (now known missing), are judged at the end of the append.
 */
export function judgeWindowPayments(b: Batch, w: SyncWindow, eventId: string): void {
  const from = Date.parse(w.from);
  const to = Date.parse(w.to);
  for (const p of b.payments.values()) {
    if (p.posId !== w.posId) continue;
    if (endsWait(p, w, from, to)) judgeLater(b, p, eventId);
    else if (
      mayHaveTimeIn(p, from, to) &&
      operationsOf(p).some((op) => inWindow(op, from, to) && !(op.register && op.period))
    )
      judgeLater(b, p, eventId);
  }
}
