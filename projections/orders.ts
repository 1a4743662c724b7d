import { dataOf, isEvent } from '../src/events/catalog';
import { DiscrepancyAccepted } from '../src/events/audit-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import {
  FeeScheduleLineSet,
  OrderAmended,
  OrderCancelled,
  OrderPlaced,
  type FeeScheduleLine,
} from '../src/events/order-events';
import { judgeOrder, type GroupPayment, type OrderFinding, type OrderVersion } from '../src/intent/order-rules';
import { matchPayment } from '../src/reconciliation/matching';
import {
  observationFromRow,
  observationOf,
  observationToRow,
  type Observation,
} from '../src/reconciliation/observations';
import type { Projection, ProjectionContext, Tx } from '../src/projection/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * The marketplace's intent against the PSP (issue 17): orders, their matches with PSP payments, and the
 * discrepancies between them and with the fee contract (src/intent/order-rules.ts judges; this file keeps
 * the state and the lifecycle).
 *
 * State is kept per order id (a "group": the order's versions and the observations of every payment
 * carrying that order id; a payment whose records carry none is a group of its own). As in the
 * reconciliation projection, the clock is the latest time the PSP's events carry (never the wall clock),
 * and the groups an append touched, or whose grace period ran out by the new clock, are judged at the end
 * of that append (events sharing `position.commit`, which the runner never splits): the rows, with their
 * detection and resolution times and events, are the same whatever the batch sizes. A directory or fee
 * contract event judges every group again (rare, and each group is small).
 */

const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

/** The columns of recon.discrepancies (projections/reconciliation.ts), so that both views can be read as one. */
const DISC_COLUMNS = `id uuid, type text, status text, pos_id text, payment_id text, order_id text, method text, operation_key text,
  receiver_name text, sub_merchant_id text, sub_merchant_ids text[], currency text, occurred_at timestamptz, "values" jsonb,
  evidence text[], detected_at timestamptz, detected_by_event uuid, resolved_at timestamptz, resolved_by_event uuid,
  accepted_at timestamptz, accepted_by text, accepted_note text, accepted_by_event uuid, updated_at timestamptz, updated_by_event uuid`;
const names = (cols: string) =>
  cols
    .split(',')
    .map((c) => c.trim().split(/\s+/)[0]!)
    .join(', ');

const ORDER_COLUMNS = `order_id text, status text, state text, amount int8, currency text, created_at timestamptz,
  customer_reference text, split jsonb, versions int, last_version_event uuid, matched_pos_id text, matched_payment_id text,
  psp_amount int8, psp_currency text, psp_status text`;
const PAYMENT_COLUMNS = `order_id text, pos_id text, payment_id text, role text, method text, status text, amount int8,
  currency text, occurred_at timestamptz, event_ids text[]`;

