import { dataOf, isEvent } from '../src/events/catalog';
import { RegisterCountMismatched, SyncWindowCompleted, WebhookResendRequested } from '../src/events/ingest-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import { DiscrepancyAccepted } from '../src/events/audit-events';
import {
  discrepancyId,
  findDiscrepancies,
  nextDue,
  reportWaits,
  type Finding,
  type ReportWait,
  type ResendRequest,
  type SyncWindow,
} from '../src/reconciliation/discrepancy-rules';
import {
  matchMethod,
  observationFromRow,
  observationOf,
  observationToRow,
  type MatchedOperation,
  type Observation,
  type SourceItem,
} from '../src/reconciliation/matching';
import { copyCell, copyText, createTextBuffer } from '../src/projection/copy-rows';
import type { DiscrepancyRecord, DiscrepancyStatus } from '../src/reconciliation/discrepancy-types';
import type { Projection, ProjectionContext, Tx } from '../src/projection/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * One read model for the operations view and the discrepancies, because both come from the same
 * matching of a payment's observations (src/ledger/matching.ts): the discrepancies are judged on the
 * operations as matched, and sharing one projection keeps them from ever disagreeing.
 *
 * Determinism: the projection never reads the wall clock. Its clock is the latest time carried by the
 * events so far (observedAt, receivedAt, completedAt, requestedAt, detectedAt, failedAt). At the end of
 * every append's transaction (events sharing `position.commit`; the runner never splits one between
 * batches) the payments it concerns, with the last of their events in it, and every payment whose grace
 * period or re-send grace has run out by the new clock, are judged again (named by the first of their
 * events in the append; those judged for their age alone, by the append's last event); so the rows (including
 * detection and resolution times and events) are the same whatever the batch sizes. Judging once per
 * append rather than after every event (version 4) spares the re-matching of a payment for each of the
 * rows, record and webhook of one sync page.
 *
 * Cost and memory: a batch loads the state of only the payments it touches (one query per table, keyed
 * by arrays of payment keys), keeps it in memory for the batch and drops it after; it writes back only
 * what changed, with COPY. Nothing is cached across batches, so memory does not grow with the log.
 */

/** A discrepancy row as the projection keeps it: the auditors' record, with its status typed and the update columns. */
interface DiscRow extends DiscrepancyRecord {
  status: DiscrepancyStatus;
  updated_at: string | null;
  updated_by_event: string;
}

/** A wait as the report_pending table keeps it: what a completed window must match to judge the payment again. */
type StoredWait = Pick<ReportWait, 'operationKey' | 'reportId' | 'dateTime'>;

interface PaymentState {
  readonly posId: string;
  readonly paymentId: string;
  readonly observations: Observation[];
  /** observations and (once matched) operations per method: a new observation re-matches its method only */
  readonly methods: Map<string, { observations: Observation[]; ops: MatchedOperation[] | null }>;
  readonly resends: ResendRequest[];
  readonly discrepancies: Map<string, DiscRow>;
  /** earliest dateTime or seenAt of any observation (ms): no operation is older, see `evaluate` */
  earliest: number | null;
  /** the payment's stored observations (text of a JSON array of observationToRow), null when none: no view rows yet */
  readonly stored: string | null;
  ops: MatchedOperation[] | null;
  opsDirty: boolean;
  due: number | null;
  /** a due row exists in the table */
  dueStored: boolean;
  dueDirty: boolean;
  /** operations whose judgement waits for a report (as of the last full judgement; see `evaluate`), one per operation, report and time */
  waits: readonly StoredWait[];
  /** report_pending rows exist in the table */
  waitsStored: boolean;
  waitsDirty: boolean;
  /** version 5 id (from the operation's rank) → discrepancy id, as of the latest judgement that found it (see `evaluate`) */
  readonly legacy: Map<string, string>;
  legacyStored: boolean;
  legacyDirty: boolean;
}

interface PendingAcceptance {
  readonly discrepancyId: string;
  readonly acceptedBy: string;
  readonly note: string;
  readonly acceptedAt: string;
  readonly eventId: string;
}

const paymentKey = (posId: string, paymentId: string) => `${posId}\u0000${paymentId}`;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const isoOf = (v: unknown): string | null =>
  v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();
const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

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

const names = (cols: string) =>
  cols
    .split(',')
    .map((c) => c.trim().split(/\s+/)[0]!)
    .join(', ');

// ---------------------------------------------------------------- bulk insert

/** A value for insertRows: text-like values and bigint, a boolean, a plain object (jsonb), or a text array. */
type Cell = string | number | bigint | boolean | null | undefined | readonly string[] | Record<string, unknown>;

const PLAIN_ELEMENT = /^[A-Za-z0-9_.:@+-]+$/;

