import { DiscrepancyAccepted } from '../../events/audit-events';
import { dataOf, isEvent } from '../../events/catalog';
import { localMidnight } from '../../journal-rules';
import type { Tx } from '../../projector/projection';
import type { RecordedEvent } from '../../store/types';
import { discrepancyId } from '../discrepancies/id';
import { applyFindings, type Finding, newLifecycle, recordAcceptance } from '../discrepancies/lifecycle';
import type { DiscrepancyTypeOf } from '../discrepancies/registry';
import { readDiscrepancies, writeDiscrepancies } from '../discrepancies/table';
import type { SettlementJudgement } from './match';
import { deadlineOf, type MatchRules } from './match';

/**
 * The cash leg's discrepancies: a judgement gives the findings that hold now for one currency, and the core's
 * lifecycle (src/reconciliation/discrepancies/lifecycle.ts) opens the new ones, resolves the ones that no
 * longer hold and reopens one that holds again. The leg's clock is the time the append that made the change
 * was recorded (its last event), as its rows were first stamped. An accepted one (DiscrepancyAccepted) keeps
 * its status and the values it was accepted with, as in every leg.
 */

/** A finding of the cash leg (no payment, no receiver; the settlement leg's types, from the registry). */
export type SettlementDiscrepancy = Finding<DiscrepancyTypeOf<'settlement'>>;

/** The columns every finding of the cash leg leaves empty. */
const NO_PAYMENT = {
  paymentId: null,
  orderId: null,
  method: null,
  receiverName: null,
  subMerchantIds: [],
} as const;

export function discrepanciesOf(
  currency: string,
  j: SettlementJudgement,
  rules: Pick<MatchRules, 'lateBusinessDays' | 'holidays'>,
  timezone: string,
): SettlementDiscrepancy[] {
  const at = (day: string) => localMidnight(day, timezone).toISOString();
  const out: SettlementDiscrepancy[] = [];
  for (const d of j.missing)
    out.push({
      id: discrepancyId('settlement_missing', `${currency}|${d.day}`),
      ...NO_PAYMENT,
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
        id: discrepancyId('settlement_short', c.id),
        ...NO_PAYMENT,
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
        id: discrepancyId('settlement_late', `${currency}|${l.day}`),
        ...NO_PAYMENT,
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
      id: discrepancyId('settlement_unexpected', c.id),
      ...NO_PAYMENT,
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

/** Brings the discrepancies of one currency to `now`, as of `by` (the last event of the append). */
export async function syncDiscrepancies(
  tx: Tx,
  schema: string,
  currency: string,
  now: readonly SettlementDiscrepancy[],
  by: RecordedEvent,
): Promise<void> {
  const rows = await readDiscrepancies(tx, schema, 'currency', [currency]);
  const lc = newLifecycle();
  applyFindings(lc, new Map(rows.map((r) => [r.id, r])), now, { now: by.recordedAt.toISOString(), eventId: by.id });
  await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()]);
}

/** Applies the acceptances of an append to the discrepancies they name (ids of other legs are left). */
export async function acceptSettlementDiscrepancies(
  tx: Tx,
  schema: string,
  append: readonly RecordedEvent[],
): Promise<void> {
  for (const e of append) {
    if (!isEvent(DiscrepancyAccepted, e)) continue;
    const d = dataOf(DiscrepancyAccepted, e);
    const [row] = await readDiscrepancies(tx, schema, 'id', [d.discrepancyId]);
    const lc = newLifecycle();
    recordAcceptance(lc, row, { ...d, eventId: e.id });
    await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()]);
  }
}
