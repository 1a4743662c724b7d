import { dataOf, isEvent } from '../src/events/catalog';
import { stableStringify } from '../src/events/ids';
import { RegisterCountMismatched, SyncWindowCompleted, SyncWindowFailed, WebhookResendRequested } from '../src/events/ingest-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import { DiscrepancyAccepted } from '../src/events/audit-events';
import {
  discrepancyId,
  findDiscrepancies,
  nextDue,
  type Finding,
  type ResendRequest,
  type SyncWindow,
} from '../src/ledger/discrepancy-rules';
import { matchPayment, observationFromJson, observationOf, observationToJson, type MatchedOperation, type Observation, type SourceItem } from '../src/ledger/matching';
import type { Projection, ProjectionContext, Tx } from '../src/ledger/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * One read model for the operations view and the discrepancies, because both come from the same
 * matching of a payment's observations (src/ledger/matching.ts): the discrepancies are judged on the
 * operations as matched, and sharing one projection keeps them from ever disagreeing.
 *
 * Determinism: the projection never reads the wall clock. Its clock is the latest time carried by the
 * events so far (observedAt, receivedAt, completedAt, requestedAt, detectedAt, failedAt). After every
 * event (not every batch) the payments it concerns, and every payment whose grace period or re-send
 * grace has run out by the new clock, are judged again; so the rows (including detection and resolution
 * times and events) are the same whatever the batch sizes.
 */

type Row = Record<string, unknown>;

interface DiscRow {
  id: string;
  type: string;
  status: 'open' | 'resolved' | 'accepted';
  pos_id: string;
  payment_id: string | null;
  order_id: string | null;
  method: string | null;
  operation_key: string;
  receiver_name: string | null;
  sub_merchant_id: string | null;
  sub_merchant_ids: string[];
  currency: string | null;
  occurred_at: string | null;
  values: Record<string, unknown>;
  evidence: string[];
  detected_at: string | null;
  detected_by_event: string;
  resolved_at: string | null;
  resolved_by_event: string | null;
  accepted_at: string | null;
  accepted_by: string | null;
  accepted_note: string | null;
  accepted_by_event: string | null;
  updated_at: string | null;
  updated_by_event: string;
}

interface PaymentState {
  readonly posId: string;
  readonly paymentId: string;
  readonly observations: Observation[];
  readonly resends: ResendRequest[];
  readonly discrepancies: Map<string, DiscRow>;
  ops: MatchedOperation[] | null;
  opsDirty: boolean;
  due: number | null;
  dueDirty: boolean;
}

const paymentKey = (posId: string, paymentId: string) => `${posId}\u0000${paymentId}`;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const isoOf = (v: unknown): string | null => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());

/** The time an event carries (ms), or null: the projection's only notion of "now". */
export function eventTime(e: RecordedEvent): number | null {
  const m = e.metadata ?? {};
  const d = (e.data ?? {}) as Record<string, unknown>;
  const t = m.observedAt ?? m.receivedAt ?? d.completedAt ?? d.requestedAt ?? d.detectedAt ?? d.failedAt;
  if (typeof t !== 'string') return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

const DISC_COLUMNS = `id uuid, type text, status text, pos_id text, payment_id text, order_id text, method text, operation_key text,
  receiver_name text, sub_merchant_id text, sub_merchant_ids text[], currency text, occurred_at timestamptz, "values" jsonb,
  evidence text[], detected_at timestamptz, detected_by_event uuid, resolved_at timestamptz, resolved_by_event uuid,
  accepted_at timestamptz, accepted_by text, accepted_note text, accepted_by_event uuid, updated_at timestamptz, updated_by_event uuid`;

const OP_COLUMNS = `operation_key text, pos_id text, payment_id text, order_id text, method text, ordinal int, occurred_at timestamptz, currency text,
  register_present boolean, register_status text, register_amount int8, register_gross_amount int8, register_currency text,
  register_customer_fee int8, register_merchant_fee int8, register_date_time timestamptz, register_event_ids text[],
  period_present boolean, period_status text, period_amount int8, period_currency text, period_customer_fee int8,
  period_merchant_fee int8, period_date_time timestamptz, period_event_ids text[],
  webhook_present boolean, webhook_status text, webhook_amount int8, webhook_currency text, webhook_fee int8,
  webhook_date_time timestamptz, webhook_event_ids text[]`;

const RECEIVER_COLUMNS = `operation_key text, pos_id text, payment_id text, method text, receiver_name text, sub_merchant_id text,
  status text, currency text, receiver_amount int8, receiver_fee int8, reserve_amount int8, share int8, event_ids text[]`;

const names = (cols: string) => cols.split(',').map((c) => c.trim().split(/\s+/)[0]!).join(', ');

async function insertJson(tx: Tx, schema: string, table: string, cols: string, rows: Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    await tx.unsafe(
      `insert into ${q(schema)}.${table} (${names(cols)}) select ${names(cols)} from jsonb_to_recordset($1::text::jsonb) as t(${cols})`,
      [JSON.stringify(chunk)] as never[],
    );
  }
}