/** A PostgreSQL array literal of text elements (quoted unless plainly safe; null elements as NULL). */
function arrayLiteral(xs: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    if (i) out += ',';
    if (x === null) out += 'NULL';
    else if (x.length && x.length < 64 && PLAIN_ELEMENT.test(x) && x.toUpperCase() !== 'NULL') out += x;
    else out += `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  return out + '}';
}

// Every column travels as text (the driver then has no type of its own to apply) and is cast in SQL.
function cell(v: Cell): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return arrayLiteral(v as readonly string[]);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** `name type, …` → the parts an unnest insert needs. */
function columnsOf(cols: string): Array<{ name: string; type: string }> {
  return cols.split(',').map((c) => {
    const [name, type] = c.trim().split(/\s+/) as [string, string];
    return { name, type };
  });
}

/** Inserts rows with COPY (text format): cheaper to build and to load than parameters cast in SQL. */
async function copyRowsInto(
  tx: Tx,
  schema: string,
  table: string,
  cols: string,
  rows: readonly (readonly Cell[])[],
): Promise<void> {
  const buf = createTextBuffer();
  for (const r of rows) {
    let line = '';
    for (let i = 0; i < r.length; i++) line += (i ? '\t' : '') + copyCell(cell(r[i]!));
    buf.add(line + '\n');
  }
  await copyText(
    tx,
    `${q(schema)}.${table}`,
    columnsOf(cols).map((c) => c.name),
    buf.chunks(),
  );
}

/**
 * Inserts rows: with COPY, or, for an upsert (`onConflict`), in one statement: one text[] parameter per
 * column, `insert … select from unnest(…)`, each column cast to its type (array-typed columns travel as
 * their literal: unnest would flatten them).
 */
async function insertRows(
  tx: Tx,
  schema: string,
  table: string,
  cols: string,
  rows: readonly (readonly Cell[])[],
  onConflict = '',
): Promise<void> {
  if (rows.length === 0) return;
  if (!onConflict) return copyRowsInto(tx, schema, table, cols, rows);
  const columns = columnsOf(cols);
  for (let i = 0; i < rows.length; i += 20_000) {
    const chunk = rows.slice(i, i + 20_000);
    // built here rather than by the driver: most cells (ids, amounts, times) need no quoting
    const params = columns.map((_, c) => arrayLiteral(chunk.map((r) => cell(r[c]))));
    const unnest = columns.map((_, k) => `$${k + 1}::text[]`).join(', ');
    const select = columns.map((c, k) => (c.type === 'text' ? `c${k}` : `c${k}::${c.type}`)).join(', ');
    await tx.unsafe(
      `insert into ${q(schema)}.${table} (${columns.map((c) => c.name).join(', ')}) select ${select} from unnest(${unnest}) as u(${columns.map((_, k) => `c${k}`).join(', ')}) ${onConflict}`,
      params as never[],
    );
  }
}

// ---------------------------------------------------------------- rows of the views

const big = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v);

function sourceCells(it: SourceItem | null, kind: 'register' | 'period' | 'webhook'): Cell[] {
  if (kind === 'register') {
    return [
      it !== null,
      it?.status,
      big(it?.amount),
      big(it?.grossAmount),
      it?.currency,
      big(it?.customerFee),
      big(it?.merchantFee),
      it?.dateTime,
      it ? it.eventIds : [],
    ];
  }
  if (kind === 'period') {
    return [
      it !== null,
      it?.status,
      big(it?.amount),
      it?.currency,
      big(it?.customerFee),
      big(it?.merchantFee),
      it?.dateTime,
      it ? it.eventIds : [],
    ];
  }
  return [
    it !== null,
    it?.status,
    big(it?.amount),
    it?.currency,
    big(it?.merchantFee),
    it?.dateTime,
    it ? it.eventIds : [],
  ];
}

function opCells(op: MatchedOperation): Cell[] {
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

function discCells(r: DiscRow): Cell[] {
  return [
    r.id,
    r.type,
    r.status,
    r.pos_id,
    r.payment_id,
    r.order_id,
    r.method,
    r.operation_key,
    r.receiver_name,
    r.sub_merchant_id,
    r.sub_merchant_ids,
    r.currency,
    r.occurred_at,
    r.values,
    r.evidence,
    r.detected_at,
    r.detected_by_event,
    r.resolved_at,
    r.resolved_by_event,
    r.accepted_at,
    r.accepted_by,
    r.accepted_note,
    r.accepted_by_event,
    r.updated_at,
    r.updated_by_event,
  ];
}

function discRowFromDb(r: Record<string, unknown>): DiscRow {
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

/** Structural equality of plain JSON values (keys in any order; undefined members count as absent). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

async function setup(tx: Tx, ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
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
    -- version 5 ids (operation keys by rank) of the discrepancies, as last judged: acceptances recorded against them still apply
    create table ${s}.legacy_ids (pos_id text not null, payment_id text not null, legacy_id uuid not null, id uuid not null);
    create index on ${s}.legacy_ids (pos_id, payment_id);
    create index on ${s}.legacy_ids (legacy_id);
    create table ${s}.pending_acceptances (discrepancy_id uuid primary key, accepted_by text not null, note text not null,
      accepted_at timestamptz not null, event_id uuid not null);
    -- keys and indexes only readers use are made when the build goes live (readerIndexes)
    create table ${s}.operations (${OP_COLUMNS});
    create index on ${s}.operations (pos_id, payment_id);
    create index on ${s}.operations (pos_id, occurred_at);
    create table ${s}.operation_receivers (${RECEIVER_COLUMNS});
    create index on ${s}.operation_receivers (receiver_name);
    create index on ${s}.operation_receivers (pos_id, payment_id);
    create table ${s}.discrepancies (${DISC_COLUMNS}, primary key (id));
    create index on ${s}.discrepancies (pos_id, payment_id);
    create index on ${s}.discrepancies (pos_id) where payment_id is null;
  `);
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

// ---------------------------------------------------------------- a batch in memory

/** Min-heap of (due time, payment) with lazy deletion: an entry counts only while it equals the payment's due. */
interface DueHeap {
  push(at: number, p: PaymentState): void;
  /** payments whose due ≤ clock, each once */
  takeReady(clock: number): PaymentState[];
}

function createDueHeap(): DueHeap {
  const h: Array<{ at: number; p: PaymentState }> = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= h[i]!.at) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  };
  return {
    push(at, p) {
      h.push({ at, p });
      up(h.length - 1);
    },
    takeReady(clock) {
      const out = new Set<PaymentState>();
      while (h.length && h[0]!.at <= clock) {
        const top = h[0]!;
        const last = h.pop()!;
        if (h.length) {
          h[0] = last;
          down(0);
        }
        if (top.p.due === top.at) out.add(top.p);
      }
      return [...out];
    },
  };
}

