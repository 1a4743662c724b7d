import type { Finding } from './discrepancy-rules';
import type { DiscrepancyRecord, DiscrepancyStatus } from './discrepancy-types';

/**
 * The lifecycle of a discrepancy: open when the rules first find it, updated while its evidence changes,
 * resolved when later data makes the sources agree (re-opened if they part again), accepted by an auditor,
 * which freezes it. Every change carries the projection's clock and the event that caused it, never the
 * wall clock, so a replay writes the same rows.
 */

/** A discrepancy row as the projection keeps it: the auditors' record, its status typed, and the update columns. */
export interface DiscrepancyRow extends DiscrepancyRecord {
  status: DiscrepancyStatus;
  updated_at: string | null;
  updated_by_event: string;
}

export interface Acceptance {
  readonly discrepancyId: string;
  readonly acceptedBy: string;
  readonly note: string;
  readonly acceptedAt: string;
  readonly eventId: string;
}

/** An acceptance recorded before its discrepancy existed; `stored`: in the table before this batch. */
export interface WaitingAcceptance extends Acceptance {
  readonly stored: boolean;
}

/** What a batch changes in the discrepancies and the acceptances waiting for theirs. */
export interface Lifecycle {
  readonly waiting: Map<string, WaitingAcceptance>;
  /** stored waiting acceptances this batch applied (their rows are deleted) */
  readonly applied: Set<string>;
  /** rows this batch changed, by id */
  readonly changed: Map<string, DiscrepancyRow>;
}

/** Accepted by an auditor: the row's evidence is frozen from now on. Any read model's discrepancy row. */
export function accept(r: object, a: Acceptance, updatedAt: string | null, updatedBy: string): void {
  Object.assign(r, {
    status: 'accepted',
    accepted_at: a.acceptedAt,
    accepted_by: a.acceptedBy,
    accepted_note: a.note,
    accepted_by_event: a.eventId,
    updated_at: updatedAt,
    updated_by_event: updatedBy,
  });
}

/** An auditor's acceptance: applied to its row when the row is known, else kept until the discrepancy appears. */
export function recordAcceptance(lc: Lifecycle, row: DiscrepancyRow | undefined, a: Acceptance): void {
  if (row && row.status !== 'accepted') {
    accept(row, a, a.acceptedAt, a.eventId);
    lc.changed.set(row.id, row);
  } else if (!row && !lc.waiting.has(a.discrepancyId)) {
    lc.waiting.set(a.discrepancyId, { ...a, stored: false });
  }
}

/** What opening a discrepancy needs of a finding: a wing's finding, or an order finding (its POS may be unknown). */
export type FindingOf<T extends string> = Omit<Finding, 'type' | 'posId'> & {
  readonly type: T;
  readonly posId: string | null;
};

/** The columns of a discrepancy row that say what the rules found. */
export function findingColumns<F extends FindingOf<string>>(f: F) {
  return {
    type: f.type as F['type'],
    pos_id: f.posId as F['posId'],
    payment_id: f.paymentId,
    order_id: f.orderId,
    method: f.method,
    operation_key: f.operationKey,
    receiver_name: f.receiverName,
    sub_merchant_id: f.subMerchantIds.length === 1 ? f.subMerchantIds[0]! : null,
    sub_merchant_ids: [...f.subMerchantIds],
    currency: f.currency,
    occurred_at: f.occurredAt,
    values: f.values,
    evidence: [...f.evidence],
  };
}

/** The row of a discrepancy the rules found for the first time. */
export function opened<F extends FindingOf<string>>(
  f: F,
  now: string | null,
  eventId: string,
): Omit<DiscrepancyRow, 'type' | 'pos_id'> & { type: F['type']; pos_id: F['posId'] } {
  return {
    id: f.id,
    status: 'open',
    ...findingColumns(f),
    detected_at: now,
    detected_by_event: eventId,
    resolved_at: null,
    resolved_by_event: null,
    accepted_at: null,
    accepted_by: null,
    accepted_note: null,
    accepted_by_event: null,
    updated_at: now,
    updated_by_event: eventId,
  };
}

/**
 * Structural equality of plain JSON values (keys in any order; undefined members count as absent): a row read
 * back from its table has its jsonb keys reordered, and must compare equal to the same finding judged in memory.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/** Re-opens or updates a row the rules still find; true when it changed. */
function update(r: DiscrepancyRow, f: Finding, now: string | null, eventId: string): boolean {
  const subMerchantId = f.subMerchantIds.length === 1 ? f.subMerchantIds[0]! : null;
  const changed =
    r.status === 'resolved' ||
    r.sub_merchant_id !== subMerchantId ||
    r.order_id !== f.orderId ||
    r.currency !== f.currency ||
    r.occurred_at !== f.occurredAt ||
    !sameJson(r.evidence, f.evidence) ||
    !sameJson(r.sub_merchant_ids, f.subMerchantIds) ||
    !sameJson(r.values, f.values);
  if (!changed) return false;
  Object.assign(r, {
    status: 'open',
    resolved_at: null,
    resolved_by_event: null,
    values: f.values,
    evidence: [...f.evidence],
    sub_merchant_id: subMerchantId,
    sub_merchant_ids: [...f.subMerchantIds],
    order_id: f.orderId,
    currency: f.currency,
    occurred_at: f.occurredAt,
    updated_at: now,
    updated_by_event: eventId,
  });
  return true;
}

/** What a change is stamped with: the projection's clock (ISO) and the event that caused it. */
export interface Stamp {
  readonly now: string | null;
  readonly eventId: string;
}

/**
 * Brings a set of rows (`existing`, updated in place) to what the rules find now: new findings open,
 * changed ones update, and open rows in scope (`inScope`) the rules no longer find are resolved.
 */
export function applyFindings(
  lc: Lifecycle,
  existing: Map<string, DiscrepancyRow>,
  findings: readonly Finding[],
  { now, eventId }: Stamp,
  inScope: (r: DiscrepancyRow) => boolean,
): void {
  const seen = new Set<string>();
  for (const f of findings) {
    seen.add(f.id);
    const r = existing.get(f.id);
    if (!r) {
      const row = opened(f, now, eventId);
      // An auditor's acceptance that arrived before the discrepancy existed (a rebuild with other rules,
      // or an earlier build) takes effect as soon as it appears: detected and accepted, evidence frozen.
      const waiting = lc.waiting.get(f.id);
      if (waiting !== undefined) {
        accept(row, waiting, now, eventId);
        lc.waiting.delete(f.id);
        if (waiting.stored) lc.applied.add(f.id);
      }
      existing.set(f.id, row);
      lc.changed.set(row.id, row);
      continue;
    }
    if (r.status === 'accepted') continue; // an auditor's decision freezes the evidence
    if (update(r, f, now, eventId)) lc.changed.set(r.id, r);
  }
  for (const r of existing.values()) {
    if (r.status !== 'open' || seen.has(r.id) || !inScope(r)) continue;
    // Later data made the sources agree: resolved, by this event, at the clock's time.
    resolve(r, now, eventId);
    lc.changed.set(r.id, r);
  }
}

/** Resolved: later data made the sources agree. Any read model's discrepancy row. */
export function resolve(r: object, now: string | null, eventId: string): void {
  Object.assign(r, {
    status: 'resolved',
    resolved_at: now,
    resolved_by_event: eventId,
    updated_at: now,
    updated_by_event: eventId,
  });
}
