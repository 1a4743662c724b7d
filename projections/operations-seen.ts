import { qualified } from '../src/db/identifier';
import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  WebhookReceived,
  WebhookResendRequested,
} from '../src/events/ingest-events';
import { type Cell, columnsOf, upsertRows } from '../src/projector/copy-rows';
import { handlerTable, on, onRecorded } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * The healing index (`recon heal`, docs/ingest.md "Healing"): one row per operation (pos, payment, method)
 * saying whether the register or the period data show it final, when, and whether a webhook arrived or a
 * re-send was asked. Heal asks the PSP to re-send the webhooks of the final operations that have neither.
 */

interface Row {
  pos_id: string;
  payment_id: string;
  method: string;
  order_id: string | null;
  transaction_id: string | null;
  recurring: boolean;
  final_status: string | null;
  final_at: string | null;
  in_register: boolean;
  in_period: boolean;
  webhook_at: string | null;
  resend_requested_at: string | null;
}

const COLUMNS = `pos_id text, payment_id text, method text, order_id text, transaction_id text, recurring boolean,
  final_status text, final_at timestamptz, in_register boolean, in_period boolean, webhook_at timestamptz,
  resend_requested_at timestamptz`;

const blank = (pos: string, payment: string, method: string): Row => ({
  pos_id: pos,
  payment_id: payment,
  method,
  order_id: null,
  transaction_id: null,
  recurring: false,
  final_status: null,
  final_at: null,
  in_register: false,
  in_period: false,
  webhook_at: null,
  resend_requested_at: null,
});

const least = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a < b ? a : b);
const isFinal = (status: string) => status === 'success' || status === 'failure';
const str = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;

/** When the PSP's data showed the event: the observation's own time, else when it was recorded. */
function observedAt(e: RecordedEvent): string {
  const m = e.metadata as { observedAt?: unknown; receivedAt?: unknown };
  return str(m.observedAt) ?? str(m.receivedAt) ?? e.recordedAt.toISOString();
}

/** A batch's rows by operation, each the merge of what the batch's events say about it. */
type Batch = Map<string, Row>;

function merge(a: Row, b: Row): Row {
  return {
    ...a,
    order_id: b.order_id ?? a.order_id,
    transaction_id: b.transaction_id ?? a.transaction_id,
    recurring: a.recurring || b.recurring,
    // The latest final observation wins (a status can change late).
    final_status: b.final_status ?? a.final_status,
    final_at: b.final_status ? b.final_at : a.final_at,
    in_register: a.in_register || b.in_register,
    in_period: a.in_period || b.in_period,
    webhook_at: least(a.webhook_at, b.webhook_at),
    resend_requested_at: least(a.resend_requested_at, b.resend_requested_at),
  };
}

function add(batch: Batch, row: Row): void {
  const k = `${row.pos_id}\u0000${row.payment_id}\u0000${row.method}`;
  const prior = batch.get(k);
  batch.set(k, prior ? merge(prior, row) : row);
}

type Data = Record<string, unknown>;
const obj = (v: unknown, what: string): Data => {
  if (v === null || typeof v !== 'object') throw new TypeError(`payment event without ${what}`);
  return v as Data;
};
const required = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new TypeError(`payment event without ${what}`);
  return v;
};
const nullable = (v: unknown, what: string): string | null => (v === null ? null : required(v, what));

/**
 * A register or period record's row. The observations are read field by field, not through their zod schema
 * (`on`): every event was validated against its definition when it was appended, the schemas have no defaults
 * or transforms (the values are the same), and parsing the whole record again was most of this projection's
 * cost in a rebuild (as `observationOf` found for the reconciliation).
 */
function observed(batch: Batch, source: 'register' | 'period', e: RecordedEvent): void {
  const d = obj(e.data, 'data');
  const r = obj(d.record, 'record');
  const status = required(r.status, 'status');
  const method = required(r.method, 'method');
  const other = obj(r.other, 'other');
  const row = blank(required(d.posId, 'posId'), required(r.paymentId, 'paymentId'), method);
  row.order_id = nullable(r.orderId, 'orderId');
  row.transaction_id = str(other['transactionId']) ?? str(other['transaction_id']);
  row.recurring = method === 'recurrent';
  if (isFinal(status)) {
    row.final_status = status;
    row.final_at = nullable(r.dateTime, 'dateTime') ?? observedAt(e);
  }
  if (source === 'register') row.in_register = true;
  else row.in_period = true;
  add(batch, row);
}