interface Batch {
  readonly ctx: ProjectionContext;
  readonly graceMs: number;
  clock: number | null;
  readonly payments: Map<string, PaymentState>;
  readonly windows: Map<string, SyncWindow[]>;
  /** report ids of `windows`, per pos */
  readonly completedReports: Map<string, Set<string>>;
  readonly newWindows: SyncWindow[];
  readonly newResends: Array<ResendRequest & { outcome: string }>;
  readonly newObservations: Observation[];
  /** sub_merchant_id → name */
  readonly directory: Map<string, { name: string; eventId: string }>;
  readonly directoryDirty: Set<string>;
  /** name → the id that last held it (a name given up by a rename) */
  readonly formerNames: Map<string, { id: string; eventId: string }>;
  readonly formerDirty: Set<string>;
  /** receiverName → sub_merchant_id, rebuilt when the directory changes */
  lookup: ((name: string) => string | undefined) | null;
  /** report-level discrepancies (report_count_mismatch) */
  readonly reportLevel: Map<string, DiscRow>;
  readonly dirtyDisc: Map<string, DiscRow>;
  /** ids of discrepancy rows present in the table before this batch */
  readonly storedDisc: Set<string>;
  /** acceptances waiting for their discrepancy: the stored ones and this batch's */
  readonly pending: Map<string, PendingAcceptance & { stored: boolean }>;
  readonly pendingDone: Set<string>;
  readonly due: DueHeap;
}