const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

function sourceColumns(prefix: string, it: SourceItem | null): Row {
  const s = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());
  const row: Row = {
    [`${prefix}_present`]: it !== null,
    [`${prefix}_status`]: it?.status ?? null,
    [`${prefix}_amount`]: s(it?.amount),
    [`${prefix}_currency`]: it?.currency ?? null,
    [`${prefix}_date_time`]: it?.dateTime ?? null,
    [`${prefix}_event_ids`]: it ? [...it.eventIds] : [],
  };
  if (prefix === 'webhook') row.webhook_fee = s(it?.merchantFee);
  else {
    row[`${prefix}_customer_fee`] = s(it?.customerFee);
    row[`${prefix}_merchant_fee`] = s(it?.merchantFee);
  }
  if (prefix === 'register') row.register_gross_amount = s(it?.grossAmount);
  return row;
}

function opRow(op: MatchedOperation): Row {
  return {
    operation_key: op.key,
    pos_id: op.posId,
    payment_id: op.paymentId,
    order_id: op.orderId,
    method: op.method,
    ordinal: op.ordinal,
    occurred_at: op.occurredAt,
    currency: op.register?.currency ?? op.period?.currency ?? op.webhook?.currency ?? null,
    ...sourceColumns('register', op.register),
    ...sourceColumns('period', op.period),
    ...sourceColumns('webhook', op.webhook),
  };
}

function discRowFromDb(r: Row): DiscRow {
  return {
    ...(r as unknown as DiscRow),
    id: String(r.id),
    occurred_at: isoOf(r.occurred_at),
    detected_at: isoOf(r.detected_at),
    resolved_at: isoOf(r.resolved_at),
    accepted_at: isoOf(r.accepted_at),
    updated_at: isoOf(r.updated_at),
    detected_by_event: String(r.detected_by_event),
    resolved_by_event: r.resolved_by_event === null ? null : String(r.resolved_by_event),
    accepted_by_event: r.accepted_by_event === null ? null : String(r.accepted_by_event),
    updated_by_event: String(r.updated_by_event),
    sub_merchant_ids: (r.sub_merchant_ids as string[] | null) ?? [],
    evidence: (r.evidence as string[] | null) ?? [],
    values: (r.values as Record<string, unknown>) ?? {},
  };
}

