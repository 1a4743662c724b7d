import { dataOf, isEvent } from '../../events/catalog';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../../events/audit-events';
import { SubMerchantRegistered } from '../../events/ledger-events';
import {
  FeeScheduleLineSet,
  OrderAmended,
  OrderCancelled,
  OrderPlaced,
  type FeeScheduleLine,
} from '../../events/order-events';
import type { ProjectionContext, Tx } from '../../projector/projection';
import { discrepancyFromRow, type DiscrepancyRow } from '../discrepancies/columns';
import { type Lifecycle, newLifecycle } from '../discrepancies/lifecycle';
import { eventTime } from '../event-clock';
import { observationFromRow, type Observation } from '../observations';
import type { RecordedEvent } from '../../store/types';
import type { OrderVersion } from './rules';

/**
 * The orders read model's state, kept per order id: a "group" holds the order's versions and the observations
 * of every payment carrying that order id (a payment whose records carry none is a group of its own), with the
 * group's order discrepancies. A batch loads only the groups its events may touch.
 */

export interface Group {
  readonly key: string;
  readonly versions: OrderVersion[];
  /** posId\u0001paymentId → observations */
  readonly payments: Map<string, Observation[]>;
  readonly stored: boolean;
  readonly discs: Map<string, DiscrepancyRow>;
  due: number | null;
  /** judged in this batch: its due time and view rows are written back */
  dirty: boolean;
  /** a version or an observation was added in this batch: its stored state is written back too */
  grown: boolean;
}

export interface OrderBatch {
  readonly ctx: ProjectionContext;
  clock: number | null;
  /** the earliest creation time of any order recorded: payments before it are not compared with orders */
  ordersSince: number | null;
  readonly groups: Map<string, Group>;
  readonly directory: Map<string, string>;
  readonly feeVersions: Array<FeeScheduleLine & { eventId: string }>;
  readonly newFeeVersions: Array<FeeScheduleLine & { eventId: string; ord: number }>;
  directoryDirty: boolean;
  /** the group's discrepancies as the core's lifecycle changes them (`changed`: the rows to write) */
  readonly lifecycle: Lifecycle;
  /** the first event of the batch that judged every group with a payment again (judging.ts `touchPaid`) */
  paidJudgedBy: string | null;
}

export const groupKeyOf = (o: Observation) => o.orderId ?? `#payment:${o.posId}:${o.paymentId}`;

const emptyGroup = (key: string): Group => ({
  key,
  versions: [],
  payments: new Map(),
  stored: false,
  discs: new Map(),
  due: null,
  dirty: false,
  grown: false,
});

export function versionOf(e: RecordedEvent): OrderVersion | null {
  const base = { eventId: e.id, commit: e.position.commit, prepare: e.position.prepare };
  if (isEvent(OrderPlaced, e)) {
    const d = dataOf(OrderPlaced, e);
    return { ...base, kind: 'placed', at: d.createdAt, data: d };
  }
  if (isEvent(OrderAmended, e)) {
    const d = dataOf(OrderAmended, e);
    return { ...base, kind: 'amended', at: d.amendedAt, data: d };
  }
  if (isEvent(OrderCancelled, e)) {
    const d = dataOf(OrderCancelled, e);
    return { ...base, kind: 'cancelled', at: d.cancelledAt, data: d };
  }
  return null;
}

/** A batch's state without its groups: the clock, the directory and the fee contract (`s`: the build schema). */
async function loadOrderState(tx: Tx, s: string, ctx: ProjectionContext): Promise<OrderBatch> {
  const [[st], dirRows, feeRows] = await Promise.all([
    tx<{ clock: Date | null; orders_since: Date | null }[]>`
      select clock, orders_since from ${tx(s)}.state where id = 1`,
    tx<{ sub_merchant_id: string; name: string }[]>`select sub_merchant_id, name from ${tx(s)}.directory`,
    tx<Record<string, unknown>[]>`
      select event_id::text, sub_merchant_id, method, currency, effective_from::text, percent, fixed::text, rounding from ${tx(s)}.fee_versions order by ord`,
  ]);
  return {
    ctx,
    clock: st?.clock ? st.clock.getTime() : null,
    ordersSince: st?.orders_since ? st.orders_since.getTime() : null,
    groups: new Map(),
    directory: new Map(dirRows.map((r) => [r.sub_merchant_id, r.name])),
    feeVersions: feeRows.map((r) => ({
      eventId: String(r.event_id),
      subMerchantId: String(r.sub_merchant_id),
      method: String(r.method),
      currency: String(r.currency),
      effectiveFrom: String(r.effective_from),
      percent: String(r.percent),
      fixed: String(r.fixed),
      rounding: r.rounding as FeeScheduleLine['rounding'],
    })),
    newFeeVersions: [],
    directoryDirty: false,
    lifecycle: newLifecycle(),
    paidJudgedBy: null,
  };
}

