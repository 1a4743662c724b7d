import { amountInDoubt } from './amounts';
import type { DiscrepancyRow } from './columns';
import type { DiscrepancyType } from './registry';

/**
 * The lifecycle of a discrepancy, the same in every leg: open when its leg's rule first finds it, updated
 * while what the rule found changes, resolved when the rule no longer finds it (re-opened if it finds it
 * again), accepted by an auditor, which freezes it. A leg returns findings; this module owns the status,
 * the times and the rows.
 *
 * The one rule for the times: a change is stamped with the leg's clock and the event that caused it
 * (`Stamp`), never the wall clock, so a replay writes the same rows. `detected_at` is the stamp of the
 * judgement that first found it, `resolved_at` the stamp of the one that no longer found it, `updated_at`
 * the stamp of the last change (a revocation's too: the leg's clock at the event), `accepted_at` the time the
 * auditor gave. What the clock is, is the leg's
 * (kept as each leg first stored it, so no stored time changes):
 *   psp, orders   the latest time the events so far carry (src/reconciliation/event-clock.ts), and the event
 *                 that made the judgement happen
 *   settlement    the time the append that made the change was recorded, and its last event
 *   payouts       the days in the bank's data: the leg judges from all its inputs each time (`wholeRows`), so
 *                 a finding carries when it was found and when it ended (a payout paid late)
 */

/** A discrepancy a leg's rule sees now (before the lifecycle: status, detection and resolution times). */
export interface Finding<T extends DiscrepancyType = DiscrepancyType> {
  /** src/reconciliation/discrepancies/id.ts `discrepancyId(type, key)` */
  readonly id: string;
  readonly type: T;
  /** null where no POS is concerned (an order the PSP never saw, a settlement day) */
  readonly posId: string | null;
  readonly paymentId: string | null;
  readonly orderId: string | null;
  readonly method: string | null;
  readonly operationKey: string;
  readonly receiverName: string | null;
  readonly subMerchantIds: readonly string[];
  readonly currency: string | null;
  /** ISO */
  readonly occurredAt: string | null;
  /** what each source said (amounts as decimal strings of minor units) */
  readonly values: Record<string, unknown>;
  /** event ids, in commit order where known */
  readonly evidence: readonly string[];
}

/** What a change is stamped with: the leg's clock (ISO) and the event that caused it. */
export interface Stamp {
  readonly now: string | null;
  readonly eventId: string;
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

/**
 * What a batch changes in a leg's discrepancies. `waiting`: the acceptances waiting for their discrepancy to
 * be found, for a leg that keeps them (the PSP's: an acceptance made under other rules takes effect when the
 * discrepancy appears); null for a leg that never kept them (orders, settlement: an acceptance of an id not
 * found yet changes nothing, as it always has).
 */
export interface Lifecycle {
  readonly waiting: Map<string, WaitingAcceptance> | null;
  /** stored waiting acceptances this batch applied (their rows are deleted) */
  readonly applied: Set<string>;
  /** rows this batch changed, by id */
  readonly changed: Map<string, DiscrepancyRow>;
}

export const newLifecycle = (waiting: Map<string, WaitingAcceptance> | null = null): Lifecycle => ({
  waiting,
  applied: new Set(),
  changed: new Map(),
});

/** The columns of a row that say what the rule found. */
export function findingColumns(f: Finding) {
  return {
    type: f.type as string,
    pos_id: f.posId,
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
    // what the values put in doubt: it changes with them, and is frozen with them by an acceptance
    amount_in_doubt: amountInDoubt(f),
    // the same, and still followed once an acceptance freezes the rest (trackAccepted)
    amount_in_doubt_now: amountInDoubt(f),
  };
}

/** The row of a discrepancy found for the first time. */
export function opened(f: Finding, { now, eventId }: Stamp): DiscrepancyRow {
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
    past_resolutions: [],
    past_resolved_at: [],
    past_accepted_at: [],
  };
}

/** Resolved: the rule no longer finds it. */
export function resolve(r: DiscrepancyRow, { now, eventId }: Stamp): void {
  Object.assign(r, {
    status: 'resolved',
    resolved_at: now,
    resolved_by_event: eventId,
    updated_at: now,
    updated_by_event: eventId,
  });
}

