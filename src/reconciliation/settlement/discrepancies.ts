import { stableStringify, uuidV5 } from '../../canonical';
import { DiscrepancyAccepted } from '../../events/audit-events';
import { dataOf, isEvent } from '../../events/catalog';
import { localMidnight } from '../../journal-rules';
import type { Tx } from '../../projector/projection';
import type { DiscrepancyTypeOf } from '../discrepancies/registry';
import type { RecordedEvent } from '../../store/types';
import type { SettlementJudgement } from './match';
import { deadlineOf, type MatchRules } from './match';

/**
 * The cash leg's discrepancies, with the columns of recon.discrepancies. A judgement gives the set of
 * discrepancies that hold now for one currency; `syncDiscrepancies` opens the new ones, resolves the ones
 * that no longer hold and reopens one that holds again, dated by the event that made the change. An accepted
 * one (DiscrepancyAccepted) keeps its status and the values it was accepted with, as the reconciliation's do.
 */

export interface SettlementDiscrepancy {
  readonly id: string;
  /** the settlement leg's types, from the registry of types */
  readonly type: DiscrepancyTypeOf<'settlement'>;
  readonly posId: string | null;
  readonly operationKey: string;
  readonly currency: string;
  readonly occurredAt: Date;
  readonly values: Record<string, string | number | string[]>;
  readonly evidence: readonly string[];
}

export function discrepanciesOf(
  currency: string,
  j: SettlementJudgement,
  rules: Pick<MatchRules, 'lateBusinessDays' | 'holidays'>,
  timezone: string,
): SettlementDiscrepancy[] {
  const at = (day: string) => localMidnight(day, timezone);
  const out: SettlementDiscrepancy[] = [];
  for (const d of j.missing)
    out.push({
      id: uuidV5(`settlement_missing|${currency}|${d.day}`),
      type: 'settlement_missing',
      posId: null,
      operationKey: `settlement:${currency}:${d.day}`,
      currency,
      occurredAt: at(d.day),
      values: {
        due_on: d.day,
        deadline: deadlineOf(d, rules),
        expected: d.amount.toString(),
        activity_from: d.firstActivity,
        activity_to: d.lastActivity,
      },
      evidence: [],
    });
  for (const m of j.matches) {
    const c = m.credit;
    const dueOn = m.days.map((d) => d.day);
    if (m.shortfall > 0n)
      out.push({
        id: uuidV5(`settlement_short|${c.id}`),
        type: 'settlement_short',
        posId: c.accountId,
        operationKey: `bank:${c.id}`,
        currency,
        occurredAt: at(c.bookingDate),
        values: {
          due_on: dueOn,
          expected: m.expected.toString(),
          received: c.amount.toString(),
          shortfall: m.shortfall.toString(),
          booked_on: c.bookingDate,
          bank_ref: c.bankRef ?? '',
        },
        evidence: [c.id],
      });
    for (const l of m.late)
      out.push({
        id: uuidV5(`settlement_late|${currency}|${l.day}`),
        type: 'settlement_late',
        posId: c.accountId,
        operationKey: `settlement:${currency}:${l.day}`,
        currency,
        occurredAt: at(c.bookingDate),
        values: {
          due_on: l.day,
          received_on: c.bookingDate,
          business_days_late: l.businessDays,
          received: c.amount.toString(),
          bank_ref: c.bankRef ?? '',
        },
        evidence: [c.id],
      });
  }
  for (const c of j.unexpected)
    out.push({
      id: uuidV5(`settlement_unexpected|${c.id}`),
      type: 'settlement_unexpected',
      posId: c.accountId,
      operationKey: `bank:${c.id}`,
      currency,
      occurredAt: at(c.bookingDate),
      values: { amount: c.amount.toString(), booked_on: c.bookingDate, bank_ref: c.bankRef ?? '' },
      evidence: [c.id],
    });
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Brings the discrepancies table of one currency to `now`, as of `by` (the last event of the append). */
export async function syncDiscrepancies(
  tx: Tx,
  schema: string,
  currency: string,
  now: readonly SettlementDiscrepancy[],
  by: RecordedEvent,
): Promise<void> {
  const rows = await tx<{ id: string; status: string; values: unknown }[]>`
    select id::text, status, "values" from ${tx(schema)}.discrepancies where currency = ${currency}`;
  const have = new Map(rows.map((r) => [r.id, r]));
  const at = by.recordedAt;
  const wanted = new Set(now.map((d) => d.id));
  const gone = rows.filter((r) => r.status === 'open' && !wanted.has(r.id)).map((r) => r.id);
  // an acceptance is a decision on the difference as it stood: it is not reopened or re-valued
  if (gone.length)
    await tx`update ${tx(schema)}.discrepancies set status = 'resolved', resolved_at = ${at}, resolved_by_event = ${by.id},
      updated_at = ${at}, updated_by_event = ${by.id} where id = any(${gone}::uuid[])`;
  for (const d of now) {
    const old = have.get(d.id);
    const values = stableStringify(d.values);
    if (!old) {
      await tx`insert into ${tx(schema)}.discrepancies (id, type, status, pos_id, payment_id, order_id, method, operation_key,
          receiver_name, sub_merchant_id, sub_merchant_ids, currency, occurred_at, "values", evidence, detected_at,
          detected_by_event, updated_at, updated_by_event)
        values (${d.id}, ${d.type}, 'open', ${d.posId}, null, null, null, ${d.operationKey}, null, null, ${[]}::text[],
          ${currency}, ${d.occurredAt}, (${values}::text)::jsonb, ${[...d.evidence]}::text[], ${at}, ${by.id}, ${at}, ${by.id})`;
    } else if (old.status === 'accepted') {
    } else if (old.status !== 'open' || stableStringify(old.values) !== stableStringify(d.values)) {
      await tx`update ${tx(schema)}.discrepancies set status = 'open', resolved_at = null, resolved_by_event = null,
          "values" = (${values}::text)::jsonb, evidence = ${[...d.evidence]}::text[], occurred_at = ${d.occurredAt},
          pos_id = ${d.posId}, updated_at = ${at}, updated_by_event = ${by.id} where id = ${d.id}`;
    }
  }
}

/** Applies the acceptances of an append to the discrepancies they name (ids of other projections are left). */
export async function acceptSettlementDiscrepancies(
  tx: Tx,
  schema: string,
  append: readonly RecordedEvent[],
): Promise<void> {
  for (const e of append) {
    if (!isEvent(DiscrepancyAccepted, e)) continue;
    const d = dataOf(DiscrepancyAccepted, e);
    const at = new Date(d.acceptedAt);
    await tx`update ${tx(schema)}.discrepancies set status = 'accepted', accepted_at = ${at}, accepted_by = ${d.acceptedBy},
        accepted_note = ${d.note}, accepted_by_event = ${e.id}, updated_at = ${at}, updated_by_event = ${e.id}
      where id = ${d.discrepancyId} and status <> 'accepted'`;
  }
}