function subMerchantLookup(b: Batch): (name: string) => string | undefined {
  if (b.lookup) return b.lookup;
  const byName = new Map<string, string>();
  // Latest registration of a name wins; entries are sorted by id so ties never depend on load order.
  for (const [id, v] of [...b.directory.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
    if (!byName.has(v.name)) byName.set(v.name, id);
  // a name no id holds now maps to the id that last held it, as in the journal's views and the statements
  b.lookup = (name) => byName.get(name.trim()) ?? b.formerNames.get(name.trim())?.id;
  return b.lookup;
}

/** The payment's operations (matchPayment), re-matching only the methods that got new observations. */
function opsOf(p: PaymentState): MatchedOperation[] {
  if (p.ops !== null) return p.ops;
  const ops: MatchedOperation[] = [];
  for (const method of [...p.methods.keys()].sort()) {
    const m = p.methods.get(method)!;
    m.ops ??= matchMethod(m.observations);
    ops.push(...m.ops);
  }
  p.ops = ops;
  return ops;
}

function timeOf(o: Observation): number | null {
  const a = o.dateTime === null ? NaN : Date.parse(o.dateTime);
  const b = o.seenAt === null ? NaN : Date.parse(o.seenAt);
  if (Number.isNaN(a)) return Number.isNaN(b) ? null : b;
  return Number.isNaN(b) ? a : Math.min(a, b);
}

function addObservation(p: PaymentState, o: Observation): void {
  p.observations.push(o);
  const m = p.methods.get(o.method);
  if (m) {
    m.observations.push(o);
    m.ops = null;
  } else p.methods.set(o.method, { observations: [o], ops: null });
  const t = timeOf(o);
  if (t !== null && (p.earliest === null || t < p.earliest)) p.earliest = t;
  p.ops = null;
}

function addCompletedReport(b: Batch, posId: string, reportId: string): void {
  const set = b.completedReports.get(posId);
  if (set) set.add(reportId);
  else b.completedReports.set(posId, new Set([reportId]));
}

function markDisc(b: Batch, r: DiscRow): void {
  b.dirtyDisc.set(r.id, r);
}

function accept(r: DiscRow, a: PendingAcceptance, updatedAt: string | null, updatedBy: string): void {
  Object.assign(r, {
    status: 'accepted',
    accepted_at: a.acceptedAt,
    accepted_by: a.acceptedBy,
    accepted_note: a.note,
    accepted_by_event: a.eventId,
    updated_at: updatedAt,
    updated_by_event: updatedBy,
  });
}

function applyFindings(
  b: Batch,
  existing: Map<string, DiscRow>,
  findings: Finding[],
  eventId: string,
  scopeOpen: (r: DiscRow) => boolean,
): void {
  const now = iso(b.clock);
  const seen = new Set<string>();
  for (const f of findings) {
    seen.add(f.id);
    const r = existing.get(f.id);
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
        evidence: [...f.evidence],
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
      // An auditor's acceptance that arrived before the discrepancy existed (a rebuild with other rules,
      // or an earlier build) takes effect as soon as it appears: detected and accepted, evidence frozen.
      const pendingId = b.pending.has(f.id) ? f.id : b.pending.has(f.legacyId) ? f.legacyId : null;
      if (pendingId !== null) takePending(b, row, pendingId, now, eventId);
      existing.set(f.id, row);
      markDisc(b, row);
      continue;
    }
    if (r.status === 'accepted') continue; // an auditor's decision freezes the evidence
    // accepted, before this build knew it by that id, under the id version 5 gives it now: updated, then frozen
    const legacyAccepted = b.pending.has(f.legacyId);
    const changed =
      r.status === 'resolved' ||
      r.sub_merchant_id !== subMerchantId ||
      r.order_id !== f.orderId ||
      r.currency !== f.currency ||
      r.occurred_at !== f.occurredAt ||
      !sameJson(r.evidence, f.evidence) ||
      !sameJson(r.sub_merchant_ids, f.subMerchantIds) ||
      !sameJson(r.values, values);
    if (changed) {
      Object.assign(r, {
        status: 'open',
        resolved_at: null,
        resolved_by_event: null,
        values,
        evidence: [...f.evidence],
        sub_merchant_id: subMerchantId,
        sub_merchant_ids: [...f.subMerchantIds],
        order_id: f.orderId,
        currency: f.currency,
        occurred_at: f.occurredAt,
        updated_at: now,
        updated_by_event: eventId,
      });
    }
    if (legacyAccepted) takePending(b, r, f.legacyId, now, eventId);
    if (changed || legacyAccepted) markDisc(b, r);
  }
  for (const r of existing.values()) {
    if (r.status !== 'open' || seen.has(r.id) || !scopeOpen(r)) continue;
    // Later data made the sources agree: resolved, by this event, at the clock's time.
    Object.assign(r, {
      status: 'resolved',
      resolved_at: now,
      resolved_by_event: eventId,
      updated_at: now,
      updated_by_event: eventId,
    });
    markDisc(b, r);
  }
}

/** Applies the acceptance waiting under `id` (a discrepancy id, or a version 5 one) to this row. */
function takePending(b: Batch, row: DiscRow, id: string, now: string | null, eventId: string): void {
  const pending = b.pending.get(id)!;
  accept(row, pending, now, eventId);
  b.pending.delete(id);
  if (pending.stored) b.pendingDone.add(id);
}

function setDue(b: Batch, p: PaymentState, due: number | null): void {
  if (due === p.due) return;
  p.due = due;
  p.dueDirty = true;
  if (due !== null) b.due.push(due, p);
}

/**
 * Judges one payment at the clock. When no operation can be older than the grace period yet (every
 * operation's time is one of its observations' dateTime or seenAt, so none is earlier than `earliest`),
 * the rules find nothing and the payment has no open discrepancy (one would have needed an operation that
 * old, and the clock only moves forward): the matching is skipped and the payment is due again at
 * `earliest + grace` (or an earlier re-send grace), where it is judged in full. Judging a payment when
 * nothing but the clock changed never changes a row unless something came of age, so this extra visit
 * changes no result.
 */
function evaluate(b: Batch, p: PaymentState, eventId: string): void {
  if (b.clock === null || p.earliest === null || b.clock < p.earliest + b.graceMs) {
    let due = p.earliest === null ? null : p.earliest + b.graceMs;
    for (const r of p.resends) {
      const t = Date.parse(r.requestedAt);
      if ((b.clock === null || t > b.clock) && (due === null || t < due)) due = t;
    }
    setDue(b, p, due);
    return;
  }
  const ops = opsOf(p);
  const rules = {
    now: b.clock,
    graceMs: b.graceMs,
    windows: b.windows.get(p.posId) ?? [],
    completedReports: b.completedReports.get(p.posId) ?? new Set<string>(),
    resends: p.resends,
    subMerchantOf: subMerchantLookup(b),
  };
  const findings = findDiscrepancies(ops, rules);
  for (const f of findings) {
    if (p.legacy.get(f.legacyId) === f.id) continue;
    p.legacy.set(f.legacyId, f.id);
    p.legacyDirty = true;
  }
  const waits = reportWaits(ops, rules);
  if (waits.length === 0) applyFindings(b, p.discrepancies, findings, eventId, () => true);
  else {
    // an operation still waiting for a report keeps its judgement of the waiting types as it was (neither
    // resolved nor re-opened): split_mismatch for a split wait, missing_in_* for a missing wait
    const split = new Set(waits.filter((w) => w.judges === 'split').map((w) => w.operationKey));
    const missing = new Set(waits.filter((w) => w.judges === 'missing').map((w) => w.operationKey));
    applyFindings(b, p.discrepancies, findings, eventId, (r) =>
      r.type === 'split_mismatch'
        ? !split.has(r.operation_key)
        : r.type === 'missing_in_report' || r.type === 'missing_in_period'
          ? !missing.has(r.operation_key)
          : true,
    );
  }
  setWaits(p, waits);
  setDue(b, p, nextDue(ops, p.resends, b.clock, b.graceMs, waits));
}

const waitKey = (w: StoredWait) => `${w.operationKey}\u0000${w.reportId}\u0000${w.dateTime ?? ''}`;
const waitsKey = (ws: readonly StoredWait[]) => [...new Set(ws.map(waitKey))].sort().join('\u0001');

/** Keeps the payment's waits (one per operation, report and time: what the table stores); marks them for writing when they changed. */
function setWaits(p: PaymentState, waits: readonly ReportWait[]): void {
  if (waits.length === 0 && p.waits.length === 0) return;
  if (waitsKey(waits) === waitsKey(p.waits)) return;
  const seen = new Set<string>();
  p.waits = waits
    .filter((w) => !seen.has(waitKey(w)) && !!seen.add(waitKey(w)))
    .map((w) => ({ operationKey: w.operationKey, reportId: w.reportId, dateTime: w.dateTime }));
  p.waitsDirty = true;
}

/** Does this completed window end one of the payment's waits? (its report, or a window covering the row) */
function endsWait(p: PaymentState, w: SyncWindow, from: number, to: number): boolean {
  if (p.posId !== w.posId) return false;
  for (const x of p.waits) {
    if (x.reportId === w.reportId) return true;
    if (x.dateTime !== null) {
      const t = Date.parse(x.dateTime);
      if (t >= from && t < to) return true;
    }
  }
  return false;
}

function runDue(b: Batch, eventId: string): void {
  if (b.clock === null) return;
  for (const p of b.due.takeReady(b.clock)) if (p.due !== null && p.due <= b.clock) evaluate(b, p, eventId);
}

const inWindow = (op: MatchedOperation, from: number, to: number) => {
  if (op.occurredAt === null) return false;
  const t = Date.parse(op.occurredAt);
  return t >= from && t < to;
};

/** Could one of the payment's operations have its time in [from, to)? (Its time is one of the observations' times.) */
function mayHaveTimeIn(p: PaymentState, from: number, to: number): boolean {
  for (const o of p.observations) {
    for (const t of [o.dateTime, o.seenAt]) {
      if (t === null) continue;
      const ms = Date.parse(t);
      if (ms >= from && ms < to) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- apply

type Want = (posId: string, paymentId: string) => void;

async function loadPayments(
  tx: Tx,
  s: string,
  b: Batch,
  keys: Array<[string, string]>,
  storedDue: Map<string, number>,
): Promise<void> {
  const posIds = keys.map((k) => k[0]);
  const paymentIds = keys.map((k) => k[1]);
  const obs = new Map<string, string>();
  if (keys.length) {
    const join = `join unnest($1::text[], $2::text[]) as k(pos_id, payment_id) using (pos_id, payment_id)`;
    const args = [posIds, paymentIds] as never[];
    // independent reads, sent together (one wait for the database instead of four)
    const [obsRows, resendRows, waitRows, discRows, legacyRows] = await Promise.all([
      tx.unsafe<{ pos_id: string; payment_id: string; obs: string }[]>(
        `select pos_id, payment_id, obs from ${s}.observations ${join}`,
        args,
      ),
      tx.unsafe<{ pos_id: string; payment_id: string; method: string; requested_at: Date; event_id: string }[]>(
        `select pos_id, payment_id, method, requested_at, event_id::text from ${s}.resends ${join} order by requested_at, event_id`,
        args,
      ),
      tx.unsafe<
        { pos_id: string; payment_id: string; operation_key: string; report_id: string; date_time: Date | null }[]
      >(`select pos_id, payment_id, operation_key, report_id, date_time from ${s}.report_pending ${join}`, args),
      tx.unsafe<Record<string, unknown>[]>(`select d.* from ${s}.discrepancies d ${join}`, args),
      tx.unsafe<{ pos_id: string; payment_id: string; legacy_id: string; id: string }[]>(
        `select pos_id, payment_id, legacy_id::text, id::text from ${s}.legacy_ids ${join}`,
        args,
      ),
    ]);
    for (const r of obsRows) {
      obs.set(paymentKey(r.pos_id, r.payment_id), r.obs);
    }
    for (const [posId, paymentId] of keys) {
      const k = paymentKey(posId, paymentId);
      const stored = obs.get(k);
      const p: PaymentState = {
        posId,
        paymentId,
        observations: [],
        methods: new Map(),
        resends: [],
        discrepancies: new Map(),
        earliest: null,
        stored: stored ?? null,
        ops: null,
        opsDirty: false,
        due: null,
        dueStored: false,
        dueDirty: false,
        waits: [],
        waitsStored: false,
        waitsDirty: false,
        legacy: new Map(),
        legacyStored: false,
        legacyDirty: false,
      };
      if (stored !== undefined)
        for (const row of JSON.parse(stored) as unknown[][])
          addObservation(p, observationFromRow(posId, paymentId, row));
      const due = storedDue.get(k);
      if (due !== undefined) {
        p.due = due;
        p.dueStored = true;
        b.due.push(due, p);
      }
      b.payments.set(k, p);
    }
    for (const r of resendRows) {
      b.payments.get(paymentKey(r.pos_id, r.payment_id))!.resends.push({
        posId: r.pos_id,
        paymentId: r.payment_id,
        method: r.method,
        requestedAt: r.requested_at.toISOString(),
        eventId: r.event_id,
      });
    }
    const waits = new Map<string, StoredWait[]>();
    for (const r of waitRows) {
      const k = paymentKey(r.pos_id, r.payment_id);
      const list = waits.get(k) ?? [];
      list.push({
        operationKey: r.operation_key,
        reportId: r.report_id,
        dateTime: r.date_time === null ? null : r.date_time.toISOString(),
      });
      waits.set(k, list);
    }
    for (const [k, list] of waits) {
      const p = b.payments.get(k)!;
      p.waits = list;
      p.waitsStored = true;
    }
    for (const r of legacyRows) {
      const p = b.payments.get(paymentKey(r.pos_id, r.payment_id))!;
      p.legacy.set(r.legacy_id, r.id);
      p.legacyStored = true;
    }
    for (const r of discRows) {
      const d = discRowFromDb(r);
      b.storedDisc.add(d.id);
      b.payments.get(paymentKey(d.pos_id, d.payment_id!))!.discrepancies.set(d.id, d);
    }
  }
}

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const s = q(ctx.schema);
  // reads that do not depend on the batch, sent together
  const [[st], directoryRows, formerRows, pendingRows, windowRows] = await Promise.all([
    tx.unsafe<{ clock: Date | null }[]>(`select clock from ${s}.state where id = 1`),
    tx.unsafe<{ sub_merchant_id: string; name: string; event_id: string }[]>(
      `select sub_merchant_id, name, event_id::text from ${s}.directory`,
    ),
    tx.unsafe<{ name: string; sub_merchant_id: string; event_id: string }[]>(
      `select name, sub_merchant_id, event_id::text from ${s}.former_names`,
    ),
    tx.unsafe<{ discrepancy_id: string; accepted_by: string; note: string; accepted_at: Date; event_id: string }[]>(
      `select discrepancy_id::text, accepted_by, note, accepted_at, event_id::text from ${s}.pending_acceptances`,
    ),
    tx.unsafe<
      { pos_id: string; window_from: Date; window_to: Date; completed_at: Date; report_id: string; event_id: string }[]
    >(
      `select pos_id, window_from, window_to, completed_at, report_id, event_id::text from ${s}.sync_windows order by completed_at, event_id`,
    ),
  ]);
  const startClock = st?.clock ? st.clock.getTime() : null;
  let maxClock = startClock;
  for (const e of events) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
  }

  // What this batch may touch, so that everything it reads is loaded once.
  const wanted = new Map<string, [string, string]>();
  const want: Want = (posId, paymentId) => {
    const k = paymentKey(posId, paymentId);
    if (!wanted.has(k)) wanted.set(k, [posId, paymentId]);
  };
  const batchWindows: Array<{ posId: string; from: string; to: string; reportId: string }> = [];
  const receiverNames = new Set<string>();
  const acceptedIds: string[] = [];
  let reportLevelNeeded = false;
  let directoryEvents = false;
  const observed = events.map(observationOf);
  for (const [i, e] of events.entries()) {
    const o = observed[i];
    if (o) want(o.posId, o.paymentId);
    else if (isEvent(WebhookResendRequested, e)) {
      const d = dataOf(WebhookResendRequested, e);
      want(d.posId, d.paymentId);
    } else if (isEvent(SyncWindowCompleted, e)) {
      const d = dataOf(SyncWindowCompleted, e);
      batchWindows.push({ posId: d.posId, ...d.window, reportId: d.reportId });
      reportLevelNeeded = true;
    } else if (isEvent(RegisterCountMismatched, e)) reportLevelNeeded = true;
    else if (isEvent(SubMerchantRegistered, e)) {
      receiverNames.add(dataOf(SubMerchantRegistered, e).name.trim());
      directoryEvents = true;
    } else if (isEvent(DiscrepancyAccepted, e)) {
      acceptedIds.push(dataOf(DiscrepancyAccepted, e).discrepancyId);
      reportLevelNeeded = true;
    }
  }

  const directory = new Map<string, { name: string; eventId: string }>();
  for (const r of directoryRows) {
    directory.set(r.sub_merchant_id, { name: r.name, eventId: r.event_id });
  }
  if (directoryEvents) {
    for (const e of events) {
      if (!isEvent(SubMerchantRegistered, e)) continue;
      const old = directory.get(dataOf(SubMerchantRegistered, e).subMerchantId);
      if (old) receiverNames.add(old.name); // a renamed sub-merchant: its rows under the old name are judged again (former_names)
    }
  }

  const storedDue = new Map<string, number>();
  if (maxClock !== null) {
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string; due_at: Date }[]>(
      `select pos_id, payment_id, due_at from ${s}.due where due_at <= $1`,
      [new Date(maxClock)] as never[],
    )) {
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
    // operations waiting for this report (or for any window covering their rows): judged when it completes
    const waiting = await tx.unsafe<{ pos_id: string; payment_id: string }[]>(
      `select distinct pos_id, payment_id from ${s}.report_pending
       where pos_id = $1 and (report_id = $2 or (date_time >= $3 and date_time < $4))`,
      [w.posId, w.reportId, w.from, w.to] as never[],
    );
    for (const r of waiting) want(r.pos_id, r.payment_id);
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
      `select pos_id, payment_id from ${s}.discrepancies where id = any($1::uuid[])
       union select pos_id, payment_id from ${s}.legacy_ids where legacy_id = any($1::uuid[])`,
      [acceptedIds] as never[],
    );
    for (const r of rows) if (r.payment_id !== null) want(r.pos_id, r.payment_id);
  }

  const keys = [...wanted.values()];
  if (keys.length) {
    // every due row of the wanted payments (not only the ripe ones): a changed due replaces it
    for (const r of await tx.unsafe<{ pos_id: string; payment_id: string; due_at: Date }[]>(
      `select pos_id, payment_id, due_at from ${s}.due join unnest($1::text[], $2::text[]) as k(pos_id, payment_id) using (pos_id, payment_id)`,
      [keys.map((k) => k[0]), keys.map((k) => k[1])] as never[],
    )) {
      storedDue.set(paymentKey(r.pos_id, r.payment_id), r.due_at.getTime());
    }
  }

  const pending = new Map<string, PendingAcceptance & { stored: boolean }>();
  for (const r of pendingRows) {
    pending.set(r.discrepancy_id, {
      discrepancyId: r.discrepancy_id,
      acceptedBy: r.accepted_by,
      note: r.note,
      acceptedAt: r.accepted_at.toISOString(),
      eventId: r.event_id,
      stored: true,
    });
  }

  const b: Batch = {
    ctx,
    graceMs: ctx.graceHours * 3_600_000,
    clock: startClock,
    payments: new Map(),
    windows: new Map(),
    completedReports: new Map(),
    newWindows: [],
    newResends: [],
    newObservations: [],
    directory,
    directoryDirty: new Set(),
    formerNames: new Map(formerRows.map((r) => [r.name, { id: r.sub_merchant_id, eventId: r.event_id }])),
    formerDirty: new Set(),
    lookup: null,
    reportLevel: new Map(),
    dirtyDisc: new Map(),
    storedDisc: new Set(),
    pending,
    pendingDone: new Set(),
    due: createDueHeap(),
  };

  await loadPayments(tx, s, b, keys, storedDue);
  for (const r of windowRows) {
    const list = b.windows.get(r.pos_id) ?? [];
    list.push({
      posId: r.pos_id,
      from: r.window_from.toISOString(),
      to: r.window_to.toISOString(),
      completedAt: r.completed_at.toISOString(),
      reportId: r.report_id,
      eventId: r.event_id,
    });
    b.windows.set(r.pos_id, list);
    addCompletedReport(b, r.pos_id, r.report_id);
  }
  if (reportLevelNeeded) {
    for (const r of await tx.unsafe<Record<string, unknown>[]>(
      `select * from ${s}.discrepancies where payment_id is null`,
    )) {
      const d = discRowFromDb(r);
      b.storedDisc.add(d.id);
      b.reportLevel.set(d.id, d);
    }
  }

  // Replay the batch event by event; the payments an append touched are judged once, at its end, named
  // by the first of the append's events that touched them.
  const toJudge = new Map<PaymentState, string>();
  const judge = (p: PaymentState, eventId: string) => {
    if (!toJudge.has(p)) toJudge.set(p, eventId);
  };
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (b.clock === null || t > b.clock)) b.clock = t;
    const o = observed[i];
    if (o) {
      const p = b.payments.get(paymentKey(o.posId, o.paymentId))!;
      addObservation(p, o);
      p.opsDirty = true;
      b.newObservations.push(o);
      judge(p, e.id);
    } else if (isEvent(WebhookResendRequested, e)) {
      const d = dataOf(WebhookResendRequested, e);
      const p = b.payments.get(paymentKey(d.posId, d.paymentId))!;
      const r = {
        posId: d.posId,
        paymentId: d.paymentId,
        method: d.operation,
        requestedAt: d.requestedAt,
        eventId: e.id,
      };
      p.resends.push(r);
      b.newResends.push({ ...r, outcome: d.outcome });
      judge(p, e.id);
    } else if (isEvent(SyncWindowCompleted, e)) {
      const d = dataOf(SyncWindowCompleted, e);
      const w: SyncWindow = {
        posId: d.posId,
        from: d.window.from,
        to: d.window.to,
        completedAt: d.completedAt,
        reportId: d.reportId,
        eventId: e.id,
      };
      const list = b.windows.get(d.posId) ?? [];
      list.push(w);
      b.windows.set(d.posId, list);
      addCompletedReport(b, d.posId, d.reportId);
      b.newWindows.push(w);
      const from = Date.parse(w.from);
      const to = Date.parse(w.to);
      for (const p of b.payments.values()) {
        if (p.posId !== d.posId) continue;
        if (endsWait(p, w, from, to)) judge(p, e.id);
        else if (
          mayHaveTimeIn(p, from, to) &&
          opsOf(p).some((op) => inWindow(op, from, to) && !(op.register && op.period))
        )
          judge(p, e.id);
      }
      // A later report of the same window whose count matched resolves the window's count mismatches.
      const mismatched = [...b.reportLevel.values()].some(
        (r) => (r.values as { report_id?: string }).report_id === d.reportId,
      );
      if (!mismatched) {
        const same = [...b.reportLevel.values()].filter((r) => {
          const v = r.values as { window?: { from: string; to: string } };
          return r.pos_id === d.posId && v.window?.from === d.window.from && v.window?.to === d.window.to;
        });
        applyFindings(b, new Map(same.map((r) => [r.id, r])), [], e.id, () => true);
      }
    } else if (isEvent(RegisterCountMismatched, e)) {
      const d = dataOf(RegisterCountMismatched, e);
      const key = `report:${d.posId}:${d.reportId}`;
      const id = discrepancyId('report_count_mismatch', key, null);
      const f: Finding = {
        id,
        legacyId: id, // a report's key has no rank: version 5 gave the same id
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
        values: {
          report_id: d.reportId,
          window: d.window,
          announced_count: d.announcedCount,
          received_count: d.receivedCount,
        },
        evidence: [e.id],
      };
      const existing = new Map([...b.reportLevel.entries()].filter(([id]) => id === f.id));
      applyFindings(b, existing, [f], e.id, () => false);
      for (const [id, r] of existing) b.reportLevel.set(id, r);
    } else if (isEvent(SubMerchantRegistered, e)) {
      const d = dataOf(SubMerchantRegistered, e);
      const old = b.directory.get(d.subMerchantId);
      const affected = new Set([d.name.trim(), ...(old ? [old.name] : [])]);
      b.directory.set(d.subMerchantId, { name: d.name.trim(), eventId: e.id });
      b.directoryDirty.add(d.subMerchantId);
      if (old && old.name !== d.name.trim()) {
        b.formerNames.set(old.name, { id: d.subMerchantId, eventId: e.id });
        b.formerDirty.add(old.name);
      }
      b.lookup = null;
      for (const p of b.payments.values()) {
        if (!p.observations.some((o) => o.receiverName !== null && affected.has(o.receiverName))) continue;
        if (opsOf(p).some((op) => op.register?.receivers.some((r) => affected.has(r.receiverName)))) {
          p.opsDirty = true; // sub_merchant_id of its receivers may change
          judge(p, e.id);
        }
      }
    } else if (isEvent(DiscrepancyAccepted, e)) {
      const d = dataOf(DiscrepancyAccepted, e);
      let row = b.reportLevel.get(d.discrepancyId);
      if (!row) for (const p of b.payments.values()) row ??= p.discrepancies.get(d.discrepancyId);
      // recorded against a version 5 id (operation key by rank): the discrepancy that id names as last judged
      if (!row) {
        for (const p of b.payments.values()) {
          const id = p.legacy.get(d.discrepancyId);
          if (id !== undefined) row ??= p.discrepancies.get(id);
        }
      }
      const a = {
        discrepancyId: d.discrepancyId,
        acceptedBy: d.acceptedBy,
        note: d.note,
        acceptedAt: d.acceptedAt,
        eventId: e.id,
      };
      if (row && row.status !== 'accepted') {
        accept(row, a, d.acceptedAt, e.id);
        markDisc(b, row);
      } else if (!row && !b.pending.has(d.discrepancyId)) {
        b.pending.set(d.discrepancyId, { ...a, stored: false });
      }
    }
    const next = events[i + 1];
    if (next === undefined || next.position.commit !== e.position.commit) {
      for (const [p, eventId] of toJudge) evaluate(b, p, eventId);
      toJudge.clear();
      runDue(b, e.id);
    }
  }

  await writeBack(tx, b);
}