async function setup(tx: Tx, ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
  await tx.unsafe(`
    create table ${s}.state (id int primary key, clock timestamptz);
    insert into ${s}.state values (1, null);
    create table ${s}.observations (event_id uuid primary key, pos_id text not null, payment_id text not null, obs jsonb not null);
    create index on ${s}.observations (pos_id, payment_id);
    create table ${s}.resends (event_id uuid primary key, pos_id text not null, payment_id text not null, method text not null,
      requested_at timestamptz not null, outcome text not null);
    create index on ${s}.resends (pos_id, payment_id);
    create table ${s}.sync_windows (event_id uuid primary key, pos_id text not null, window_from timestamptz not null,
      window_to timestamptz not null, completed_at timestamptz not null, report_id text not null);
    create table ${s}.directory (sub_merchant_id text primary key, name text not null, event_id uuid not null);
    create table ${s}.due (pos_id text not null, payment_id text not null, due_at timestamptz not null, primary key (pos_id, payment_id));
    create index on ${s}.due (due_at);
    create table ${s}.pending_acceptances (discrepancy_id uuid primary key, accepted_by text not null, note text not null,
      accepted_at timestamptz not null, event_id uuid not null);
    create table ${s}.operations (${OP_COLUMNS}, primary key (operation_key));
    create index on ${s}.operations (pos_id, payment_id);
    create index on ${s}.operations (order_id);
    create index on ${s}.operations (pos_id, occurred_at);
    create table ${s}.operation_receivers (${RECEIVER_COLUMNS}, primary key (operation_key, receiver_name));
    create index on ${s}.operation_receivers (receiver_name);
    create index on ${s}.operation_receivers (pos_id, payment_id);
    create table ${s}.discrepancies (${DISC_COLUMNS}, primary key (id));
    create index on ${s}.discrepancies (pos_id, payment_id);
    create index on ${s}.discrepancies (type, status);
    create index on ${s}.discrepancies (occurred_at);
  `);
}

interface Batch {
  readonly ctx: ProjectionContext;
  readonly graceMs: number;
  clock: number | null;
  readonly payments: Map<string, PaymentState>;
  readonly windows: Map<string, SyncWindow[]>;
  readonly newWindows: SyncWindow[];
  readonly newResends: Array<ResendRequest & { outcome: string }>;
  readonly newObservations: Observation[];
  /** sub_merchant_id → name */
  readonly directory: Map<string, { name: string; eventId: string }>;
  readonly directoryDirty: Set<string>;
  /** report-level discrepancies (report_count_mismatch) */
  readonly reportLevel: Map<string, DiscRow>;
  readonly dirtyDisc: Map<string, DiscRow>;
  readonly pendingAcceptances: Row[];
  minDue: number | null;
}

