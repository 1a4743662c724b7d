import type { Sql } from '../db/connect';
import { isEvent } from '../events/catalog';
import { WebhookResendRequested, healStream, paymentStream, syncStream } from '../events/ingest-events';
import { comparePositions, formatPosition, type EventStore, type RecordedEvent } from '../store/types';
import { operationsOf, type DiscrepancyRecord, type OperationRecord } from './discrepancy-queries';
import { moneyText } from './discrepancy-summary';
import { eventTimeText } from './event-clock';
import { observationOf } from './observations';
import { orderStream } from '../events/order-events';
import { orderDetail, type OrderDetail } from './orders/queries';

/**
 * `recon explain ORDER_ID|PAYMENT_ID`: every event from every source about one payment (or every payment of
 * an order), in commit order, then the state the projections derived from them: operations, receivers,
 * discrepancies, and the rows of any other `recon.*` view that has a payment_id column (e.g. the journal).
 */

export interface ExplainedEvent {
  readonly position: string;
  readonly stream: string;
  readonly type: string;
  readonly id: string;
  /** observedAt / receivedAt / completedAt / requestedAt … */
  readonly at: string | null;
  readonly summary: string;
  readonly data: unknown;
  readonly metadata: unknown;
}

export interface Explanation {
  readonly query: string;
  readonly payments: ReadonlyArray<{ posId: string; paymentId: string }>;
  readonly events: readonly ExplainedEvent[];
  readonly operations: readonly OperationRecord[];
  readonly receivers: readonly OperationRecord[];
  readonly discrepancies: readonly DiscrepancyRecord[];
  /** other recon.* views with a payment_id column: view name → rows */
  readonly related: Readonly<Record<string, readonly Record<string, unknown>[]>>;
  /** the marketplace's order of that id, when there is one (docs/orders.md) */
  readonly order: OrderDetail | null;
}

/**
 * The operation time a payment event gives, read as matching reads it (`observationOf`: register/period
 * `dateTime`, webhook `processed_at`, else `created_at`), so that the sync windows listed are the ones the
 * discrepancies were judged on. Reading it here apart (webhook `processed_at` only) left out the window
 * that is the evidence of a webhook-only payment's missing_in_report when its webhook had only `created_at`.
 */