/** A webhook's row (and its `recurrent` twin), read field by field as `observed`. */
function webhookSeen(batch: Batch, e: RecordedEvent): void {
  const d = obj(e.data, 'data');
  const w = obj(d.webhook, 'webhook');
  const method = required(w.method, 'method');
  const row = blank(required(d.posId, 'posId'), required(w.paymentId, 'paymentId'), method);
  row.order_id = nullable(w.orderId, 'orderId');
  row.transaction_id = nullable(w.transactionId, 'transactionId');
  row.webhook_at = observedAt(e);
  row.recurring = required(w.kind, 'kind') === 'recurring';
  add(batch, row);
  // A subscription's charge shows in the register as method `recurrent`.
  if (row.recurring && method !== 'recurrent') add(batch, { ...row, method: 'recurrent' });
}

const table = handlerTable<Batch>(
  onRecorded(RegisterRecordObserved, (batch, e) => observed(batch, 'register', e)),
  onRecorded(PeriodRecordObserved, (batch, e) => observed(batch, 'period', e)),
  onRecorded(WebhookReceived, webhookSeen),
  on(WebhookResendRequested, (batch, d) => {
    if (d.outcome !== 'requested') return;
    const row = blank(d.posId, d.paymentId, d.operation);
    row.order_id = d.orderId;
    row.resend_requested_at = d.requestedAt;
    add(batch, row);
  }),
);

async function setup(tx: Tx, ctx: ProjectionContext) {
  const s = tx(ctx.schema);
  // DDL of several statements: the simple protocol (no parameters; the schema is an identifier)
  await tx`
    create table ${s}.operations (
      pos_id              text not null,
      payment_id          text not null,
      method              text not null,
      order_id            text,
      transaction_id      text,
      recurring           boolean not null default false,
      -- success/failure as the register or the period data last showed it (null: not final there)
      final_status        text,
      -- the operation's time (dateTime), or when it was observed when the PSP gave none
      final_at            timestamptz,
      in_register         boolean not null default false,
      in_period           boolean not null default false,
      webhook_at          timestamptz,
      resend_requested_at timestamptz,
      primary key (pos_id, payment_id, method)
    );
    create index on ${s}.operations (pos_id, final_at)
      where final_status is not null and webhook_at is null and resend_requested_at is null;`.simple();
}

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
  const batch: Batch = new Map();
  for (const e of events) table.evolve(batch, e);
  if (batch.size === 0) return;
  const columns = columnsOf(COLUMNS);
  const rows = [...batch.values()].map((r) => columns.map((c) => r[c.name as keyof Row] as Cell));
  await upsertRows(
    tx,
    `${qualified(ctx.schema, 'operations')} as t`,
    columns,
    rows,
    `on conflict (pos_id, payment_id, method) do update set
       order_id = coalesce(excluded.order_id, t.order_id),
       transaction_id = coalesce(excluded.transaction_id, t.transaction_id),
       recurring = t.recurring or excluded.recurring,
       final_status = coalesce(excluded.final_status, t.final_status),
       final_at = case when excluded.final_status is not null then excluded.final_at else t.final_at end,
       in_register = t.in_register or excluded.in_register,
       in_period = t.in_period or excluded.in_period,
       webhook_at = least(t.webhook_at, excluded.webhook_at),
       resend_requested_at = least(t.resend_requested_at, excluded.resend_requested_at)`,
  );
}

function views(ctx: ProjectionContext): readonly string[] {
  return [
    `create or replace view recon.operations_seen as
       select pos_id, payment_id, method, order_id, transaction_id, recurring, final_status, final_at, in_register,
              in_period, webhook_at, resend_requested_at
       from ${qualified(ctx.schema, 'operations')}`,
  ];
}

export const projection: Projection = {
  name: 'operations_seen',
  version: 1,
  handles: table.canHandle,
  setup,
  apply,
  views,
};