function subMerchantLookup(b: Batch): (name: string) => string | undefined {
  const byName = new Map<string, string>();
  // Latest registration of a name wins; entries are sorted by id so ties never depend on load order.
  for (const [id, v] of [...b.directory.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) if (!byName.has(v.name)) byName.set(v.name, id);
  return (name) => byName.get(name.trim());
}

function opsOf(p: PaymentState): MatchedOperation[] {
  if (p.ops === null) p.ops = matchPayment(p.observations);
  return p.ops;
}

function markDisc(b: Batch, r: DiscRow): void {
  b.dirtyDisc.set(r.id, r);
}

function applyFindings(b: Batch, p: PaymentState | null, existing: Map<string, DiscRow>, findings: Finding[], eventId: string, scopeOpen: (r: DiscRow) => boolean): void {
  const now = iso(b.clock);
  const seen = new Set<string>();
  for (const f of findings) {
    seen.add(f.id);
    const r = existing.get(f.id);
    const evidence = [...f.evidence];
    const values = f.values;
    const subMerchantId = f.subMerchantIds.length === 1 ? f.subMerchantIds[0]! : null;
    if (!r) {
      const row: DiscRow = {
        id: f.id,
        type: f.type,
        status: 'open',
        pos_id: f.posId,
        payment_id: f.paymentId,
        order_id: f.orderId,
        method: f.method,
        operation_key: f.operationKey,
        receiver_name: f.receiverName,
        sub_merchant_id: subMerchantId,
        sub_merchant_ids: [...f.subMerchantIds],
        currency: f.currency,
        occurred_at: f.occurredAt,
        values,
        evidence,
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
      existing.set(f.id, row);
      markDisc(b, row);
      continue;
    }
    if (r.status === 'accepted') continue; // an auditor's decision freezes the evidence
    const changed =
      r.status === 'resolved' ||
      stableStringify(r.values) !== stableStringify(values) ||
      stableStringify(r.evidence) !== stableStringify(evidence) ||
      r.sub_merchant_id !== subMerchantId ||
      stableStringify(r.sub_merchant_ids) !== stableStringify(f.subMerchantIds) ||
      r.order_id !== f.orderId || r.currency !== f.currency || r.occurred_at !== f.occurredAt;
    if (!changed) continue;
    Object.assign(r, {
      status: 'open',
      resolved_at: null,
      resolved_by_event: null,
      values,
      evidence,
      sub_merchant_id: subMerchantId,
      sub_merchant_ids: [...f.subMerchantIds],
      order_id: f.orderId,
      currency: f.currency,
      occurred_at: f.occurredAt,
      updated_at: now,
      updated_by_event: eventId,
    });
    markDisc(b, r);
  }
  for (const r of existing.values()) {
    if (r.status !== 'open' || seen.has(r.id) || !scopeOpen(r)) continue;
    // Later data made the sources agree: resolved, by this event, at the clock's time.
    Object.assign(r, { status: 'resolved', resolved_at: now, resolved_by_event: eventId, updated_at: now, updated_by_event: eventId });
    markDisc(b, r);
  }
  void p;
}

function evaluate(b: Batch, p: PaymentState, eventId: string): void {
  const ops = opsOf(p);
  const lookup = subMerchantLookup(b);
  const findings = findDiscrepancies(ops, {
    now: b.clock,
    graceMs: b.graceMs,
    windows: b.windows.get(p.posId) ?? [],
    resends: p.resends,
    subMerchantOf: lookup,
  });
  applyFindings(b, p, p.discrepancies, findings, eventId, () => true);
  const due = nextDue(ops, p.resends, b.clock, b.graceMs);
  if (due !== p.due) {
    p.due = due;
    p.dueDirty = true;
  }
  if (due !== null && (b.minDue === null || due < b.minDue)) b.minDue = due;
}

function runDue(b: Batch, eventId: string): void {
  if (b.clock === null || b.minDue === null || b.minDue > b.clock) return;
  const ready = [...b.payments.values()].filter((p) => p.due !== null && p.due <= b.clock!);
  b.minDue = null;
  for (const p of ready) evaluate(b, p, eventId);
  for (const p of b.payments.values()) if (p.due !== null && (b.minDue === null || p.due < b.minDue)) b.minDue = p.due;
}

const inWindow = (op: MatchedOperation, w: { from: string; to: string }) =>
  op.occurredAt !== null && Date.parse(op.occurredAt) >= Date.parse(w.from) && Date.parse(op.occurredAt) < Date.parse(w.to);

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
  const [st] = await tx.unsafe<{ clock: Date | null }[]>(`select clock from ${s}.state where id = 1`);
  const startClock = st?.clock ? st.clock.getTime() : null;
  let maxClock = startClock;
  for (const e of events) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
  }

  // What this batch may touch, so that everything it reads is loaded once.
  const wanted = new Set<string>();
  const want = (posId: string, paymentId: string) => wanted.add(paymentKey(posId, paymentId));
  const batchWindows: Array<{ posId: string; from: string; to: string }> = [];
  const receiverNames = new Set<string>();
  const acceptedIds: string[] = [];
  let reportLevelNeeded = false;
  // parsed once: validating event data is the costliest part of a batch
  const observed = events.map(observationOf);
  for (const [i, e] of events.entries()) {
    const o = observed[i];
    if (o) want(o.posId, o.paymentId);
    else if (isEvent(WebhookResendRequested, e)) {
      const d = dataOf(WebhookResendRequested, e);
      want(d.posId, d.paymentId);
    } else if (isEvent(SyncWindowCompleted, e)) {
      const d = dataOf(SyncWindowCompleted, e);
      batchWindows.push({ posId: d.posId, ...d.window });
      reportLevelNeeded = true;
    } else if (isEvent(RegisterCountMismatched, e)) reportLevelNeeded = true;
    else if (isEvent(SubMerchantRegistered, e)) receiverNames.add(dataOf(SubMerchantRegistered, e).name.trim());
    else if (isEvent(DiscrepancyAccepted, e)) {
      acceptedIds.push(dataOf(DiscrepancyAccepted, e).discrepancyId);
      reportLevelNeeded = true;
    }
  }

  const directory = new Map<string, { name: string; eventId: string }>();
  for (const r of await tx.unsafe<{ sub_merchant_id: string; name: string; event_id: string }[]>(`select sub_merchant_id, name, event_id::text from ${s}.directory`)) {
    directory.set(r.sub_merchant_id, { name: r.name, eventId: r.event_id });
  }
  for (const e of events) {
    if (!isEvent(SubMerchantRegistered, e)) continue;
    const old = directory.get(dataOf(SubMerchantRegistered, e).subMerchantId);
    if (old) receiverNames.add(old.name); // a renamed sub-merchant: its old name becomes unknown
  }

  if (maxClock !== null) {
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string }[]>(`select pos_id, payment_id from ${s}.due where due_at <= $1`, [new Date(maxClock)] as never[])) {
      want(r.pos_id, r.payment_id);
    }
  }
  for (const w of batchWindows) {
    const rows = await tx.unsafe<{ pos_id: string; payment_id: string }[]>(
      `select distinct pos_id, payment_id from ${s}.operations
       where pos_id = $1 and occurred_at >= $2 and occurred_at < $3 and not (register_present and period_present)`,
      [w.posId, w.from, w.to] as never[],
    );
    for (const r of rows) want(r.pos_id, r.payment_id);
  }
  if (receiverNames.size) {
    const rows = await tx.unsafe<{ pos_id: string; payment_id: string }[]>(
      `select distinct pos_id, payment_id from ${s}.operation_receivers where receiver_name = any($1::text[])`,
      [[...receiverNames]] as never[],
    );
    for (const r of rows) want(r.pos_id, r.payment_id);
  }
  if (acceptedIds.length) {
    const rows = await tx.unsafe<{ pos_id: string; payment_id: string | null }[]>(
      `select pos_id, payment_id from ${s}.discrepancies where id = any($1::uuid[])`,
      [acceptedIds] as never[],
    );
    for (const r of rows) if (r.payment_id !== null) want(r.pos_id, r.payment_id);
  }

  const b: Batch = {
    ctx,
    graceMs: ctx.graceHours * 3_600_000,
    clock: startClock,
    payments: new Map(),
    windows: new Map(),
    newWindows: [],
    newResends: [],
    newObservations: [],
    directory,
    directoryDirty: new Set(),
    reportLevel: new Map(),
    dirtyDisc: new Map(),
    pendingAcceptances: [],
    minDue: null,
  };

  const keys = [...wanted].map((k) => k.split('\u0000') as [string, string]);
  const posIds = keys.map((k) => k[0]);
  const paymentIds = keys.map((k) => k[1]);
  for (const [posId, paymentId] of keys) {
    b.payments.set(paymentKey(posId, paymentId), {
      posId,
      paymentId,
      observations: [],
      resends: [],
      discrepancies: new Map(),
      ops: null,
      opsDirty: false,
      due: null,
      dueDirty: false,
    });
  }
  if (keys.length) {
    const join = `join unnest($1::text[], $2::text[]) as k(pos_id, payment_id) using (pos_id, payment_id)`;
    const args = [posIds, paymentIds] as never[];
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string; obs: Row }[]>(`select pos_id, payment_id, obs from ${s}.observations ${join}`, args)) {
      b.payments.get(paymentKey(r.pos_id, r.payment_id))!.observations.push(observationFromJson(r.obs));
    }
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string; method: string; requested_at: Date; event_id: string }[]>(
      `select pos_id, payment_id, method, requested_at, event_id::text from ${s}.resends ${join} order by requested_at, event_id`,
      args,
    )) {
      b.payments.get(paymentKey(r.pos_id, r.payment_id))!.resends.push({ posId: r.pos_id, paymentId: r.payment_id, method: r.method, requestedAt: r.requested_at.toISOString(), eventId: r.event_id });
    }
    for (const r of await tx.unsafe<Row[]>(`select * from ${s}.discrepancies ${join}`, args)) {
      const d = discRowFromDb(r);
      b.payments.get(paymentKey(d.pos_id, d.payment_id!))!.discrepancies.set(d.id, d);
    }
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string; due_at: Date }[]>(`select pos_id, payment_id, due_at from ${s}.due ${join}`, args)) {
      const p = b.payments.get(paymentKey(r.pos_id, r.payment_id))!;
      p.due = r.due_at.getTime();
      if (b.minDue === null || p.due < b.minDue) b.minDue = p.due;
    }
  }
  for (const r of await tx.unsafe<{ pos_id: string; window_from: Date; window_to: Date; completed_at: Date; report_id: string; event_id: string }[]>(
    `select pos_id, window_from, window_to, completed_at, report_id, event_id::text from ${s}.sync_windows order by completed_at, event_id`,
  )) {
    const list = b.windows.get(r.pos_id) ?? [];
    list.push({ posId: r.pos_id, from: r.window_from.toISOString(), to: r.window_to.toISOString(), completedAt: r.completed_at.toISOString(), reportId: r.report_id, eventId: r.event_id });
    b.windows.set(r.pos_id, list);
  }
  if (reportLevelNeeded) {
    for (const r of await tx.unsafe<Row[]>(`select * from ${s}.discrepancies where payment_id is null`)) {
      const d = discRowFromDb(r);
      b.reportLevel.set(d.id, d);
    }
  }

  // Replay the batch event by event.
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (b.clock === null || t > b.clock)) b.clock = t;
    const o = observed[i];
    if (o) {
      const p = b.payments.get(paymentKey(o.posId, o.paymentId))!;
      p.observations.push(o);
      p.ops = null;
      p.opsDirty = true;
      b.newObservations.push(o);
      evaluate(b, p, e.id);
    } else if (isEvent(WebhookResendRequested, e)) {
      const d = dataOf(WebhookResendRequested, e);
      const p = b.payments.get(paymentKey(d.posId, d.paymentId))!;
      const r = { posId: d.posId, paymentId: d.paymentId, method: d.operation, requestedAt: d.requestedAt, eventId: e.id };
      p.resends.push(r);
      b.newResends.push({ ...r, outcome: d.outcome });
      evaluate(b, p, e.id);
    } else if (isEvent(SyncWindowCompleted, e)) {
      const d = dataOf(SyncWindowCompleted, e);
      const w: SyncWindow = { posId: d.posId, from: d.window.from, to: d.window.to, completedAt: d.completedAt, reportId: d.reportId, eventId: e.id };
      const list = b.windows.get(d.posId) ?? [];
      list.push(w);
      b.windows.set(d.posId, list);
      b.newWindows.push(w);
      for (const p of b.payments.values()) {
        if (p.posId !== d.posId) continue;
        if (opsOf(p).some((op) => inWindow(op, w) && !(op.register && op.period))) evaluate(b, p, e.id);
      }
      // A later report of the same window whose count matched resolves the window's count mismatches.
      const mismatched = [...b.reportLevel.values()].some((r) => (r.values as { report_id?: string }).report_id === d.reportId);
      if (!mismatched) {
        const same = [...b.reportLevel.values()].filter((r) => {
          const v = r.values as { window?: { from: string; to: string } };
          return r.pos_id === d.posId && v.window?.from === d.window.from && v.window?.to === d.window.to;
        });
        applyFindings(b, null, new Map(same.map((r) => [r.id, r])), [], e.id, () => true);
      }
    } else if (isEvent(RegisterCountMismatched, e)) {
      const d = dataOf(RegisterCountMismatched, e);
      const key = `report:${d.posId}:${d.reportId}`;
      const f: Finding = {
        id: discrepancyId('report_count_mismatch', key, null),
        type: 'report_count_mismatch',
        posId: d.posId,
        paymentId: null,
        orderId: null,
        method: null,
        operationKey: key,
        receiverName: null,
        subMerchantIds: [],
        currency: null,
        occurredAt: d.window.from,
        values: { report_id: d.reportId, window: d.window, announced_count: d.announcedCount, received_count: d.receivedCount },
        evidence: [e.id],
      };
      const existing = new Map([...b.reportLevel.entries()].filter(([id]) => id === f.id));
      applyFindings(b, null, existing, [f], e.id, () => false);
      for (const [id, r] of existing) b.reportLevel.set(id, r);
    } else if (isEvent(SubMerchantRegistered, e)) {
      const d = dataOf(SubMerchantRegistered, e);
      const old = b.directory.get(d.subMerchantId);
      const affected = new Set([d.name.trim(), ...(old ? [old.name] : [])]);
      b.directory.set(d.subMerchantId, { name: d.name.trim(), eventId: e.id });
      b.directoryDirty.add(d.subMerchantId);
      for (const p of b.payments.values()) {
        if (opsOf(p).some((op) => op.register?.receivers.some((r) => affected.has(r.receiverName)))) {
          p.opsDirty = true; // sub_merchant_id of its receivers may change
          evaluate(b, p, e.id);
        }
      }
    } else if (isEvent(DiscrepancyAccepted, e)) {
      const d = dataOf(DiscrepancyAccepted, e);
      let row = b.reportLevel.get(d.discrepancyId);
      if (!row) for (const p of b.payments.values()) row ??= p.discrepancies.get(d.discrepancyId);
      if (row && row.status !== 'accepted') {
        Object.assign(row, {
          status: 'accepted',
          accepted_at: d.acceptedAt,
          accepted_by: d.acceptedBy,
          accepted_note: d.note,
          accepted_by_event: e.id,
          updated_at: d.acceptedAt,
          updated_by_event: e.id,
        });
        markDisc(b, row);
      } else if (!row) {
        b.pendingAcceptances.push({ discrepancy_id: d.discrepancyId, accepted_by: d.acceptedBy, note: d.note, accepted_at: d.acceptedAt, event_id: e.id });
      }
    }
    runDue(b, e.id);
  }

  await writeBack(tx, b);
}

