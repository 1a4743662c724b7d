import type { Sql } from '../../db/connect';
import { openAtSql, resolvedAsOfSql } from './open';
import { type NightlyCell, nightlyMoney, writeNightlyTable } from './table';
import { moneyFormat, type Workbook } from '../workbook/xlsx';

/**
 * The nightly report's sheets about the marketplace's intent (docs/orders.md): "Orders" (the orders of
 * the day by currency, how they matched, payments without an order, the money in doubt) and "Fee
 * differences" (the PSP's fees against the contract, summed per sub-merchant and month). Read from the
 * orders projection's views; absent (no sheets) when those are not built.
 */

export interface OrdersDayRow {
  readonly currency: string;
  readonly orders: number;
  readonly amount: bigint;
  readonly matched: number;
  readonly awaitingPsp: number;
  readonly notAtPsp: number;
  readonly cancelled: number;
  /** open payment_without_order of payments on the day */
  readonly paymentsWithoutOrder: number;
  /** open discrepancies of orders or payments of the day that put money in doubt: the amount concerned */
  readonly inDoubt: bigint;
}

export interface FeeDifferenceRow {
  readonly subMerchantId: string;
  readonly month: string;
  readonly currency: string;
  readonly above: number;
  readonly below: number;
  /** Σ (charged − expected), minor units */
  readonly difference: bigint;
}

export interface OrdersReportData {
  readonly day: readonly OrdersDayRow[];
  readonly fees: readonly FeeDifferenceRow[];
}

export async function ordersReportData(
  sql: Sql,
  opts: { from: Date; to: Date; timezone: string },
): Promise<OrdersReportData | undefined> {
  const [built] =
    await sql`select 1 from information_schema.views where table_schema = 'recon' and table_name = 'order_discrepancies'`;
  if (!built) return undefined;
  const day = await sql<
    {
      currency: string;
      orders: number;
      amount: bigint;
      matched: number;
      awaiting: number;
      not_at_psp: number;
      cancelled: number;
    }[]
  >`
    select currency, count(*)::int as orders, coalesce(sum(amount), 0)::int8 as amount,
      count(*) filter (where state = 'matched')::int as matched, count(*) filter (where state = 'awaiting_psp')::int as awaiting,
      count(*) filter (where state = 'not_at_psp')::int as not_at_psp, count(*) filter (where state = 'cancelled')::int as cancelled
    from recon.orders where created_at >= ${opts.from} and created_at < ${opts.to} and currency is not null
    group by currency order by currency`;
  // the amount concerned by each discrepancy of the day open at its end (its times, not its status now, as the
  // rest of the report): the PSP's amount, the order's, or the fee difference
  const doubt = await sql<{ currency: string; without_order: number; in_doubt: bigint }[]>`
    select currency, count(*) filter (where type = 'payment_without_order')::int as without_order,
      coalesce(sum(case
        when type in ('payment_without_order') then ("values"->>'psp_amount')::int8
        when type = 'amount_differs_from_order' then abs(coalesce(("values"->>'difference')::int8, ("values"->>'psp_amount')::int8))
        when type = 'split_differs_from_order' then (select coalesce(sum(abs((p->>'difference')::int8)), 0) from jsonb_array_elements("values"->'parts') p)
        when type in ('fee_above_contract', 'fee_below_contract') then abs(("values"->>'difference')::int8)
        else 0 end), 0)::int8 as in_doubt
    from recon.order_discrepancies
    where ${openAtSql(sql, opts.to)} and currency is not null and type <> 'order_not_at_psp'
      and occurred_at >= ${opts.from} and occurred_at < ${opts.to}
    group by currency`;
  const byCurrency = new Map(doubt.map((d) => [d.currency, d]));
  const currencies = [...new Set([...day.map((d) => d.currency), ...doubt.map((d) => d.currency)])].sort();
  // not resolved at the day's end (accepted ones stay): arisen by then, and found by then unless still standing
  const resolved = resolvedAsOfSql(sql, opts.to);
  const standingAt = sql`coalesce(occurred_at, detected_at) < ${opts.to}
    and ((${resolved}) is null or ((${resolved}) >= ${opts.to} and coalesce(detected_at, occurred_at) < ${opts.to}))`;
  const fees = await sql<
    { sub_merchant_id: string; month: string; currency: string; above: number; below: number; difference: bigint }[]
  >`
    -- by code unit, whatever the server's collation (a server given by DATABASE_URL usually has a locale's)
    select coalesce(sub_merchant_id, '(unknown receiver)') collate "C" as sub_merchant_id,
      to_char(occurred_at at time zone ${opts.timezone}, 'YYYY-MM') as month, currency collate "C" as currency,
      count(*) filter (where type = 'fee_above_contract')::int as above, count(*) filter (where type = 'fee_below_contract')::int as below,
      sum(("values"->>'difference')::int8)::int8 as difference
    from recon.order_discrepancies
    where type in ('fee_above_contract', 'fee_below_contract') and ${standingAt}
    group by 1, 2, 3 order by 1, 2, 3`;
  return {
    day: currencies.map((currency) => {
      const d = day.find((x) => x.currency === currency);
      const o = byCurrency.get(currency);
      return {
        currency,
        orders: d?.orders ?? 0,
        amount: d?.amount ?? 0n,
        matched: d?.matched ?? 0,
        awaitingPsp: d?.awaiting ?? 0,
        notAtPsp: d?.not_at_psp ?? 0,
        cancelled: d?.cancelled ?? 0,
        paymentsWithoutOrder: o?.without_order ?? 0,
        inDoubt: o?.in_doubt ?? 0n,
      };
    }),
    fees: fees.map((f) => ({
      subMerchantId: f.sub_merchant_id,
      month: f.month,
      currency: f.currency,
      above: f.above,
      below: f.below,
      difference: f.difference,
    })),
  };
}

export function writeOrdersSheets(
  wb: Workbook,
  data: OrdersReportData,
  documentName = 'Nightly reconciliation report',
): void {
  const money = (v: bigint, currency: string): NightlyCell => nightlyMoney(v, currency);
  writeNightlyTable(
    wb,
    documentName,
    'Orders',
    [
      { header: 'currency' },
      { header: 'orders of the day', kind: 'count' },
      { header: 'amount ordered', kind: 'money' },
      { header: 'matched', kind: 'count' },
      { header: 'awaiting the PSP', kind: 'count' },
      { header: 'not at the PSP', kind: 'count' },
      { header: 'cancelled', kind: 'count' },
      { header: 'payments without order', kind: 'count' },
      { header: 'amount in doubt', kind: 'money' },
    ],
    data.day.map((r) => [
      r.currency,
      r.orders,
      money(r.amount, r.currency),
      r.matched,
      r.awaitingPsp,
      r.notAtPsp,
      r.cancelled,
      r.paymentsWithoutOrder,
      money(r.inDoubt, r.currency),
    ]),
    { moneyFormat },
  );
  writeNightlyTable(
    wb,
    documentName,
    'Fee differences',
    [
      { header: 'sub_merchant_id' },
      { header: 'month' },
      { header: 'currency' },
      { header: 'above contract', kind: 'count' },
      { header: 'below contract', kind: 'count' },
      { header: 'charged − contract', kind: 'money' },
    ],
    data.fees.map((f) => [f.subMerchantId, f.month, f.currency, f.above, f.below, money(f.difference, f.currency)]),
    { moneyFormat },
  );
}
