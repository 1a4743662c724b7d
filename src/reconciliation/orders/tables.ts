import { ident, qualified } from '../../db/identifier';
import { copyRows, type Cell } from '../../projector/copy-rows';
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

/** The columns of the orders and order_payments tables, in the order viewRows gives their cells. */
const ORDER_NAMES = ['order_key', ...columnNames(ORDER_COLUMNS).split(', ')];
const PAYMENT_NAMES = ['order_key', ...columnNames(PAYMENT_COLUMNS).split(', ')];

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

/**
 * Rows into one of the build's tables with the bulk writer (COPY): each cell in the column's text input, as
 * `json_populate_recordset` read the same values from JSON before (bigint and numbers as their digits, text
 * arrays as array literals, jsonb as JSON text). `s`: the build schema, unquoted.
 */
function insertRows(tx: Tx, s: string, table: string, columns: readonly string[], rows: readonly (readonly Cell[])[]) {
  return copyRows(tx, qualified(s, table), columns, rows);
}

/** A jsonb cell: JSON text with bigints as strings (as the JSON parameter spelled them). */
const jsonCell = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

/** What a batch changed: the state, the directory, new contract lines, the groups judged and their discrepancies. */
export async function writeOrderBatch(tx: Tx, schema: string, b: OrderBatch): Promise<void> {
  const clock = b.clock === null ? null : new Date(b.clock);
  const ordersSince = b.ordersSince === null ? null : new Date(b.ordersSince);
  await tx`update ${tx(schema)}.state set clock = ${clock}, orders_since = ${ordersSince} where id = 1`;
  if (b.directoryDirty) {
    await tx`delete from ${tx(schema)}.directory`;
    await insertRows(tx, schema, 'directory', ['sub_merchant_id', 'name'], [...b.directory]);
  }
  await insertRows(
    tx,
    schema,
    'fee_versions',
    ['event_id', 'ord', 'sub_merchant_id', 'method', 'currency', 'effective_from', 'percent', 'fixed', 'rounding'],
    b.newFeeVersions.map((v) => [
      v.eventId,
      v.ord,
      v.subMerchantId,
      v.method,
      v.currency,
      v.effectiveFrom,
      v.percent,
      v.fixed,
      v.rounding,
    ]),
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
  // a group judged again with nothing added (come due, a directory or contract change) keeps its stored state
  const grown = dirty.filter((g) => g.grown || !g.stored);
  const grownKeys = grown.map((g) => g.key);
  if (grownKeys.length) await tx`delete from ${tx(s)}.groups where order_key = any(${grownKeys}::text[])`;
  const keys = dirty.map((g) => g.key);
  if (keys.length) {
    for (const t of ['due', 'orders', 'order_payments'])
      await tx`delete from ${tx(s)}.${tx(t)} where order_key = any(${keys}::text[])`;
  }
  await insertRows(tx, s, 'groups', ['order_key', 'versions', 'payments'], grown.map(groupRow));
  await insertRows(
    tx,
    s,
    'due',
    ['order_key', 'due_at'],
    dirty.filter((g) => g.due !== null).map((g) => [g.key, new Date(g.due!).toISOString()]),
  );
  const { orderRows, paymentRows } = viewRows(dirty);
  await insertRows(tx, s, 'orders', ORDER_NAMES, orderRows);
  await insertRows(tx, s, 'order_payments', PAYMENT_NAMES, paymentRows);
}

/**
 * A group's stored state: its versions, and its payments as [posId, paymentId, [observation rows]]. The
 * observation rows are already JSON text (`observationToRow`): spliced in as they are, the same text as
 * parsing and stringifying them again.
 */
function groupRow(g: JudgedGroup): Cell[] {
  const versions = JSON.stringify(
    g.versions.map((v) => [v.eventId, v.commit.toString(), v.prepare.toString(), v.kind, v.at, v.data]),
  );
  let payments = '';
  for (const obs of g.payments.values()) {
    const rows = obs.map(observationToRow).join(',');
    payments += `${payments ? ',' : ''}[${JSON.stringify(obs[0]!.posId)},${JSON.stringify(obs[0]!.paymentId)},[${rows}]]`;
  }
  return [g.key, versions, `[${payments}]`];
}

/** The rows of recon.orders and recon.order_payments of the groups judged in this batch (ORDER_COLUMNS' order). */
function viewRows(dirty: readonly JudgedGroup[]) {
  const orderRows: Cell[][] = [];
  const paymentRows: Cell[][] = [];
  for (const g of dirty) {
    const j = g.judgement;
    if (!j) continue;
    const orderId = j.order?.orderId ?? null;
    if (j.order) {
      const v = j.order.values;
      const claimed = j.matches.find((m) => m.role === 'claimed');
      orderRows.push([
        g.key,
        j.order.orderId,
        j.order.status,
        j.state,
        v?.amount ?? null,
        v?.currency ?? null,
        v?.createdAt ?? null,
        v?.customerReference ?? null,
        jsonCell(v ? v.split.map((p) => ({ sub_merchant_id: p.subMerchantId, amount: p.amount })) : []),
        j.order.versions.length,
        j.order.versions.at(-1)!.eventId,
        claimed?.posId ?? null,
        claimed?.paymentId ?? null,
        claimed?.amount ?? null,
        claimed?.currency ?? null,
        claimed?.status ?? null,
      ]);
    }
    for (const m of j.matches) {
      paymentRows.push([
        g.key,
        orderId ?? (g.key.startsWith('#payment:') ? null : g.key),
        m.posId,
        m.paymentId,
        m.role,
        m.method,
        m.status,
        m.amount,
        m.currency,
        m.occurredAt,
        m.eventIds,
      ]);
    }
  }
  return { orderRows, paymentRows };
}