function operationTimeOf(e: RecordedEvent): number | null {
  let t: string | null;
  try {
    t = observationOf(e)?.dateTime ?? null;
  } catch {
    return null; // not a well-formed observation: matching could not have used it either
  }
  const ms = t === null ? Number.NaN : Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

/** A receiver row's share (its amount and fee), or what the row says when they are not whole minor units. */
function shareOf(r: Record<string, unknown>): string {
  const whole = (v: unknown) => (typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : v === undefined ? 0n : null);
  const amount = whole(r.receiverAmount);
  const fee = whole(r.receiverFee);
  if (amount === null || fee === null) return `${String(r.receiverAmount)}+${String(r.receiverFee)}`;
  return shownMoney(amount + fee, r.currency);
}

/** An event's amount (minor units as stored) as finance reads it: 3,281.91 UAH, never 328191 UAH. */
function shownMoney(minor: unknown, currency: unknown): string {
  const c = typeof currency === 'string' ? currency : null;
  if (typeof minor === 'bigint') return moneyText(minor, c);
  if (typeof minor === 'string' && /^-?\d+$/.test(minor)) return moneyText(BigInt(minor), c);
  return `${String(minor)}${c ? ` ${c}` : ''}`;
}

function summaryOf(e: RecordedEvent): string {
  const d = (e.data ?? {}) as Record<string, any>;
  const r = d.record ?? d.webhook;
  if (r) {
    const recv = r.receiverName ? ` receiver=${r.receiverName} share=${shareOf(r)}` : '';
    const amount = r.originalAmount ?? r.amount;
    // a re-observation (the row back to an earlier content) names the observation it supersedes
    const again = typeof d.supersedes === 'string' ? ` supersedes ${d.supersedes}` : '';
    return `${r.method} ${r.status} amount=${shownMoney(amount, r.currency)}${recv}${e.metadata.reportId ? ` report=${String(e.metadata.reportId)}` : ''}${again}`;
  }
  if (d.window)
    return `window ${d.window.from} → ${d.window.to}${d.reportId ? ` report=${d.reportId}` : ''}${d.announcedCount !== undefined ? ` announced=${d.announcedCount}` : ''}${d.receivedCount !== undefined ? ` received=${d.receivedCount}` : ''}`;
  if (isEvent(WebhookResendRequested, e)) return `re-send ${d.operation} ${d.outcome}`;
  if (d.discrepancyId) return `discrepancy ${d.discrepancyId} accepted by ${d.acceptedBy}: ${d.note}`;
  return '';
}

async function posIdsOf(
  sql: Sql,
  ref: string,
  configured: readonly string[],
): Promise<Array<{ posId: string; paymentId: string }>> {
  const found = new Map<string, { posId: string; paymentId: string }>();
  try {
    const rows = await sql<{ pos_id: string; payment_id: string }[]>`
      select distinct pos_id, payment_id from recon.operations where payment_id = ${ref} or order_id = ${ref}`;
    for (const r of rows) found.set(`${r.pos_id}/${r.payment_id}`, { posId: r.pos_id, paymentId: r.payment_id });
  } catch {
    // views not built yet: fall back to the configured projects
  }
  if (found.size === 0) for (const posId of configured) found.set(`${posId}/${ref}`, { posId, paymentId: ref });
  return [...found.values()];
}

/** The events gathered about one query, each once, in the order found (sorted by position at the end). */
interface Gathered {
  readonly events: RecordedEvent[];
  readonly add: (e: RecordedEvent) => void;
}

function gathered(): Gathered {
  const events: RecordedEvent[] = [];
  const seen = new Set<string>();
  return {
    events,
    add: (e) => {
      if (seen.has(e.id)) return;
      seen.add(e.id);
      events.push(e);
    },
  };
}

/**
 * The sync windows covering the payments' operations, and the healing requests about them: the times a
 * window must cover to be listed are every observation's, and every operation's `occurred_at` (the time a
 * missing_in_* is judged on, which is the first-seen time when no source gives one).
 */
async function addWindowsAndResends(
  store: EventStore,
  g: Gathered,
  existing: ReadonlyArray<{ posId: string; paymentId: string }>,
  operations: readonly OperationRecord[],
): Promise<void> {
  const times = g.events.map(operationTimeOf).filter((t): t is number => t !== null);
  for (const o of operations) if (o.occurred_at) times.push(Date.parse(String(o.occurred_at)));
  for (const posId of new Set(existing.map((p) => p.posId))) {
    for (const e of await store.readStream(syncStream(posId))) {
      const w = (e.data as { window?: { from: string; to: string } }).window;
      if (w && times.some((t) => Date.parse(w.from) <= t && t < Date.parse(w.to))) g.add(e);
    }
    for (const e of await store.readStream(healStream(posId))) {
      if (existing.some((p) => (e.data as { paymentId?: string }).paymentId === p.paymentId)) g.add(e);
    }
  }
}

/** The rows of the other recon.* views with a payment_id column (the journal's, …), values as JSON text. */
async function relatedRows(sql: Sql, ids: readonly string[]): Promise<Record<string, Record<string, unknown>[]>> {
  const related: Record<string, Record<string, unknown>[]> = {};
  if (!ids.length) return related;
  const views = await sql<{ table_name: string }[]>`
    select c.table_name from information_schema.columns c join information_schema.views v using (table_schema, table_name)
    where c.table_schema = 'recon' and c.column_name = 'payment_id'
      and c.table_name not in ('operations', 'operation_receivers', 'discrepancies')
    order by c.table_name`;
  for (const v of views) {
    const rows = await sql<Record<string, unknown>[]>`
      select * from ${sql('recon')}.${sql(v.table_name)} where payment_id = any(${ids as string[]}::text[])`;
    if (rows.length)
      related[v.table_name] = rows.map((r) =>
        Object.fromEntries(
          Object.entries(r).map(([k, x]) => [
            k,
            typeof x === 'bigint' ? x.toString() : x instanceof Date ? x.toISOString() : x,
          ]),
        ),
      );
  }
  return related;
}

const explained = (e: RecordedEvent): ExplainedEvent => ({
  position: formatPosition(e.position),
  stream: e.stream,
  type: e.type,
  id: e.id,
  at: eventTimeText(e, { acceptedAt: true }),
  summary: summaryOf(e),
  data: e.data,
  metadata: e.metadata,
});

/** Everything recon knows about one payment or order. */
export async function explain(
  deps: { sql: Sql; store: EventStore; posIds: readonly string[] },
  ref: string,
): Promise<Explanation> {
  const payments = await posIdsOf(deps.sql, ref, deps.posIds);
  const g = gathered();
  const existing: typeof payments = [];
  for (const p of payments) {
    const own = await deps.store.readStream(paymentStream(p.posId, p.paymentId));
    if (own.length) existing.push(p);
    own.forEach(g.add);
  }
  const state = await operationsOf(
    deps.sql,
    existing.length === 1 ? { paymentId: existing[0]!.paymentId } : { orderId: ref, paymentId: ref },
  );
  await addWindowsAndResends(deps.store, g, existing, state.ok ? state.value.operations : []);
  const order = await orderDetail(deps.sql, ref);
  for (const e of await deps.store.readStream(orderStream(ref))) g.add(e);
  const discrepancies = state.ok ? state.value.discrepancies : [];
  for (const d of discrepancies) for (const e of await deps.store.readStream(`discrepancy-${d.id}`)) g.add(e);
  g.events.sort((a, b) => comparePositions(a.position, b.position));
  return {
    query: ref,
    payments: existing,
    events: g.events.map(explained),
    operations: state.ok ? state.value.operations : [],
    receivers: state.ok ? state.value.receivers : [],
    discrepancies,
    related: await relatedRows(
      deps.sql,
      existing.map((p) => p.paymentId),
    ),
    order,
  };
}