// ---------------------------------------------------------------- write back what changed

/** Deletes the rows of these payments from one of the build's tables (nothing to do for none). */
async function deletePayments(tx: Tx, schema: string, table: string, payments: readonly PaymentState[]): Promise<void> {
  if (payments.length === 0) return;
  await tx.unsafe(
    `delete from ${schema}.${table} d using unnest($1::text[], $2::text[]) as k(pos_id, payment_id) where d.pos_id = k.pos_id and d.payment_id = k.payment_id`,
    [payments.map((p) => p.posId), payments.map((p) => p.paymentId)] as never[],
  );
}

async function writeBack(tx: Tx, b: Batch): Promise<void> {
  const schema = b.ctx.schema;
  const s = q(schema);
  await tx.unsafe(`update ${s}.state set clock = $1 where id = 1`, [
    b.clock === null ? null : new Date(b.clock),
  ] as never[]);
  // a payment's new observations are appended to its stored array (written whole: one row per payment)
  const added = new Map<PaymentState, string[]>();
  for (const o of b.newObservations) {
    const p = b.payments.get(paymentKey(o.posId, o.paymentId))!;
    const list = added.get(p);
    if (list) list.push(observationToRow(o));
    else added.set(p, [observationToRow(o)]);
  }
  const firstSeen = [...added].filter(([p]) => p.stored === null);
  const seenBefore = [...added].filter(([p]) => p.stored !== null);
  await insertRows(
    tx,
    schema,
    'observations',
    'pos_id text, payment_id text, obs text',
    firstSeen.map(([p, rows]) => [p.posId, p.paymentId, `[${rows.join(',')}]`]),
  );
  await insertRows(
    tx,
    schema,
    'observations',
    'pos_id text, payment_id text, obs text',
    seenBefore.map(([p, rows]) => [p.posId, p.paymentId, `${p.stored!.slice(0, -1)},${rows.join(',')}]`]),
    'on conflict (pos_id, payment_id) do update set obs = excluded.obs',
  );
  await insertRows(
    tx,
    schema,
    'resends',
    'event_id uuid, pos_id text, payment_id text, method text, requested_at timestamptz, outcome text',
    b.newResends.map((r) => [r.eventId, r.posId, r.paymentId, r.method, r.requestedAt, r.outcome]),
  );
  await insertRows(
    tx,
    schema,
    'sync_windows',
    'event_id uuid, pos_id text, window_from timestamptz, window_to timestamptz, completed_at timestamptz, report_id text',
    b.newWindows.map((w) => [w.eventId, w.posId, w.from, w.to, w.completedAt, w.reportId]),
  );
  if (b.formerDirty.size) {
    const names = [...b.formerDirty];
    await tx.unsafe(`delete from ${s}.former_names where name = any($1::text[])`, [names] as never[]);
    await insertRows(
      tx,
      schema,
      'former_names',
      'name text, sub_merchant_id text, event_id uuid',
      names.map((n) => [n, b.formerNames.get(n)!.id, b.formerNames.get(n)!.eventId]),
    );
  }
  if (b.directoryDirty.size) {
    const ids = [...b.directoryDirty];
    await tx.unsafe(`delete from ${s}.directory where sub_merchant_id = any($1::text[])`, [ids] as never[]);
    await insertRows(
      tx,
      schema,
      'directory',
      'sub_merchant_id text, name text, event_id uuid',
      ids.map((id) => [id, b.directory.get(id)!.name, b.directory.get(id)!.eventId]),
    );
  }
  if (b.pendingDone.size)
    await tx.unsafe(`delete from ${s}.pending_acceptances where discrepancy_id = any($1::uuid[])`, [
      [...b.pendingDone],
    ] as never[]);
  const newPending = [...b.pending.values()].filter((a) => !a.stored);
  await insertRows(
    tx,
    schema,
    'pending_acceptances',
    'discrepancy_id uuid, accepted_by text, note text, accepted_at timestamptz, event_id uuid',
    newPending.map((a) => [a.discrepancyId, a.acceptedBy, a.note, a.acceptedAt, a.eventId]),
  );

  const changed = [...b.payments.values()].filter((p) => p.opsDirty);
  const replaced = changed.filter((p) => p.stored !== null);
  await deletePayments(tx, s, 'operations', replaced);
  await deletePayments(tx, s, 'operation_receivers', replaced);
  if (changed.length) {
    const lookup = subMerchantLookup(b);
    const opRows: Cell[][] = [];
    const receiverRows: Cell[][] = [];
    for (const p of changed) {
      for (const op of opsOf(p)) {
        opRows.push(opCells(op));
        for (const r of op.register?.receivers ?? []) {
          receiverRows.push([
            op.key,
            op.posId,
            op.paymentId,
            op.method,
            r.receiverName,
            lookup(r.receiverName) ?? null,
            r.row.current.status,
            r.row.current.currency,
            r.receiverAmount,
            r.receiverFee,
            r.reserveAmount,
            r.share,
            r.row.versions.map((v) => v.eventId),
          ]);
        }
      }
    }
    await insertRows(tx, schema, 'operations', OP_COLUMNS, opRows);
    await insertRows(tx, schema, 'operation_receivers', RECEIVER_COLUMNS, receiverRows);
  }

  const waitsChanged = [...b.payments.values()].filter((p) => p.waitsDirty);
  const waitsDropped = waitsChanged.filter((p) => p.waitsStored);
  await deletePayments(tx, s, 'report_pending', waitsDropped);
  await insertRows(
    tx,
    schema,
    'report_pending',
    'pos_id text, payment_id text, operation_key text, report_id text, date_time timestamptz',
    waitsChanged.flatMap((p) => p.waits.map((w) => [p.posId, p.paymentId, w.operationKey, w.reportId, w.dateTime])),
  );

  const legacyChanged = [...b.payments.values()].filter((p) => p.legacyDirty);
  const legacyDropped = legacyChanged.filter((p) => p.legacyStored);
  await deletePayments(tx, s, 'legacy_ids', legacyDropped);
  await insertRows(
    tx,
    schema,
    'legacy_ids',
    'pos_id text, payment_id text, legacy_id uuid, id uuid',
    legacyChanged.flatMap((p) => [...p.legacy].map(([legacyId, id]) => [p.posId, p.paymentId, legacyId, id])),
  );

  const dueChanged = [...b.payments.values()].filter((p) => p.dueDirty);
  const dueDropped = dueChanged.filter((p) => p.dueStored);
  await deletePayments(tx, s, 'due', dueDropped);
  await insertRows(
    tx,
    schema,
    'due',
    'pos_id text, payment_id text, due_at timestamptz',
    dueChanged.filter((p) => p.due !== null).map((p) => [p.posId, p.paymentId, iso(p.due)]),
  );

  if (b.dirtyDisc.size) {
    const rows = [...b.dirtyDisc.values()];
    const stored = rows.filter((r) => b.storedDisc.has(r.id)).map((r) => r.id);
    if (stored.length)
      await tx.unsafe(`delete from ${s}.discrepancies where id = any($1::uuid[])`, [stored] as never[]);
    await insertRows(tx, schema, 'discrepancies', DISC_COLUMNS, rows.map(discCells));
  }
}

function views(ctx: ProjectionContext): readonly string[] {
  const s = q(ctx.schema);
  return [
    ...readerIndexes(s),
    `create or replace view recon.operations as select ${names(OP_COLUMNS)} from ${s}.operations`,
    `create or replace view recon.operation_receivers as select ${names(RECEIVER_COLUMNS)} from ${s}.operation_receivers`,
    `create or replace view recon.discrepancies as select ${names(DISC_COLUMNS)} from ${s}.discrepancies`,
    `create or replace view recon.sync_windows as select event_id, pos_id, window_from, window_to, completed_at, report_id from ${s}.sync_windows`,
  ];
}

// v6: values of duplicate/unknown_sub_merchant per source; of two final webhooks the one processed last; items claim operations in time order; missing_in_* waits for its rows' reports like split_mismatch (report_pending), a wait also ends at observedAt + grace; operation keys by time, not ordinal (legacy_ids maps version 5 ids for acceptances); a renamed sub-merchant keeps its former name (former_names), so its rows do not turn unknown_sub_merchant
export const projection: Projection = { name: 'reconciliation', version: 6, setup, apply, views };
