import { rebuildProjection } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import type { Sql } from '../../src/db/connect';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { orderInput } from '../../src/ingest/orders/input';
import { FeeScheduleLineSet, feeContractStream, type FeeScheduleLine } from '../../src/events/order-events';
import { newEvent } from '../../src/events/catalog';
import { projection } from '../../projections/orders';
import { groupChunk } from '../../src/reconciliation/orders/chunks';
import { catchUp } from '../support/projection-spec';
import { registerRows } from '../discrepancies/fixtures';

/** Test helpers of the orders projection (issue 17), beside test/discrepancies/fixtures.ts for the PSP side. */

export const GRACE = 48;

export function deps(sql: Sql, store: EventStore) {
  return { sql, store, log: silentLogger, timezone: 'UTC', graceHours: GRACE, projections: [projection] };
}

export async function projectOrders(sql: Sql, store: EventStore, batchSize = 1000) {
  return catchUp(deps(sql, store), { batchSize });
}

export async function rebuildOrders(sql: Sql, store: EventStore, batchSize: number) {
  await rebuildProjection(deps(sql, store), 'orders', { batchSize });
  await projectOrders(sql, store, batchSize);
}

/** A rebuild whose contract and directory events judge the paid orders, and whose batches the orders come due in, `chunk` at a time (chunks.ts). */
export async function rebuildOrdersInChunks(sql: Sql, store: EventStore, batchSize: number, chunk: number) {
  try {
    groupChunk.size = chunk;
    await rebuildOrders(sql, store, batchSize);
  } finally {
    groupChunk.size = 1000;
  }
}

/** An order record as a file or the API gives it, to its append request (throws on bad input). */
export function order(record: Record<string, unknown>): AppendRequest {
  const r = orderInput(record);
  if (!r.ok) throw new Error(`${r.field}: ${r.message}`);
  return { stream: r.item.stream, events: [r.item.event] };
}

export function feeLine(line: FeeScheduleLine): AppendRequest {
  return { stream: feeContractStream(line.subMerchantId), events: [newEvent(FeeScheduleLineSet, line)] };
}

export async function orderDiscrepancies(sql: Sql) {
  return sql<
    {
      id: string;
      type: string;
      status: string;
      order_id: string | null;
      payment_id: string | null;
      sub_merchant_id: string | null;
      values: Record<string, unknown>;
      detected_by_event: string;
      resolved_by_event: string | null;
    }[]
  >`
    select * from recon.order_discrepancies order by type, order_id, payment_id, id`;
}

/** Every row of the projection's views, as text: replay equals live compares these. */
export async function snapshot(sql: Sql): Promise<string> {
  const parts: string[] = [];
  for (const v of ['orders', 'order_payments', 'order_discrepancies', 'fee_contract_versions']) {
    const rows = await sql.unsafe(`select * from recon.${v} order by 1, 2, 3`);
    parts.push(
      JSON.stringify(rows.map((r) => JSON.stringify(r, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))).sort()),
    );
  }
  return parts.join('\n');
}

/** A 20.00 UAH order of Beta Store (sm-b), created at `createdAt` (the orders come due: due-in-chunks tests). */
export const betaOrder = (orderId: string, createdAt: string) =>
  order({ order_id: orderId, amount: '20.00', currency: 'UAH', created_at: createdAt, split: 'sm-b:20.00' });

/** Beta Store's 20.00 UAH payment of `orderId` (fee 0.40), in a report of its own seen at `observedAt`. */
export const betaPayment = (paymentId: string, orderId: string, dateTime: string, observedAt: string): AppendRequest =>
  registerRows({
    paymentId,
    orderId,
    dateTime,
    amount: 20_00n,
    receivers: [{ name: 'Beta Store', amount: 19_60n, fee: 40n }],
    reportId: `r-${paymentId}`,
    observedAt,
  });