/**
 * A batch's state and the groups its events may touch (`observed`: each event's observation, or null). With
 * `paid: false` the groups with a payment are not loaded for a contract, directory or first-order event: the
 * caller judges them in chunks (chunks.ts). When more than `dueLimit` groups come due by the batch's latest
 * clock, those its events do not touch are not loaded either (`dueLater`: that clock); the caller judges them
 * in chunks after the batch.
 */
export async function loadOrderBatch(
  tx: Tx,
  s: string,
  ctx: ProjectionContext,
  events: readonly RecordedEvent[],
  observed: readonly (Observation | null)[],
  opts: { paid?: boolean; dueLimit: number },
): Promise<{ batch: OrderBatch; dueLater: number | null }> {
  const b = await loadOrderState(tx, s, ctx);
  const ordersKnown = b.ordersSince !== null;
  const { keys, paid, dueLater } = await wantedGroups(tx, s, events, observed, b.clock, ordersKnown, opts.dueLimit);
  await loadGroups(tx, s, b, [...keys], paid && opts.paid !== false);
  return { batch: b, dueLater };
}

/** A batch of the named groups alone, with the state as stored (a later chunk of a contract event's groups). */
export async function loadGroupChunk(
  tx: Tx,
  s: string,
  ctx: ProjectionContext,
  keys: readonly string[],
): Promise<OrderBatch> {
  const b = await loadOrderState(tx, s, ctx);
  await loadGroups(tx, s, b, keys, false);
  return b;
}

/** The next `limit` groups with a payment after `after` (keys in order): a contract event's groups, a page at a time. */
export async function paidGroupsAfter(tx: Tx, s: string, after: string | null, limit: number): Promise<string[]> {
  const rows = await tx<{ order_key: string }[]>`
    select order_key from ${tx(s)}.groups
    where payments <> '[]' ${after === null ? tx`` : tx`and order_key > ${after}`}
    order by order_key limit ${limit}`;
  return rows.map((r) => r.order_key);
}

/**
 * The groups a batch may touch (each loaded once): its events' order ids, the due ones, the accepted ones; and
 * `paid`, every group with a payment, on a directory or contract event and on the first order ever recorded
 * (those judge every group with a payment again: judging.ts `touchPaid`). A group without a payment is not
 * judged by them, so it is not loaded: in a month's store the orders come before their payments, and loading
 * every order at the contract's import held them all in memory at once (issue 26).
 */
async function wantedGroups(
  tx: Tx,
  s: string,
  events: readonly RecordedEvent[],
  observed: readonly (Observation | null)[],
  startClock: number | null,
  ordersKnown: boolean,
  dueLimit: number,
): Promise<{ keys: Set<string>; paid: boolean; dueLater: number | null }> {
  let maxClock = startClock;
  const keys = new Set<string>();
  const accepted: string[] = [];
  let paid = false;
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
    const o = observed[i];
    if (o) keys.add(groupKeyOf(o));
    else if (isEvent(OrderPlaced, e) || isEvent(OrderAmended, e) || isEvent(OrderCancelled, e)) {
      keys.add((e.data as { orderId: string }).orderId);
      if (!ordersKnown && isEvent(OrderPlaced, e)) paid = true;
    } else if (isEvent(SubMerchantRegistered, e) || isEvent(FeeScheduleLineSet, e)) paid = true;
    else if (isEvent(DiscrepancyAccepted, e)) accepted.push(dataOf(DiscrepancyAccepted, e).discrepancyId);
    else if (isEvent(DiscrepancyAcceptanceRevoked, e))
      accepted.push(dataOf(DiscrepancyAcceptanceRevoked, e).discrepancyId);
  }
  let dueLater: number | null = null;
  if (maxClock !== null) {
    const due = await tx<{ order_key: string }[]>`
      select order_key from ${tx(s)}.due where due_at <= ${new Date(maxClock)} limit ${dueLimit + 1}`;
    if (due.length > dueLimit) dueLater = maxClock;
    else for (const r of due) keys.add(r.order_key);
  }
  if (accepted.length) {
    for (const r of await tx<{ order_key: string }[]>`
      select order_key from ${tx(s)}.discrepancies where id = any(${accepted}::uuid[])`)
      keys.add(r.order_key);
  }
  return { keys, paid, dueLater };
}