/** Accepted by an auditor: the row's evidence is frozen from now on. */
export function accept(r: DiscrepancyRow, a: Omit<Acceptance, 'discrepancyId'>, { now, eventId }: Stamp): void {
  Object.assign(r, {
    status: 'accepted',
    accepted_at: a.acceptedAt,
    accepted_by: a.acceptedBy,
    accepted_note: a.note,
    accepted_by_event: a.eventId,
    updated_at: now,
    updated_by_event: eventId,
  });
}

/** An acceptance is stamped with its own time and event. */
const stampOf = (a: Omit<Acceptance, 'discrepancyId'>): Stamp => ({ now: a.acceptedAt, eventId: a.eventId });

/**
 * An auditor's acceptance: applied to its row when the row is known, else kept until the discrepancy appears
 * (by a leg that keeps waiting acceptances).
 */
export function recordAcceptance(lc: Lifecycle, row: DiscrepancyRow | undefined, a: Acceptance): void {
  if (row && row.status !== 'accepted') {
    accept(row, a, stampOf(a));
    lc.changed.set(row.id, row);
  } else if (!row && lc.waiting && !lc.waiting.has(a.discrepancyId)) {
    lc.waiting.set(a.discrepancyId, { ...a, stored: false });
  }
}

/** An acceptance taken back (DiscrepancyAcceptanceRevoked): `acceptance` is the DiscrepancyAccepted event's id. */
export interface Revocation {
  readonly discrepancyId: string;
  readonly acceptance: string;
  readonly eventId: string;
}

/** Taken back: open again, the decision cleared, its values and evidence no longer frozen. */
export function reopen(r: DiscrepancyRow, { now, eventId }: Stamp): void {
  Object.assign(r, {
    // the acceptance taken back is kept with its end, so a past day it stood on still reads it accepted
    past_accepted_at: [...r.past_accepted_at, r.accepted_at, now],
    status: 'open',
    accepted_at: null,
    accepted_by: null,
    accepted_note: null,
    accepted_by_event: null,
    updated_at: now,
    updated_by_event: eventId,
  });
}

/**
 * An acceptance taken back, stamped with the leg's clock like the other changes: the row opens again, so the
 * leg's next judgement updates its values or resolves it as usual; true when it did (the leg then judges the
 * row's scope again at once). An acceptance still waiting for its discrepancy is dropped. A revocation of any
 * other acceptance than the one in force (an older one, one never applied, a second revocation) changes
 * nothing, so a replay or a repeated revocation is harmless.
 */
