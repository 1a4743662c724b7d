import { ident } from '../db/identifier';
import type { Cell } from '../projector/copy-rows';
import type { Tx } from '../projector/projection';
import { createDiscrepancyTable, discrepancyView } from './discrepancies/table';
import type { MatchedOperation, SourceItem } from './matching';

/**
 * The reconciliation's tables in a build schema: the published ones (operations, operation_receivers,
 * discrepancies, sync_windows, seen by readers through the recon.* views) and the state the projection keeps
 * between batches (the clock, each payment's observations, re-sends, the directory, due times, report waits,
 * acceptances waiting for their discrepancy).
 */

export const OPERATION_COLUMNS = `operation_key text, pos_id text, payment_id text, order_id text, method text, ordinal int, occurred_at timestamptz, currency text,
  register_present boolean, register_status text, register_amount int8, register_gross_amount int8, register_currency text,
  register_customer_fee int8, register_merchant_fee int8, register_date_time timestamptz, register_event_ids text[],
  period_present boolean, period_status text, period_amount int8, period_currency text, period_customer_fee int8,
  period_merchant_fee int8, period_date_time timestamptz, period_event_ids text[],
  webhook_present boolean, webhook_status text, webhook_amount int8, webhook_currency text, webhook_fee int8,
  webhook_date_time timestamptz, webhook_event_ids text[]`;

export const RECEIVER_COLUMNS = `operation_key text, pos_id text, payment_id text, method text, receiver_name text, sub_merchant_id text,
  status text, currency text, receiver_amount int8, receiver_fee int8, reserve_amount int8, share int8, event_ids text[]`;

/** The column names of a column list (`name type, …`), for a view's select list. */
export const columnNames = (cols: string) =>
  cols
    .split(',')
    .map((c) => c.trim().split(/\s+/)[0]!)
    .join(', ');

export async function createTables(tx: Tx, schema: string): Promise<void> {
  const s = ident(schema);
  // .unsafe: static DDL, several statements in one (the simple protocol); only the schema name is spliced, quoted
  await tx.unsafe(`
    create table ${s}.state (id int primary key, clock timestamptz);
    insert into ${s}.state values (1, null);
    -- one row per payment: its observations, a JSON array of observationToRow (compact; read and written whole)
    create table ${s}.observations (pos_id text not null, payment_id text not null, obs text not null, primary key (pos_id, payment_id));
    create table ${s}.resends (event_id uuid primary key, pos_id text not null, payment_id text not null, method text not null,
      requested_at timestamptz not null, outcome text not null);
    create index on ${s}.resends (pos_id, payment_id);
    create table ${s}.sync_windows (event_id uuid primary key, pos_id text not null, window_from timestamptz not null,
      window_to timestamptz not null, completed_at timestamptz not null, report_id text not null);
    create table ${s}.directory (sub_merchant_id text primary key, name text not null, event_id uuid not null);
    -- the id that last held a name no id holds now: a renamed sub-merchant keeps its rows under its former name
    create table ${s}.former_names (name text primary key, sub_merchant_id text not null, event_id uuid not null);
    create table ${s}.due (pos_id text not null, payment_id text not null, due_at timestamptz not null, primary key (pos_id, payment_id));
    create index on ${s}.due (due_at);
    -- operations judged while a report of their rows was still arriving (split_mismatch, missing_in_*): judged again when it completes
    create table ${s}.report_pending (pos_id text not null, payment_id text not null, operation_key text not null, report_id text not null,
      date_time timestamptz);
    create index on ${s}.report_pending (pos_id, payment_id);
    create index on ${s}.report_pending (pos_id, report_id);
    create index on ${s}.report_pending (pos_id, date_time);
    create table ${s}.pending_acceptances (discrepancy_id uuid primary key, accepted_by text not null, note text not null,
      accepted_at timestamptz not null, event_id uuid not null);
    -- keys and indexes only readers use are made when the build goes live (readerIndexes)
    create table ${s}.operations (${OPERATION_COLUMNS});
    create index on ${s}.operations (pos_id, payment_id);
    create index on ${s}.operations (pos_id, occurred_at);
    create table ${s}.operation_receivers (${RECEIVER_COLUMNS});
    create index on ${s}.operation_receivers (receiver_name);
    create index on ${s}.operation_receivers (pos_id, payment_id);
  `);
  await createDiscrepancyTable(tx, schema, {
    indexes: ['(pos_id, payment_id)', '(pos_id) where payment_id is null'],
  });
}

/**
 * Keys and indexes the projection itself never reads by, made in the transaction that puts a build live:
 * while a build catches up they would only cost writes (a duplicate key then keeps the build from going live).
 */
function readerIndexes(s: string): string[] {
  return [
    `create unique index if not exists operations_pkey on ${s}.operations (operation_key)`,
    `create index if not exists operations_order_id_idx on ${s}.operations (order_id)`,
    `create unique index if not exists operation_receivers_pkey on ${s}.operation_receivers (operation_key, receiver_name)`,
    `create index if not exists discrepancies_type_status_idx on ${s}.discrepancies (type, status)`,
    `create index if not exists discrepancies_occurred_at_idx on ${s}.discrepancies (occurred_at)`,
  ];
}

/** The statements that publish a build: reader indexes, then the recon.* views. */
export function publishedViews(schema: string): string[] {
  const s = ident(schema);
  return [
    ...readerIndexes(s),
    `create or replace view recon.operations as select ${columnNames(OPERATION_COLUMNS)} from ${s}.operations`,
    `create or replace view recon.operation_receivers as select ${columnNames(RECEIVER_COLUMNS)} from ${s}.operation_receivers`,
    discrepancyView(schema, 'psp'),
    `create or replace view recon.sync_windows as select event_id, pos_id, window_from, window_to, completed_at, report_id from ${s}.sync_windows`,
  ];
}

const big = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v);

function sourceCells(it: SourceItem | null, kind: 'register' | 'period' | 'webhook'): Cell[] {
  const head: Cell[] = [it !== null, it?.status, big(it?.amount)];
  const tail: Cell[] = [it?.dateTime, it ? it.eventIds : []];
  if (kind === 'register')
    return [...head, big(it?.grossAmount), it?.currency, big(it?.customerFee), big(it?.merchantFee), ...tail];
  if (kind === 'period') return [...head, it?.currency, big(it?.customerFee), big(it?.merchantFee), ...tail];
  return [...head, it?.currency, big(it?.merchantFee), ...tail];
}

export function operationCells(op: MatchedOperation): Cell[] {
  return [
    op.key,
    op.posId,
    op.paymentId,
    op.orderId,
    op.method,
    op.ordinal,
    op.occurredAt,
    op.register?.currency ?? op.period?.currency ?? op.webhook?.currency ?? null,
    ...sourceCells(op.register, 'register'),
    ...sourceCells(op.period, 'period'),
    ...sourceCells(op.webhook, 'webhook'),
  ];
}

export function receiverCells(op: MatchedOperation, subMerchantOf: (name: string) => string | undefined): Cell[][] {
  return (op.register?.receivers ?? []).map((r) => [
    op.key,
    op.posId,
    op.paymentId,
    op.method,
    r.receiverName,
    subMerchantOf(r.receiverName) ?? null,
    r.row.current.status,
    r.row.current.currency,
    r.receiverAmount,
    r.receiverFee,
    r.reserveAmount,
    r.share,
    r.row.versions.map((v) => v.eventId),
  ]);
}