/** The time an event carries (ms), or null: the projection's only notion of "now" (as the reconciliation's). */
function eventTime(e: RecordedEvent): number | null {
  const m = e.metadata ?? {};
  const d = (e.data ?? {}) as Record<string, unknown>;
  const t = m.observedAt ?? m.receivedAt ?? d.completedAt ?? d.requestedAt ?? d.detectedAt ?? d.failedAt;
  if (typeof t !== 'string') return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

type Disc = Record<string, unknown> & { id: string; status: string };

interface Group {
  readonly key: string;
  readonly versions: OrderVersion[];
  /** posId\u0001paymentId → observations */
  readonly payments: Map<string, Observation[]>;
  readonly stored: boolean;
  readonly discs: Map<string, Disc>;
  due: number | null;
  dirty: boolean;
}

interface Batch {
  readonly ctx: ProjectionContext;
  clock: number | null;
  /** the earliest creation time of any order recorded: payments before it are not compared with orders */
  ordersSince: number | null;
  readonly groups: Map<string, Group>;
  readonly directory: Map<string, string>;
  readonly feeVersions: Array<FeeScheduleLine & { eventId: string }>;
  readonly newFeeVersions: Array<FeeScheduleLine & { eventId: string; ord: number }>;
  directoryDirty: boolean;
  readonly dirtyDiscs: Map<string, Disc>;
}

const groupKeyOf = (o: Observation) => o.orderId ?? `#payment:${o.posId}:${o.paymentId}`;

function versionOf(e: RecordedEvent): OrderVersion | null {
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

async function setup(tx: Tx, ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
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
    create table ${s}.discrepancies (order_key text not null, ${DISC_COLUMNS}, primary key (id));
    create index on ${s}.discrepancies (order_key);
  `);
}

async function loadGroups(tx: Tx, s: string, b: Batch, keys: readonly string[] | 'all'): Promise<void> {
  const where = keys === 'all' ? '' : 'where order_key = any($1::text[])';
  const args = (keys === 'all' ? [] : [keys]) as never[];
  const [rows, discs, dues] = await Promise.all([
    tx.unsafe<{ order_key: string; versions: string; payments: string }[]>(`select * from ${s}.groups ${where}`, args),
    tx.unsafe<Record<string, unknown>[]>(`select * from ${s}.discrepancies ${where}`, args),
    tx.unsafe<{ order_key: string; due_at: Date }[]>(`select * from ${s}.due ${where}`, args),
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
    b.groups.set(r.order_key, {
      key: r.order_key,
      versions,
      payments,
      stored: true,
      discs: new Map(),
      due: null,
      dirty: false,
    });
  }
  for (const k of keys === 'all' ? [] : keys) {
    if (!b.groups.has(k))
      b.groups.set(k, {
        key: k,
        versions: [],
        payments: new Map(),
        stored: false,
        discs: new Map(),
        due: null,
        dirty: false,
      });
  }
  for (const d of discs) {
    const row = discFromDb(d);
    b.groups.get(String(d.order_key))?.discs.set(row.id, row);
  }
  for (const d of dues) {
    const g = b.groups.get(d.order_key);
    if (g) g.due = d.due_at.getTime();
  }
}

const isoOf = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));
function discFromDb(r: Record<string, unknown>): Disc {
  const out: Disc = { ...(r as Disc) };
  delete out.order_key;
  for (const k of ['occurred_at', 'detected_at', 'resolved_at', 'accepted_at', 'updated_at']) out[k] = isoOf(r[k]);
  return out;
}

function lookupOf(b: Batch): (name: string) => string | undefined {
  const byName = new Map<string, string>();
  for (const [id, name] of [...b.directory].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
    if (!byName.has(name)) byName.set(name, id);
  return (name) => byName.get(name.trim());
}

/** The contract in force: the latest version of each line (sub-merchant, method, currency, day), in commit order. */
function currentFeeLines(b: Batch): FeeScheduleLine[] {
  const latest = new Map<string, FeeScheduleLine>();
  for (const v of b.feeVersions) {
    const { eventId: _, ...line } = v as FeeScheduleLine & { eventId: string; ord?: number };
    delete (line as { ord?: number }).ord;
    latest.set(`${v.subMerchantId}|${v.method}|${v.currency}|${v.effectiveFrom}`, line);
  }
  return [...latest.values()];
}

/**
 * Structural equality of plain JSON values, keys in any order: a row read back from the table has its
 * `values` as jsonb gives them (keys reordered), and must compare equal to the same finding judged in memory.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x).filter((k) => x[k] !== undefined);
  const ky = Object.keys(y).filter((k) => y[k] !== undefined);
  return kx.length === ky.length && kx.every((k) => sameJson(x[k], y[k]));
}

function judge(
  b: Batch,
  g: Group,
  eventId: string,
  lookup: (n: string) => string | undefined,
  fees: FeeScheduleLine[],
): void {
  const payments: GroupPayment[] = [...g.payments.values()].map((obs) => ({
    posId: obs[0]!.posId,
    paymentId: obs[0]!.paymentId,
    ops: matchPayment(obs),
  }));
  const j = judgeOrder(g.key, g.versions, payments, {
    clock: b.clock,
    ordersSince: b.ordersSince,
    graceMs: b.ctx.graceHours * 3_600_000,
    timezone: b.ctx.timezone,
    subMerchantOf: lookup,
    feeLines: fees,
  });
  g.due = j.due;
  g.dirty = true;
  applyFindings(b, g, j.findings, eventId);
  (g as Group & { judgement?: typeof j }).judgement = j;
}

function applyFindings(b: Batch, g: Group, findings: OrderFinding[], eventId: string): void {
  const now = b.clock === null ? null : new Date(b.clock).toISOString();
  const seen = new Set<string>();
  for (const f of findings) {
    seen.add(f.id);
    const values = {
      type: f.type,
      pos_id: f.posId,
      payment_id: f.paymentId,
      order_id: f.orderId,
      method: f.method,
      operation_key: f.operationKey,
      receiver_name: f.receiverName,
      sub_merchant_id: f.subMerchantIds.length === 1 ? f.subMerchantIds[0]! : null,
      sub_merchant_ids: [...f.subMerchantIds],
      currency: f.currency,
      occurred_at: f.occurredAt,
      values: f.values,
      evidence: [...f.evidence],
    };
    const r = g.discs.get(f.id);
    if (!r) {
      const row: Disc = {
        id: f.id,
        status: 'open',
        ...values,
        detected_at: now,
        detected_by_event: eventId,
        resolved_at: null,
        resolved_by_event: null,
        accepted_at: null,
        accepted_by: null,
        accepted_note: null,
        accepted_by_event: null,
        updated_at: now,
        updated_by_event: eventId,
      };
      g.discs.set(f.id, row);
      b.dirtyDiscs.set(f.id, row);
      continue;
    }
    if (r.status === 'accepted') continue; // an auditor's decision freezes the evidence
    const changed = r.status === 'resolved' || Object.entries(values).some(([k, v]) => !sameJson(r[k], v));
    if (!changed) continue;
    Object.assign(r, values, {
      status: 'open',
      resolved_at: null,
      resolved_by_event: null,
      updated_at: now,
      updated_by_event: eventId,
    });
    b.dirtyDiscs.set(r.id, r);
  }
  for (const r of g.discs.values()) {
    if (r.status !== 'open' || seen.has(r.id)) continue;
    Object.assign(r, {
      status: 'resolved',
      resolved_at: now,
      resolved_by_event: eventId,
      updated_at: now,
      updated_by_event: eventId,
    });
    b.dirtyDiscs.set(r.id, r);
  }
}

/**
 * The groups a batch may touch (each loaded once): its events' order ids, the due ones, the accepted ones; all
 * on a directory or contract event, and on the first order ever recorded (payments judged before it are
 * compared with orders from then on).
 */
async function wantedGroups(
  tx: Tx,
  s: string,
  events: readonly RecordedEvent[],
  observed: readonly (Observation | null)[],
  startClock: number | null,
  ordersKnown: boolean,
): Promise<{ keys: Set<string>; all: boolean }> {
  let maxClock = startClock;
  const keys = new Set<string>();
  const accepted: string[] = [];
  let all = false;
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
    const o = observed[i];
    if (o) keys.add(groupKeyOf(o));
    else if (isEvent(OrderPlaced, e) || isEvent(OrderAmended, e) || isEvent(OrderCancelled, e)) {
      keys.add((e.data as { orderId: string }).orderId);
      if (!ordersKnown && isEvent(OrderPlaced, e)) all = true;
    } else if (isEvent(SubMerchantRegistered, e) || isEvent(FeeScheduleLineSet, e)) all = true;
    else if (isEvent(DiscrepancyAccepted, e)) accepted.push(dataOf(DiscrepancyAccepted, e).discrepancyId);
  }
  if (maxClock !== null && !all) {
    for (const r of await tx.unsafe<{ order_key: string }[]>(`select order_key from ${s}.due where due_at <= $1`, [
      new Date(maxClock),
    ] as never[]))
      keys.add(r.order_key);
  }
  if (accepted.length && !all) {
    for (const r of await tx.unsafe<{ order_key: string }[]>(
      `select order_key from ${s}.discrepancies where id = any($1::uuid[])`,
      [accepted] as never[],
    ))
      keys.add(r.order_key);
  }
  return { keys, all };
}

/**
 * Applies the batch's events in commit order; at the end of each append (events sharing `position.commit`)
 * judges the groups it touched, named by the first of its events touching them, and the groups come of age.
 */
function replay(b: Batch, events: readonly RecordedEvent[], observed: readonly (Observation | null)[]): void {
  let feeOrd = b.feeVersions.length;
  let lookup = lookupOf(b);
  let fees = currentFeeLines(b);
  const toJudge = new Map<Group, string>();
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (b.clock === null || t > b.clock)) b.clock = t;
    const o = observed[i];
    const v = o ? null : versionOf(e);
    if (o) {
      const g = b.groups.get(groupKeyOf(o))!;
      const pk = `${o.posId}\u0001${o.paymentId}`;
      const list = g.payments.get(pk);
      if (list) list.push(o);
      else g.payments.set(pk, [o]);
      if (!toJudge.has(g)) toJudge.set(g, e.id);
    } else if (v) {
      const g = b.groups.get(v.data.orderId)!;
      g.versions.push(v);
      if (v.kind === 'placed') {
        const created = Date.parse(v.at);
        const first = b.ordersSince === null;
        if (first || created < b.ordersSince!) b.ordersSince = created;
        // payments judged while no order was recorded are compared with the orders from now on
        if (first)
          for (const other of b.groups.values())
            if (other.payments.size && !toJudge.has(other)) toJudge.set(other, e.id);
      }
      if (!toJudge.has(g)) toJudge.set(g, e.id);
    } else if (isEvent(SubMerchantRegistered, e)) {
      const d = dataOf(SubMerchantRegistered, e);
      b.directory.set(d.subMerchantId, d.name.trim());
      b.directoryDirty = true;
      lookup = lookupOf(b);
      for (const g of b.groups.values()) if (g.payments.size && !toJudge.has(g)) toJudge.set(g, e.id);
    } else if (isEvent(FeeScheduleLineSet, e)) {
      const line = { ...dataOf(FeeScheduleLineSet, e), eventId: e.id };
      b.feeVersions.push(line);
      b.newFeeVersions.push({ ...line, ord: feeOrd++ });
      fees = currentFeeLines(b);
      for (const g of b.groups.values()) if (g.payments.size && !toJudge.has(g)) toJudge.set(g, e.id);
    } else if (isEvent(DiscrepancyAccepted, e)) {
      const d = dataOf(DiscrepancyAccepted, e);
      for (const g of b.groups.values()) {
        const r = g.discs.get(d.discrepancyId);
        if (!r || r.status === 'accepted') continue;
        Object.assign(r, {
          status: 'accepted',
          accepted_at: d.acceptedAt,
          accepted_by: d.acceptedBy,
          accepted_note: d.note,
          accepted_by_event: e.id,
          updated_at: d.acceptedAt,
          updated_by_event: e.id,
        });
        b.dirtyDiscs.set(r.id, r);
      }
    }
    const next = events[i + 1];
    if (next === undefined || next.appendId !== e.appendId) {
      for (const [g, id] of toJudge) judge(b, g, id, lookup, fees);
      toJudge.clear();
      if (b.clock !== null)
        for (const g of b.groups.values()) if (g.due !== null && g.due <= b.clock) judge(b, g, e.id, lookup, fees);
    }
  }
}

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
  const [[st], dirRows, feeRows] = await Promise.all([
    tx.unsafe<{ clock: Date | null; orders_since: Date | null }[]>(
      `select clock, orders_since from ${s}.state where id = 1`,
    ),
    tx.unsafe<{ sub_merchant_id: string; name: string }[]>(`select sub_merchant_id, name from ${s}.directory`),
    tx.unsafe<Record<string, unknown>[]>(
      `select event_id::text, sub_merchant_id, method, currency, effective_from::text, percent, fixed::text, rounding from ${s}.fee_versions order by ord`,
    ),
  ]);
  const observed = events.map(observationOf);
  const { keys, all } = await wantedGroups(
    tx,
    s,
    events,
    observed,
    st?.clock ? st.clock.getTime() : null,
    Boolean(st?.orders_since),
  );
  const b: Batch = {
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
    dirtyDiscs: new Map(),
  };
  await loadGroups(tx, s, b, all ? 'all' : [...keys]);
  if (all)
    for (const k of keys)
      if (!b.groups.has(k))
        b.groups.set(k, {
          key: k,
          versions: [],
          payments: new Map(),
          stored: false,
          discs: new Map(),
          due: null,
          dirty: false,
        });

  replay(b, events, observed);
  await writeBack(tx, s, b);
}

async function insertJson(tx: Tx, s: string, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 5000) {
    const text = JSON.stringify(rows.slice(i, i + 5000), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    await tx.unsafe(
      `insert into ${s}.${table} select * from json_populate_recordset(null::${s}.${table}, $1::text::json)`,
      [text] as never[],
    );
  }
}

/** The rows of recon.orders and recon.order_payments of the groups judged in this batch. */
function viewRows(dirty: readonly Group[]) {
  const orderRows: Record<string, unknown>[] = [];
  const paymentRows: Record<string, unknown>[] = [];
  for (const g of dirty) {
    const j = (g as Group & { judgement?: ReturnType<typeof judgeOrder> }).judgement;
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

async function writeBack(tx: Tx, s: string, b: Batch): Promise<void> {
  await tx.unsafe(`update ${s}.state set clock = $1, orders_since = $2 where id = 1`, [
    b.clock === null ? null : new Date(b.clock),
    b.ordersSince === null ? null : new Date(b.ordersSince),
  ] as never[]);
  if (b.directoryDirty) {
    await tx.unsafe(`delete from ${s}.directory`);
    await insertJson(
      tx,
      s,
      'directory',
      [...b.directory].map(([sub_merchant_id, name]) => ({ sub_merchant_id, name })),
    );
  }
  await insertJson(
    tx,
    s,
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
  const keys = dirty.map((g) => g.key);
  if (keys.length) {
    for (const t of ['groups', 'due', 'orders', 'order_payments'])
      await tx.unsafe(`delete from ${s}.${t} where order_key = any($1::text[])`, [keys] as never[]);
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
  if (b.dirtyDiscs.size) {
    const ids = [...b.dirtyDiscs.keys()];
    await tx.unsafe(`delete from ${s}.discrepancies where id = any($1::uuid[])`, [ids] as never[]);
    const keyOf = new Map<string, string>();
    for (const g of b.groups.values()) for (const id of g.discs.keys()) keyOf.set(id, g.key);
    await insertJson(
      tx,
      s,
      'discrepancies',
      [...b.dirtyDiscs.values()].map((r) => ({ ...r, order_key: keyOf.get(r.id) })),
    );
  }
}

function views(ctx: ProjectionContext): readonly string[] {
  const s = q(ctx.schema);
  return [
    `create or replace view recon.orders as select ${names(ORDER_COLUMNS)} from ${s}.orders`,
    `create or replace view recon.order_payments as select ${names(PAYMENT_COLUMNS)} from ${s}.order_payments`,
    `create or replace view recon.order_discrepancies as select ${names(DISC_COLUMNS)} from ${s}.discrepancies`,
    `create or replace view recon.fee_contract_versions as select event_id, sub_merchant_id, method, currency, effective_from,
      percent, fixed, rounding, ord as version_order from ${s}.fee_versions`,
  ];
}

export const projection: Projection = { name: 'orders', version: 2, setup, apply, views };
