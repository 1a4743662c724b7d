import type { Sql } from '../db/connect';
import { dataOf, isEvent } from '../events/catalog';
import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  WebhookReceived,
  WebhookResendRequested,
} from '../events/ingest-events';
import type { Logger } from '../log';
import {
  comparePositions,
  formatPosition,
  parsePosition,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../store/types';

/**
 * Keeps `ingest_operations_seen` (migration 0100) up to date from the event log: one row per
 * operation (pos, payment, method) saying whether the register or period data show it final, when,
 * and whether a webhook or a re-send request exists. A checkpoint makes each catch-up read only the
 * new events; the table is a pure function of the log, independent of the projections.
 */

const CHECKPOINT = 'ingest_operations_seen';
// Fixed advisory lock key: one catch-up writer at a time.
const LOCK = 7_315_220_100n;

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

function observedAt(e: RecordedEvent): string {
  const m = e.metadata as { observedAt?: unknown; receivedAt?: unknown };
  return str(m.observedAt) ?? str(m.receivedAt) ?? e.recordedAt.toISOString();
}

/** What one event says about operations (zero, one or two rows). */
export function rowsOf(e: RecordedEvent): Row[] {
  if (isEvent(RegisterRecordObserved, e) || isEvent(PeriodRecordObserved, e)) {
    const register = e.type === RegisterRecordObserved.type;
    const d = register ? dataOf(RegisterRecordObserved, e) : dataOf(PeriodRecordObserved, e);
    const r = d.record;
    const row = blank(d.posId, r.paymentId, r.method);
    row.order_id = r.orderId;
    row.transaction_id = str(r.other['transactionId']) ?? str(r.other['transaction_id']);
    row.recurring = r.method === 'recurrent';
    if (isFinal(r.status)) {
      row.final_status = r.status;
      row.final_at = r.dateTime ?? observedAt(e);
    }
    if (register) row.in_register = true;
    else row.in_period = true;
    return [row];
  }
  if (isEvent(WebhookReceived, e)) {
    const d = dataOf(WebhookReceived, e);
    const w = d.webhook;
    const at = observedAt(e);
    const row = blank(d.posId, w.paymentId, w.method);
    row.order_id = w.orderId;
    row.transaction_id = w.transactionId;
    row.webhook_at = at;
    if (w.kind !== 'recurring') return [row];
    // A subscription's charge shows in the register as method `recurrent`.
    row.recurring = true;
    const charge = { ...row, method: 'recurrent' };
    return w.method === 'recurrent' ? [row] : [row, charge];
  }
  if (isEvent(WebhookResendRequested, e)) {
    const d = dataOf(WebhookResendRequested, e);
    if (d.outcome !== 'requested') return [];
    const row = blank(d.posId, d.paymentId, d.operation);
    row.order_id = d.orderId;
    row.resend_requested_at = d.requestedAt;
    return [row];
  }
  return [];
}

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

async function readCheckpoint(sql: Sql): Promise<Position | undefined> {
  const [row] = await sql<{ position: string }[]>`select position from ingest_checkpoints where name = ${CHECKPOINT}`;
  return row ? parsePosition(row.position) : undefined;
}

/**
 * A checkpoint must be a place in this store's log: below its head, holding the event read last. One past
 * the head was taken from another store (the event store replaced, or restored from an older backup); one
 * whose position holds another event, or none, from a store since restored and appended to again. Reading
 * on from either would skip every event stored below it. The table is a pure function of the log, so it is
 * emptied and read again from the start. A checkpoint without an event id (made before migration 0800)
 * gets the one at its position.
 */
async function resetWhenNotOnStore(sql: Sql, store: EventStore, log: Logger | undefined): Promise<void> {
  const head = await store.headPosition();
  const [row] = await sql<{ position: string; event_id: string | null }[]>`
    select position, event_id::text from ingest_checkpoints where name = ${CHECKPOINT}`;
  if (!row) return;
  const at = parsePosition(row.position);
  let reason: string;
  if (head && comparePositions(at, head) <= 0) {
    const found = (await store.readAt(at))?.id.toLowerCase() ?? null;
    const read = row.event_id?.toLowerCase() ?? null;
    if (read === null && found !== null) {
      await sql`update ingest_checkpoints set event_id = ${found}::uuid where name = ${CHECKPOINT} and position = ${row.position} and event_id is null`;
      return;
    }
    // no event at the checkpoint (whatever was recorded) means another store
    if (found !== null && found === read) return;
    reason = `the event at the checkpoint is ${found ?? 'missing'}, not ${read ?? '(not recorded)'} (store restored and appended to since, or replaced)`;
  } else {
    reason = "checkpoint past the event store's head (store restored or replaced)";
  }
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK})`;
    await tx`delete from ingest_operations_seen`;
    await tx`delete from ingest_checkpoints where name = ${CHECKPOINT}`;
  });
  log?.warn(`operations seen: ${reason}; read again from the start`, {
    checkpoint: row.position,
    head: head ? formatPosition(head) : null,
  });
}

/** Reads the events after the checkpoint into the table. Returns the number of events read. */
export async function catchUpOperationsSeen(
  sql: Sql,
  store: EventStore,
  opts: { batchSize?: number; signal?: AbortSignal; log?: Logger } = {},
): Promise<number> {
  await resetWhenNotOnStore(sql, store, opts.log);
  let total = 0;
  for (;;) {
    opts.signal?.throwIfAborted();
    const from = await readCheckpoint(sql);
    const events = await store.readAll(from, { maxCount: opts.batchSize ?? 5000 });
    if (events.length === 0) return total;
    const rows = new Map<string, Row>();
    for (const e of events) {
      for (const r of rowsOf(e)) {
        const k = `${r.pos_id}\u0000${r.payment_id}\u0000${r.method}`;
        const prior = rows.get(k);
        rows.set(k, prior ? merge(prior, r) : r);
      }
    }
    const lastEvent = events[events.length - 1]!;
    const last = formatPosition(lastEvent.position);
    const moved = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOCK})`;
      const [cp] = await tx<{ position: string }[]>`select position from ingest_checkpoints where name = ${CHECKPOINT}`;
      // Another process moved the checkpoint meanwhile: read again from where it is now.
      if ((cp?.position ?? null) !== (from ? formatPosition(from) : null)) return false;
      const list = [...rows.values()];
      if (list.length) {
        const col = <K extends keyof Row>(k: K) => list.map((r) => r[k]);
        // Booleans travel as text: the driver has no boolean[] parameter type.
        const flag = (k: 'recurring' | 'in_register' | 'in_period') => list.map((r) => (r[k] ? 'true' : 'false'));
        await tx`
          insert into ingest_operations_seen as t (pos_id, payment_id, method, order_id, transaction_id, recurring, final_status,
            final_at, in_register, in_period, webhook_at, resend_requested_at)
          select * from unnest(${col('pos_id') as string[]}::text[], ${col('payment_id') as string[]}::text[], ${col('method') as string[]}::text[],
            ${col('order_id') as string[]}::text[], ${col('transaction_id') as string[]}::text[], ${flag('recurring')}::text[]::bool[],
            ${col('final_status') as string[]}::text[], ${col('final_at') as string[]}::timestamptz[], ${flag('in_register')}::text[]::bool[],
            ${flag('in_period')}::text[]::bool[], ${col('webhook_at') as string[]}::timestamptz[], ${col('resend_requested_at') as string[]}::timestamptz[])
          on conflict (pos_id, payment_id, method) do update set
            order_id = coalesce(excluded.order_id, t.order_id),
            transaction_id = coalesce(excluded.transaction_id, t.transaction_id),
            recurring = t.recurring or excluded.recurring,
            final_status = coalesce(excluded.final_status, t.final_status),
            final_at = case when excluded.final_status is not null then excluded.final_at else t.final_at end,
            in_register = t.in_register or excluded.in_register,
            in_period = t.in_period or excluded.in_period,
            webhook_at = least(t.webhook_at, excluded.webhook_at),
            resend_requested_at = least(t.resend_requested_at, excluded.resend_requested_at)`;
      }
      await tx`insert into ingest_checkpoints (name, position, event_id) values (${CHECKPOINT}, ${last}, ${lastEvent.id}::uuid)
               on conflict (name) do update set position = excluded.position, event_id = excluded.event_id, updated_at = now()`;
      return true;
    });
    if (moved) total += events.length;
  }
}
