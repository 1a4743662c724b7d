import { ident } from '../../db/identifier';
import type { Tx } from '../../projector/projection';
import { observationToRow } from '../observations';
import { createDiscrepancyTable, discrepancyView, writeDiscrepancies } from '../discrepancies/table';
import { columnNames } from '../tables';
import type { OrderBatch } from './groups';
import type { JudgedGroup } from './judging';

/** The orders read model's tables, its published views, and the rows a batch writes back. */

const ORDER_COLUMNS = `order_id text, status text, state text, amount int8, currency text, created_at timestamptz,
  customer_reference text, split jsonb, versions int, last_version_event uuid, matched_pos_id text, matched_payment_id text,
  psp_amount int8, psp_currency text, psp_status text`;
const PAYMENT_COLUMNS = `order_id text, pos_id text, payment_id text, role text, method text, status text, amount int8,
  currency text, occurred_at timestamptz, event_ids text[]`;

export async function createOrderTables(tx: Tx, schema: string): Promise<void> {
  const s = ident(schema);
  // .unsafe: static DDL, several statements in one (the simple protocol); only the schema name is spliced, quoted
  await tx.unsafe(`
    create table ${s}.state (id int primary key, clock timestamptz, orders_since timestamptz);
    insert into ${s}.state values (1, null, null);
    -- one row per order id: its versions and the observations of its payments (JSON text, read and written whole)
    create table ${s}.groups (order_key text primary key, versions text not null, payments text not null);
    create table ${s}.due (order_key text primary key, due_at timestamptz not null);
    create index on ${s}.due (due_at);
    create table ${s}.directory (sub_merchant_id text primary key, name text not null);
    create table ${s}.fee_versions (event_id uuid primary key, ord int8 not null, sub_merchant_id text not null, method text not null,
      currency text not null, effective_from date not null, percent text not null, fixed int8 not null, rounding text not null);
    create table ${s}.orders (order_key text primary key, ${ORDER_COLUMNS});
    create table ${s}.order_payments (order_key text not null, ${PAYMENT_COLUMNS});
    create index on ${s}.order_payments (order_key);
    create index on ${s}.order_payments (payment_id);
  `);
  // each discrepancy is kept with the order (group) it belongs to, which a batch loads it by
  await createDiscrepancyTable(tx, schema, { leading: 'order_key text not null', indexes: ['(order_key)'] });
}

export function orderViews(schema: string): readonly string[] {
  const s = ident(schema);
  return [
    `create or replace view recon.orders as select ${columnNames(ORDER_COLUMNS)} from ${s}.orders`,
    `create or replace view recon.order_payments as select ${columnNames(PAYMENT_COLUMNS)} from ${s}.order_payments`,
    discrepancyView(schema, 'orders'),
    `create or replace view recon.fee_contract_versions as select event_id, sub_merchant_id, method, currency, effective_from,
      percent, fixed, rounding, ord as version_order from ${s}.fee_versions`,
  ];
}

/** `s`: the build schema, unquoted (named by `tx(s)`). */
async function insertJson(tx: Tx, s: string, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 5000) {
    const text = JSON.stringify(rows.slice(i, i + 5000), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    await tx`insert into ${tx(s)}.${tx(table)} select * from json_populate_recordset(null::${tx(s)}.${tx(table)}, ${text}::text::json)`;
  }
}

