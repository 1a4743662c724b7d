import type { Sql } from '../../db/connect';
import { allDiscrepancies } from '../../reconciliation/discrepancy-queries';
import { type HeldItem, QUARANTINE_ID, reasonOf, UNREGISTERED_REASON } from './holds';
import { quarantinedPaymentsOf } from './quarantine-holds';

/**
 * Held items as a run recorded them (StatementIssued.payouts[].holds), with their reasons read again: a
 * statement issued again at the same cut holds what it held then, whatever was decided since.
 */
export async function recordedHeld(
  sql: Sql,
  holds: ReadonlyArray<readonly [string, string]>,
  receiverName: string,
  currency: string,
): Promise<HeldItem[]> {
  const ids = holds.map(([id]) => id).filter((id) => UUID.test(id));
  // every view of discrepancies: an order's or a payout's holds money too
  const found = ids.length
    ? await sql<
        { id: string; type: string; order_id: string | null; payment_id: string | null; occurred_at: Date | null }[]
      >`
        select id::text, type, order_id, payment_id, occurred_at
        from ${sql.unsafe(await allDiscrepancies(sql))} where id = any(${ids}::uuid[])`
    : [];
  const quarantined = await quarantinedPaymentsOf(
    sql,
    holds
      .map(([id]) => id.slice(QUARANTINE_ID.length))
      .filter((id, i) => holds[i]?.[0].startsWith(QUARANTINE_ID) && UUID.test(id)),
  );
  // by id: a 1M month's statement holds tens of thousands of items, and a search each would be quadratic
  const quarantinedById = new Map(quarantined.map((p) => [`${QUARANTINE_ID}${p.eventId}`, p]));
  const foundById = new Map(found.map((t) => [t.id, t]));
  return holds.map(([id, amount]) => {
    const q = quarantinedById.get(id);
    if (q) {
      return {
        discrepancyId: id,
        reason: reasonOf('quarantined_event'),
        receiverName,
        currency,
        amount: BigInt(amount),
        type: 'quarantined_event',
        orderId: null,
        paymentId: q.paymentId,
        occurredAt: null,
      };
    }
    const d = foundById.get(id);
    return {
      discrepancyId: id,
      reason: id === '' ? UNREGISTERED_REASON : reasonOf(d?.type ?? ''),
      receiverName,
      currency,
      amount: BigInt(amount),
      type: d?.type ?? '',
      orderId: d?.order_id ?? null,
      paymentId: d?.payment_id ?? null,
      occurredAt: d?.occurred_at ?? null,
    };
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