async function writeBack(tx: Tx, b: Batch): Promise<void> {
  const schema = b.ctx.schema;
  const s = q(schema);
  await tx.unsafe(`update ${s}.state set clock = $1 where id = 1`, [b.clock === null ? null : new Date(b.clock)] as never[]);
  if (b.newObservations.length) {
    await insertJson(tx, schema, 'observations', 'event_id uuid, pos_id text, payment_id text, obs jsonb',
      b.newObservations.map((o) => ({ event_id: o.eventId, pos_id: o.posId, payment_id: o.paymentId, obs: observationToJson(o) })));
  }
  if (b.newResends.length) {
    await insertJson(tx, schema, 'resends', 'event_id uuid, pos_id text, payment_id text, method text, requested_at timestamptz, outcome text',
      b.newResends.map((r) => ({ event_id: r.eventId, pos_id: r.posId, payment_id: r.paymentId, method: r.method, requested_at: r.requestedAt, outcome: r.outcome })));
  }
  if (b.newWindows.length) {
    await insertJson(tx, schema, 'sync_windows', 'event_id uuid, pos_id text, window_from timestamptz, window_to timestamptz, completed_at timestamptz, report_id text',
      b.newWindows.map((w) => ({ event_id: w.eventId, pos_id: w.posId, window_from: w.from, window_to: w.to, completed_at: w.completedAt, report_id: w.reportId })));
  }
  if (b.directoryDirty.size) {
    const rows = [...b.directoryDirty].map((id) => ({ sub_merchant_id: id, name: b.directory.get(id)!.name, event_id: b.directory.get(id)!.eventId }));
    await tx.unsafe(`delete from ${s}.directory where sub_merchant_id = any($1::text[])`, [rows.map((r) => r.sub_merchant_id)] as never[]);
    await insertJson(tx, schema, 'directory', 'sub_merchant_id text, name text, event_id uuid', rows);
  }
  if (b.pendingAcceptances.length) {
    await tx.unsafe(
      `insert into ${s}.pending_acceptances select * from jsonb_to_recordset($1::text::jsonb) as t(discrepancy_id uuid, accepted_by text, note text, accepted_at timestamptz, event_id uuid) on conflict do nothing`,
      [JSON.stringify(b.pendingAcceptances)] as never[],
    );
  }

  const changed = [...b.payments.values()].filter((p) => p.opsDirty);
  if (changed.length) {
    const args = [changed.map((p) => p.posId), changed.map((p) => p.paymentId)] as never[];
    const join = `using unnest($1::text[], $2::text[]) as k(pos_id, payment_id)`;
    await tx.unsafe(`delete from ${s}.operations o ${join} where o.pos_id = k.pos_id and o.payment_id = k.payment_id`, args);
    await tx.unsafe(`delete from ${s}.operation_receivers o ${join} where o.pos_id = k.pos_id and o.payment_id = k.payment_id`, args);
    const lookup = subMerchantLookup(b);
    const ops = changed.flatMap((p) => opsOf(p));
    await insertJson(tx, schema, 'operations', OP_COLUMNS, ops.map(opRow));
    await insertJson(
      tx,
      schema,
      'operation_receivers',
      RECEIVER_COLUMNS,
      ops.flatMap((op) =>
        (op.register?.receivers ?? []).map((r) => ({
          operation_key: op.key,
          pos_id: op.posId,
          payment_id: op.paymentId,
          method: op.method,
          receiver_name: r.receiverName,
          sub_merchant_id: lookup(r.receiverName) ?? null,
          status: r.row.current.status,
          currency: r.row.current.currency,
          receiver_amount: r.receiverAmount?.toString() ?? null,
          receiver_fee: r.receiverFee?.toString() ?? null,
          reserve_amount: r.reserveAmount?.toString() ?? null,
          share: r.share.toString(),
          event_ids: r.row.versions.map((v) => v.eventId),
        })),
      ),
    );
  }

  const dueChanged = [...b.payments.values()].filter((p) => p.dueDirty);
  if (dueChanged.length) {
    const args = [dueChanged.map((p) => p.posId), dueChanged.map((p) => p.paymentId)] as never[];
    await tx.unsafe(`delete from ${s}.due d using unnest($1::text[], $2::text[]) as k(pos_id, payment_id) where d.pos_id = k.pos_id and d.payment_id = k.payment_id`, args);
    const rows = dueChanged.filter((p) => p.due !== null).map((p) => ({ pos_id: p.posId, payment_id: p.paymentId, due_at: iso(p.due) }));
    if (rows.length) await insertJson(tx, schema, 'due', 'pos_id text, payment_id text, due_at timestamptz', rows);
  }

  if (b.dirtyDisc.size) {
    const rows = [...b.dirtyDisc.values()];
    await tx.unsafe(`delete from ${s}.discrepancies where id = any($1::uuid[])`, [rows.map((r) => r.id)] as never[]);
    await insertJson(tx, schema, 'discrepancies', DISC_COLUMNS, rows as unknown as Row[]);
  }
}

function views(ctx: ProjectionContext): readonly string[] {
  const s = q(ctx.schema);
  return [
    `create or replace view recon.operations as select ${names(OP_COLUMNS)} from ${s}.operations`,
    `create or replace view recon.operation_receivers as select ${names(RECEIVER_COLUMNS)} from ${s}.operation_receivers`,
    `create or replace view recon.discrepancies as select ${names(DISC_COLUMNS)} from ${s}.discrepancies`,
    `create or replace view recon.sync_windows as select event_id, pos_id, window_from, window_to, completed_at, report_id from ${s}.sync_windows`,
  ];
}

export const projection: Projection = { name: 'reconciliation', version: 1, setup, apply, views };