/** What a batch changed: the state, the directory, new contract lines, the groups judged and their discrepancies. */
export async function writeOrderBatch(tx: Tx, schema: string, b: OrderBatch): Promise<void> {
  const clock = b.clock === null ? null : new Date(b.clock);
  const ordersSince = b.ordersSince === null ? null : new Date(b.ordersSince);
  await tx`update ${tx(schema)}.state set clock = ${clock}, orders_since = ${ordersSince} where id = 1`;
  if (b.directoryDirty) {
    await tx`delete from ${tx(schema)}.directory`;
    await insertJson(
      tx,
      schema,
      'directory',
      [...b.directory].map(([sub_merchant_id, name]) => ({ sub_merchant_id, name })),
    );
  }
  await insertJson(
    tx,
    schema,
    'fee_versions',
    b.newFeeVersions.map((v) => ({
      event_id: v.eventId,
      ord: v.ord,
      sub_merchant_id: v.subMerchantId,
      method: v.method,
      currency: v.currency,
      effective_from: v.effectiveFrom,
      percent: v.percent,
      fixed: v.fixed,
      rounding: v.rounding,
    })),
  );
  const dirty = [...b.groups.values()].filter((g) => g.dirty);
  await writeGroups(tx, schema, dirty);
  const changed = [...b.lifecycle.changed.values()];
  if (changed.length) {
    const keyOf = new Map<string, string>();
    for (const g of b.groups.values()) for (const id of g.discs.keys()) keyOf.set(id, g.key);
    const leading = {
      definitions: 'order_key text',
      names: ['order_key'],
      cells: (r: { id: string }) => [keyOf.get(r.id)],
    };
    await writeDiscrepancies(tx, schema, changed, [...b.lifecycle.changed.keys()], leading);
  }
}

/** The groups judged in this batch: their stored state, when they are due, and their rows of the views. */
async function writeGroups(tx: Tx, s: string, dirty: readonly JudgedGroup[]): Promise<void> {
  const keys = dirty.map((g) => g.key);
  if (keys.length) {
    for (const t of ['groups', 'due', 'orders', 'order_payments'])
      await tx`delete from ${tx(s)}.${tx(t)} where order_key = any(${keys}::text[])`;
  }
  const groupRows = dirty.map((g) => ({
    order_key: g.key,
    versions: JSON.stringify(
      g.versions.map((v) => [v.eventId, v.commit.toString(), v.prepare.toString(), v.kind, v.at, v.data]),
    ),
    payments: JSON.stringify(
      [...g.payments.values()].map((obs) => [
        obs[0]!.posId,
        obs[0]!.paymentId,
        obs.map((o) => JSON.parse(observationToRow(o))),
      ]),
    ),
  }));
  await insertJson(tx, s, 'groups', groupRows);
  await insertJson(
    tx,
    s,
    'due',
    dirty.filter((g) => g.due !== null).map((g) => ({ order_key: g.key, due_at: new Date(g.due!).toISOString() })),
  );
  const { orderRows, paymentRows } = viewRows(dirty);
  await insertJson(tx, s, 'orders', orderRows);
  await insertJson(tx, s, 'order_payments', paymentRows);
}

/** The rows of recon.orders and recon.order_payments of the groups judged in this batch. */
function viewRows(dirty: readonly JudgedGroup[]) {
  const orderRows: Record<string, unknown>[] = [];
  const paymentRows: Record<string, unknown>[] = [];
  for (const g of dirty) {
    const j = g.judgement;
    if (!j) continue;
    const orderId = j.order?.orderId ?? null;
    if (j.order) {
      const v = j.order.values;
      const claimed = j.matches.find((m) => m.role === 'claimed');
      orderRows.push({
        order_key: g.key,
        order_id: j.order.orderId,
        status: j.order.status,
        state: j.state,
        amount: v?.amount ?? null,
        currency: v?.currency ?? null,
        created_at: v?.createdAt ?? null,
        customer_reference: v?.customerReference ?? null,
        split: v ? v.split.map((p) => ({ sub_merchant_id: p.subMerchantId, amount: p.amount })) : [],
        versions: j.order.versions.length,
        last_version_event: j.order.versions.at(-1)!.eventId,
        matched_pos_id: claimed?.posId ?? null,
        matched_payment_id: claimed?.paymentId ?? null,
        psp_amount: claimed?.amount ?? null,
        psp_currency: claimed?.currency ?? null,
        psp_status: claimed?.status ?? null,
      });
    }
    for (const m of j.matches) {
      paymentRows.push({
        order_key: g.key,
        order_id: orderId ?? (g.key.startsWith('#payment:') ? null : g.key),
        pos_id: m.posId,
        payment_id: m.paymentId,
        role: m.role,
        method: m.method,
        status: m.status,
        amount: m.amount,
        currency: m.currency,
        occurred_at: m.occurredAt,
        event_ids: m.eventIds,
      });
    }
  }
  return { orderRows, paymentRows };
}
