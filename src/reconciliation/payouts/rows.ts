import { DateTime } from 'luxon';
import { eventIdFor } from '../../events/ids';
import type { PayoutDiscrepancyDraft } from './judge';

/**
 * A payout discrepancy as a row of recon.payout_discrepancies: the columns of recon.discrepancies, so that
 * every reader of discrepancies (allDiscrepancies) lists it beside the reconciliation's. Its id is a function
 * of its type and key (the statement reference, or the bank line), so an auditor's acceptance keeps to it.
 */

export interface Acceptance {
  readonly acceptedBy: string;
  readonly note: string;
  readonly acceptedAt: string;
  readonly eventId: string;
}

export const payoutDiscrepancyId = (type: string, key: string) => eventIdFor('payout-discrepancy', { type, key });

/** Start of a local day in the zone, as an ISO instant. */
const dayStart = (day: string, zone: string) => DateTime.fromISO(day, { zone }).startOf('day').toUTC().toISO()!;

export function discrepancyRow(
  d: PayoutDiscrepancyDraft,
  zone: string,
  accepted: ReadonlyMap<string, Acceptance>,
): Record<string, unknown> {
  const id = payoutDiscrepancyId(d.type, d.key);
  const acc = accepted.get(id);
  const occurredAt = dayStart(d.occurredOn, zone);
  // missing: found late the day after the due day; a bank line's discrepancy: on its booking day
  const detectedAt =
    d.type === 'payout_missing'
      ? DateTime.fromISO(d.occurredOn, { zone }).plus({ days: 1 }).startOf('day').toUTC().toISO()!
      : occurredAt;
  const detectedBy = d.evidence[0]!;
  const resolvedAt = d.resolvedOn ? dayStart(d.resolvedOn, zone) : null;
  const resolvedBy = d.resolvedOn ? (d.evidence[d.evidence.length - 1] ?? null) : null;
  const status = acc ? 'accepted' : d.status;
  const p = d.payout;
  return {
    id,
    type: d.type,
    status,
    pos_id: d.line ? d.line.accountId : '',
    payment_id: null,
    order_id: null,
    method: null,
    operation_key: d.key,
    receiver_name: p ? p.payeeName : (d.line?.counterpartyName ?? null),
    sub_merchant_id: p ? p.subMerchantId : null,
    sub_merchant_ids: p ? [p.subMerchantId] : [],
    currency: p ? p.currency : (d.line?.currency ?? null),
    occurred_at: occurredAt,
    values: d.values,
    evidence: d.evidence,
    detected_at: detectedAt,
    detected_by_event: detectedBy,
    resolved_at: resolvedAt,
    resolved_by_event: resolvedBy,
    accepted_at: acc?.acceptedAt ?? null,
    accepted_by: acc?.acceptedBy ?? null,
    accepted_note: acc?.note ?? null,
    accepted_by_event: acc?.eventId ?? null,
    updated_at: acc?.acceptedAt ?? resolvedAt ?? detectedAt,
    updated_by_event: acc?.eventId ?? resolvedBy ?? detectedBy,
  };
}