export function recordRevocation(lc: Lifecycle, row: DiscrepancyRow | undefined, v: Revocation, stamp: Stamp): boolean {
  if (row) {
    if (row.status !== 'accepted' || row.accepted_by_event !== v.acceptance) return false;
    reopen(row, stamp);
    lc.changed.set(row.id, row);
    return true;
  }
  const waiting = lc.waiting?.get(v.discrepancyId);
  if (waiting?.eventId === v.acceptance) {
    lc.waiting!.delete(v.discrepancyId);
    // stored: its row in the waiting table is deleted like an applied one's
    if (waiting.stored) lc.applied.add(v.discrepancyId);
  }
  return false;
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

/** Re-opens or updates a row the rule still finds; true when it changed. */
function update(r: DiscrepancyRow, f: Finding, { now, eventId }: Stamp): boolean {
  const columns = findingColumns(f);
  const row = r as unknown as Record<string, unknown>;
  const changed = r.status === 'resolved' || Object.entries(columns).some(([k, v]) => !sameJson(row[k], v));
  if (!changed) return false;
  Object.assign(r, columns, {
    // found again: the resolution it ends is kept, so a cut between the two still reads it resolved
    past_resolutions:
      r.status === 'resolved' && r.resolved_by_event !== null
        ? [...r.past_resolutions, r.resolved_by_event, eventId]
        : r.past_resolutions,
    past_resolved_at:
      r.status === 'resolved' && r.resolved_by_event !== null
        ? [...r.past_resolved_at, r.resolved_at, now]
        : r.past_resolved_at,
    status: 'open',
    resolved_at: null,
    resolved_by_event: null,
    updated_at: now,
    updated_by_event: eventId,
  });
  return true;
}

/**
 * An accepted row keeps its values, evidence and amount_in_doubt as accepted, but what the rule puts in doubt now
 * is still followed (`amount_in_doubt_now`; null once the rule no longer finds it): a decision releases the amount
 * accepted, and money in doubt beyond it is held again (src/export/payouts/holds.ts). True when it changed.
 */
function trackAccepted(r: DiscrepancyRow, now: bigint | null, { now: at, eventId }: Stamp): boolean {
  if (r.amount_in_doubt_now === now) return false;
  Object.assign(r, { amount_in_doubt_now: now, updated_at: at, updated_by_event: eventId });
  return true;
}

/** A finding the rule makes for the first time: its row, accepted at once if an acceptance waited for it. */
function open(lc: Lifecycle, f: Finding, stamp: Stamp): DiscrepancyRow {
  const row = opened(f, stamp);
  // An auditor's acceptance that arrived before the discrepancy existed (a rebuild with other rules, or an
  // earlier build) takes effect as soon as it appears: detected and accepted, evidence frozen.
  const waiting = lc.waiting?.get(f.id);
  if (waiting !== undefined) {
    accept(row, waiting, stamp);
    lc.waiting!.delete(f.id);
    if (waiting.stored) lc.applied.add(f.id);
  }
  return row;
}

/**
 * Brings a set of rows (`existing`, updated in place) to what the rule finds now: new findings open, changed
 * ones update (a resolved one re-opens), and open rows in scope (`inScope`) the rule no longer finds are
 * resolved; an accepted row is frozen but for what is in doubt now (trackAccepted).
 */
export function applyFindings(
  lc: Lifecycle,
  existing: Map<string, DiscrepancyRow>,
  findings: readonly Finding[],
  stamp: Stamp,
  inScope: (r: DiscrepancyRow) => boolean = () => true,
): void {
  const seen = new Set<string>();
  for (const f of findings) {
    seen.add(f.id);
    const r = existing.get(f.id);
    if (!r) {
      const row = open(lc, f, stamp);
      existing.set(f.id, row);
      lc.changed.set(row.id, row);
    } else if (r.status === 'accepted' ? trackAccepted(r, amountInDoubt(f), stamp) : update(r, f, stamp))
      lc.changed.set(r.id, r);
  }
  for (const r of existing.values()) {
    if (r.status === 'resolved' || seen.has(r.id) || !inScope(r)) continue;
    if (r.status === 'accepted') {
      if (trackAccepted(r, null, stamp)) lc.changed.set(r.id, r);
      continue;
    }
    resolve(r, stamp);
    lc.changed.set(r.id, r);
  }
}

/** A finding of a leg judged whole from its inputs: when it was found and, once it no longer holds, when it ended. */
export interface DatedFinding extends Finding {
  readonly detected: Stamp;
  readonly resolved: Stamp | null;
}

/** A decision on one discrepancy, as a leg judged whole keeps them: acceptances and revocations, in commit order. */
export type Decided =
  | ({ readonly kind: 'accepted' } & Omit<Acceptance, 'discrepancyId'>)
  | { readonly kind: 'revoked'; readonly acceptance: string; readonly eventId: string; readonly revokedAt: string };

const later = (a: Stamp, b: Stamp): Stamp => ((a.now ?? '') >= (b.now ?? '') ? a : b);

/**
 * The rows of a leg that judges from all its inputs each time (payouts): each finding opened at its own
 * detection, resolved at its own end, then its decisions applied in order by the same steps as above (a
 * revocation stamped with its own time, as an acceptance is; a finding that ended by then is resolved again,
 * at the later of its end and the revocation).
 */
export function wholeRows(
  findings: readonly DatedFinding[],
  decisions: ReadonlyMap<string, readonly Decided[]>,
): DiscrepancyRow[] {
  return findings.map((f) => {
    const row = opened(f, f.detected);
    if (f.resolved) resolve(row, f.resolved);
    for (const d of decisions.get(f.id) ?? []) {
      if (d.kind === 'accepted') {
        if (row.status !== 'accepted') accept(row, d, stampOf(d));
        continue;
      }
      const stamp = { now: d.revokedAt, eventId: d.eventId };
      if (!recordRevocation(newLifecycle(), row, { discrepancyId: f.id, ...d }, stamp)) continue;
      if (f.resolved) resolve(row, later(f.resolved, stamp));
    }
    return row;
  });
}
