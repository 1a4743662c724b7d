import { DateTime } from 'luxon';
import { discrepancyId } from '../discrepancies/id';
import type { Acceptance, DatedFinding } from '../discrepancies/lifecycle';
import type { PayoutDiscrepancyDraft } from './judge';

/**
 * A payout discrepancy as the core's finding: the payouts leg judges from all its inputs each time, so a
 * finding carries its own times (the core's `wholeRows` makes the rows of recon.payout_discrepancies). Its id
 * is a function of its type and key (the statement reference, or the bank line), so an auditor's acceptance
 * keeps to it.
 */

export type PayoutAcceptance = Omit<Acceptance, 'discrepancyId'>;

/** Start of a local day in the zone, as an ISO instant. */
const dayStart = (day: string, zone: string) => DateTime.fromISO(day, { zone }).startOf('day').toUTC().toISO()!;

/**
 * The leg's clock is the bank's days: a missing payout is found the day after its due day (by the statement
 * that asked for it), a bank line's discrepancy on its booking day (by the line), and a payout paid late is
 * resolved on the paying day (by the last line).
 */
export function payoutFinding(d: PayoutDiscrepancyDraft, zone: string): DatedFinding {
  const occurredAt = dayStart(d.occurredOn, zone);
  const detectedAt =
    d.type === 'payout_missing'
      ? DateTime.fromISO(d.occurredOn, { zone }).plus({ days: 1 }).startOf('day').toUTC().toISO()!
      : occurredAt;
  const p = d.payout;
  return {
    id: discrepancyId(d.type, d.key),
    type: d.type,
    // '' rather than null: a payout's discrepancy without a bank line has always read so
    posId: d.line ? d.line.accountId : '',
    paymentId: null,
    orderId: null,
    method: null,
    operationKey: d.key,
    receiverName: p ? p.payeeName : (d.line?.counterpartyName ?? null),
    subMerchantIds: p ? [p.subMerchantId] : [],
    currency: p ? p.currency : (d.line?.currency ?? null),
    occurredAt,
    values: d.values,
    evidence: d.evidence,
    detected: { now: detectedAt, eventId: d.evidence[0]! },
    resolved: d.resolvedOn ? { now: dayStart(d.resolvedOn, zone), eventId: d.evidence[d.evidence.length - 1]! } : null,
  };
}