/** Where a page of groups come due ended: its last group's due time and key. */
export interface DueCursor {
  readonly dueAt: Date;
  readonly key: string;
}

/**
 * The next `limit` groups due by `clock` after `after`, in order of due time then key, with `unpaid` only those
 * without a payment (the others are an append's paid chunks): a batch's groups come due, a page at a time. In
 * due-time order each page is a range of the `due_at` index whatever the table's statistics say (a month's
 * orders come due a million at once: a plan that sorted every due row for each page would be quadratic).
 */
export async function dueGroupsAfter(
  tx: Tx,
  s: string,
  page: { clock: number; after: DueCursor | null; limit: number; unpaid: boolean },
): Promise<{ keys: string[]; last: DueCursor | null }> {
  const { after } = page;
  const rows = await tx<{ order_key: string; due_at: Date }[]>`
    select d.order_key, d.due_at from ${tx(s)}.due d
    where d.due_at <= ${new Date(page.clock)}
    ${after === null ? tx`` : tx`and d.due_at >= ${after.dueAt} and (d.due_at > ${after.dueAt} or d.order_key > ${after.key})`}
    ${page.unpaid ? tx`and not exists (select 1 from ${tx(s)}.groups g where g.order_key = d.order_key and g.payments <> '[]')` : tx``}
    order by d.due_at, d.order_key limit ${page.limit}`;
  const last = rows[rows.length - 1];
  return { keys: rows.map((r) => r.order_key), last: last ? { dueAt: last.due_at, key: last.order_key } : null };
}

/** Loads the groups named, and with `paid` every group with a payment (stored payments not `[]`). */
async function loadGroups(tx: Tx, s: string, b: OrderBatch, keys: readonly string[], paid: boolean): Promise<void> {
  // a fragment of each query it is written in: these groups, and with `paid` every group with a payment
  const where = () =>
    paid
      ? tx`where order_key = any(${keys}::text[]) or order_key in (select order_key from ${tx(s)}.groups where payments <> '[]')`
      : tx`where order_key = any(${keys}::text[])`;
  const [rows, discs, dues] = await Promise.all([
    tx<{ order_key: string; versions: string; payments: string }[]>`select * from ${tx(s)}.groups ${where()}`,
    tx<Record<string, unknown>[]>`select * from ${tx(s)}.discrepancies ${where()}`,
    tx<{ order_key: string; due_at: Date }[]>`select * from ${tx(s)}.due ${where()}`,
  ]);
  for (const r of rows) {
    const payments = new Map<string, Observation[]>();
    for (const [posId, paymentId, obs] of JSON.parse(r.payments) as [string, string, unknown[][]][])
      payments.set(
        `${posId}\u0001${paymentId}`,
        obs.map((o) => observationFromRow(posId, paymentId, o)),
      );
    const versions = (JSON.parse(r.versions) as [string, string, string, OrderVersion['kind'], string, never][]).map(
      ([eventId, commit, prepare, kind, at, data]) => ({
        eventId,
        commit: BigInt(commit),
        prepare: BigInt(prepare),
        kind,
        at,
        data,
      }),
    );
    b.groups.set(r.order_key, { ...emptyGroup(r.order_key), versions, payments, stored: true });
  }
  for (const k of keys) if (!b.groups.has(k)) b.groups.set(k, emptyGroup(k));
  for (const d of discs) {
    const row = discrepancyFromRow(d);
    b.groups.get(String(d.order_key))?.discs.set(row.id, row);
  }
  for (const d of dues) {
    const g = b.groups.get(d.order_key);
    if (g) g.due = d.due_at.getTime();
  }
}
