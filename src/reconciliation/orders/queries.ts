import type { Sql } from '../../db/connect';

/**
 * The orders projection's views read for people: `recon explain ORDER_ID` and the auditor API's
 * GET /api/orders/:orderId. Amounts as decimal strings of minor units, times ISO-8601.
 */

export interface OrderDetail {
  readonly order: Record<string, unknown>;
  readonly payments: readonly Record<string, unknown>[];
  readonly discrepancies: readonly Record<string, unknown>[];
}

const plain = (r: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(r).map(([k, v]) => [
      k,
      typeof v === 'bigint' ? v.toString() : v instanceof Date ? v.toISOString() : v,
    ]),
  );

/** The order as it stands with the PSP payments carrying its id and its discrepancies; null when unknown. */
export async function orderDetail(sql: Sql, orderId: string): Promise<OrderDetail | null> {
  const [built] =
    await sql`select 1 from information_schema.views where table_schema = 'recon' and table_name = 'orders'`;
  if (!built) return null;
  const [order] = await sql<Record<string, unknown>[]>`select * from recon.orders where order_id = ${orderId}`;
  if (!order) return null;
  // text by code unit, whatever the server's collation: an order lists alike on every server
  const payments = await sql<Record<string, unknown>[]>`
    select * from recon.order_payments where order_id = ${orderId}
    order by occurred_at nulls last, pos_id collate "C", payment_id collate "C"`;
  const discrepancies = await sql<Record<string, unknown>[]>`
    select * from recon.order_discrepancies where order_id = ${orderId} order by type collate "C", id`;
  return { order: plain(order), payments: payments.map(plain), discrepancies: discrepancies.map(plain) };
}

/** The order beside the PSP's payments, as lines of text. */
export function orderDetailText(d: OrderDetail): string[] {
  const o = d.order;
  const split = (o.split as { sub_merchant_id: string; amount: string }[])
    .map((p) => `${p.sub_merchant_id}=${p.amount}`)
    .join(' ');
  const out = [
    `order ${o.order_id}: ${o.status}, ${o.state}; ${o.amount ?? '-'} ${o.currency ?? ''} created ${o.created_at ?? '-'}; split ${split || '(none)'}; ${o.versions} version(s)`,
    `  PSP: ${o.matched_payment_id ? `payment ${o.matched_payment_id} (pos ${o.matched_pos_id}) ${o.psp_status} ${o.psp_amount} ${o.psp_currency}` : 'no payment claims it'}`,
  ];
  for (const p of d.payments)
    out.push(
      `  payment ${p.payment_id} (pos ${p.pos_id}): ${p.role}, ${p.method ?? '-'} ${p.status ?? '-'} ${p.amount ?? '-'} ${p.currency ?? ''} at ${p.occurred_at ?? '-'}`,
    );
  for (const x of d.discrepancies) out.push(`  ${x.id} ${x.type} ${x.status} ${JSON.stringify(x.values)}`);
  return out;
}
