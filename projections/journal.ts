import { ident } from '../src/db/identifier';
import { copyCell, copyRows, copyText, createTextBuffer, type TextBuffer } from '../src/projector/copy-rows';
import { RegisterRecordObserved, type NormalizedRegisterRecord } from '../src/events/ingest-events';
import { reportIdOf, secondRowOfReport } from '../src/events/register-row';
import { DEFAULT_RESERVE_HOLD_DAYS, SubMerchantRegistered } from '../src/events/ledger-events';
import { entriesFor, netOf, rowFacts, UnbalancedEntryError, type DraftLine, type RowFacts } from '../src/journal-rules';
import { JOURNAL_LINE_COLUMNS } from '../src/ledger/bank-entries';
import { type Effect, effectOf, type InForce, inForce, sameEntries } from '../src/ledger/register-effects';
import { bookBankCharges } from '../src/ledger/charge-bookings';
import { bookPayouts, PAYOUT_EVENTS, payoutBookingTables } from '../src/ledger/payout-bookings';
import { bookSettlements, settlementBookingTables } from '../src/ledger/settlement-bookings';
import { WRITE_OFF_EVENTS, writeOffBookingTables } from '../src/ledger/write-off-bookings';
import { recoveryBookingTables } from '../src/ledger/write-off-recoveries';
import { addPayableMonths, PAYABLE_MONTHS_TABLE } from '../src/ledger/payable-months';
import { BankEntryBooked } from '../src/events/bank-events';
import { isEvent } from '../src/events/catalog';
import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import { CASH_EVENTS } from '../src/reconciliation/settlement/state';
import type { Position, RecordedEvent } from '../src/store/types';

/**
 * The double-entry journal and the sub-merchant directory (docs/ledger.md).
 *
 * The journal is append-only: when a later observation of a register row changes its effect (a status
 * changed, an amount was corrected), the entries in force are reversed by entries dated as the originals
 * and the new ones are added, all carrying the position of the event that caused them. So figures cut at
 * any position are the figures the journal showed then, and the latest observation wins after it.
 */

interface Directory {
  holdByName: Map<string, { id: string; hold: number }>;
  byId: Map<string, { name: string; hold: number }>;
}

function fallbackAt(e: RecordedEvent): Date {
  const observed = e.metadata['observedAt'];
  return typeof observed === 'string' && !Number.isNaN(Date.parse(observed)) ? new Date(observed) : e.recordedAt;
}

/**
 * The register row of an event. The event was validated against its definition when it was appended, so
 * only a cheap shape check here (a full parse per row would cost more than the rest of the journal).
 */
function registerRowOf(e: RecordedEvent): { posId: string; record: NormalizedRegisterRecord } {
  const d = e.data as { posId?: unknown; record?: Partial<Record<keyof NormalizedRegisterRecord, unknown>> } | null;
  const r = d?.record;
  if (
    typeof d?.posId !== 'string' ||
    !r ||
    typeof r.paymentId !== 'string' ||
    typeof r.method !== 'string' ||
    typeof r.status !== 'string' ||
    typeof r.currency !== 'string'
  ) {
    throw new Error(`event ${e.id} (${e.type} v${e.version}) does not have the shape of a register row observation`);
  }
  return d as { posId: string; record: NormalizedRegisterRecord };
}

async function loadDirectory(tx: Tx, schema: string, names: string[], ids: string[]): Promise<Directory> {
  const dir: Directory = { holdByName: new Map(), byId: new Map() };
  if (names.length === 0 && ids.length === 0) return dir;
  const rows = await tx<{ sub_merchant_id: string; name: string; reserve_hold_days: number }[]>`
    select sub_merchant_id, name, reserve_hold_days from ${tx(schema)}.directory
    where name = any(${names}::text[]) or sub_merchant_id = any(${ids}::text[])
      -- every other holder of a name an id of the batch holds now: if that id takes another name, the
      -- name stays with them (register), as it would for a batch that starts after the rename
      or name in (select d.name from ${tx(schema)}.directory d where d.sub_merchant_id = any(${ids}::text[]))
    order by sub_merchant_id collate "C"`;
  for (const r of rows) {
    dir.byId.set(r.sub_merchant_id, { name: r.name, hold: r.reserve_hold_days });
    // two ids under one name: the smallest id takes the name (deterministic)
    if (!dir.holdByName.has(r.name)) dir.holdByName.set(r.name, { id: r.sub_merchant_id, hold: r.reserve_hold_days });
  }
  return dir;
}

/**
 * A directory event applied to the batch's directory, exactly as the table would have it after the event:
 * when an id takes another name, its old name passes to the smallest other id holding it (loadDirectory
 * loaded them all), so that the hold of a reserve never depends on where a batch starts.
 */
function register(dir: Directory, id: string, name: string, hold: number): void {
  const prev = dir.byId.get(id);
  dir.byId.set(id, { name, hold });
  if (prev && prev.name !== name && dir.holdByName.get(prev.name)?.id === id) {
    dir.holdByName.delete(prev.name);
    let next: { id: string; hold: number } | undefined;
    for (const [otherId, v] of dir.byId)
      if (v.name === prev.name && (next === undefined || otherId < next.id)) next = { id: otherId, hold: v.hold };
    if (next) dir.holdByName.set(prev.name, next);
  }
  const holder = dir.holdByName.get(name);
  if (!holder || holder.id >= id) dir.holdByName.set(name, { id, hold });
}

const ENTRY_COLUMNS = [
  'entry_id',
  'kind',
  'reverses',
  'row_key',
  'pos_id',
  'order_id',
  'payment_id',
  'method',
  'status',
  'receiver',
  'currency',
  'share',
  'fee',
  'reserve',
  'net',
  'booked_at',
  'booked_on',
  'release_on',
  'hold_days',
  'event_ids',
  'commit_pos',
  'prepare_pos',
];

/**
 * What a rebuild does without (random inserts into these indexes cost more than the rest of the journal's
 * writes) and builds when the build goes live, sorted, in the transaction that makes it live: the unique
 * keys of entries and lines (a line or entry written twice stops the build from going live), the indexes
 * the ledger queries use, and a balance check of the whole journal. `if not exists`: statements re-run on
 * a build that is live already change nothing.
 */
function liveIndexes(s: string): string[] {
  return [
    `create unique index if not exists entries_pkey on ${s}.entries (entry_id)`,
    `create unique index if not exists lines_pkey on ${s}.lines (entry_id, line_no)`,
    `create index if not exists entries_receiver_currency_booked_at_idx on ${s}.entries (receiver, currency, booked_at)`,
    `create index if not exists entries_reverses_idx on ${s}.entries (reverses) where reverses is not null`,
    `create index if not exists entries_payment_id_idx on ${s}.entries (payment_id)`,
    // a month's operations counted for every statement at once, without reading the months before
    `create index if not exists entries_settlement_booked_at_idx on ${s}.entries (booked_at) where kind = 'settlement'`,
    // a statement's adjustments (written since the previous statement's cut) and reserves (held or released in
    // its month), read without the receiver's earlier entries
    `create index if not exists entries_receiver_position_idx on ${s}.entries (receiver, commit_pos, prepare_pos)`,
    `create index if not exists entries_reserve_booked_at_idx on ${s}.entries (receiver, booked_at) where kind = 'settlement' and reserve <> 0`,
    `create index if not exists entries_reserve_release_on_idx on ${s}.entries (receiver, release_on) where kind = 'settlement' and reserve <> 0`,
    `create index if not exists lines_receiver_currency_account_booked_at_idx on ${s}.lines (receiver, currency, account, booked_at)`,
    `do $$ declare bad record; begin
       select entry_id, sum(amount) as total into bad from ${s}.lines group by entry_id, currency having sum(amount) <> 0 limit 1;
       if found then raise exception 'journal entry does not net to zero (off by %): entry % (check of the whole build)', bad.total, bad.entry_id; end if;
     end $$`,
  ];
}

/** Two effects with the same inputs (whoever wrote them) have the same entries. */
function sameInputs(a: Effect, b: Effect): boolean {
  if (a.length !== b.length) return false;
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The COPY text lines of an entry's lines (`sign` -1n for a reversal). */
function lineRows(
  out: TextBuffer,
  entryId: string,
  lines: readonly DraftLine[],
  sign: bigint,
  receiver: string,
  currency: string,
  at: string,
  pos: string,
): void {
  let total = 0n;
  lines.forEach((l, n) => {
    total += l.amount;
    out.add(
      `${entryId}\t${n}\t${l.account}\t${receiver}\t${l.component}\t${currency}\t${sign * l.amount}\t${at}\t${pos}\n`,
    );
  });
  // every entry nets to zero, checked in code before anything is written
  if (total !== 0n) throw new UnbalancedEntryError(total, `entry ${entryId}`);
}

/** A register row observation with its facts, or a directory event (facts null), in the batch's order. */
type Observation = { e: RecordedEvent; f: RowFacts } | { e: RecordedEvent; f: null };

/** The batch's observations, with the row keys, receiver names and sub-merchant ids they need read. */
function observationsOf(events: readonly RecordedEvent[], tz: string) {
  const todo: Observation[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  const ids = new Set<string>();
  for (const e of events) {
    if (isEvent(RegisterRecordObserved, e)) {
      const d = registerRowOf(e);
      const f = rowFacts(d.posId, d.record, fallbackAt(e), tz);
      todo.push({ e, f });
      keys.add(f.rowKey);
      if (f.receiver) names.add(f.receiver);
    } else if (isEvent(SubMerchantRegistered, e)) {
      todo.push({ e, f: null });
      ids.add((e.data as { subMerchantId: string }).subMerchantId);
    }
  }
  return { todo, names, keys, ids };
}

/** What is in force for a register row, and the report of the observation that put it in force. */
interface RowState {
  readonly effect: Effect;
  readonly reportId: string | null;
}

async function loadEffects(tx: Tx, schema: string, keys: ReadonlySet<string>): Promise<Map<string, RowState>> {
  const m = new Map<string, RowState>();
  if (keys.size === 0) return m;
  const rows = await tx<{ row_key: string; effect: string; report_id: string | null }[]>`
    select row_key, effect, report_id from ${tx(schema)}.register_rows where row_key = any(${[...keys]}::text[])`;
  for (const r of rows) m.set(r.row_key, { effect: JSON.parse(r.effect) as Effect, reportId: r.report_id });
  return m;
}

/** What a batch decides, as it is decided: directory versions, entries and lines (COPY text), row effects. */
interface Booked {
  readonly versions: Array<{
    eventId: string;
    id: string;
    name: string;
    hold: number;
    commit: string;
    prepare: string;
  }>;
  readonly dirty: Map<string, RowState & { lastEventId: string }>;
  readonly entryText: TextBuffer;
  readonly lineText: TextBuffer;
  /** positions of the first and last event that wrote entries */
  first: Position | undefined;
  last: Position | undefined;
}

function registerVersion(b: Booked, dir: Directory, e: RecordedEvent): void {
  const d = SubMerchantRegistered.schema.parse(e.data);
  register(dir, d.subMerchantId, d.name, d.reserveHoldDays);
  b.versions.push({
    eventId: e.id,
    id: d.subMerchantId,
    name: d.name,
    hold: d.reserveHoldDays,
    commit: e.position.commit.toString(),
    prepare: e.position.prepare.toString(),
  });
}

/** One register row observation: the entries in force reversed and the new ones added, when its effect changed. */
function bookRow(b: Booked, dir: Directory, states: Map<string, RowState>, e: RecordedEvent, f: RowFacts, tz: string) {
  const was = states.get(f.rowKey);
  const reportId = reportIdOf(e.metadata);
  if (secondRowOfReport(was?.reportId, reportId)) return;
  // The hold of a reserve is fixed when it is held (the directory as known at this event).
  const hold = f.receiver
    ? (dir.holdByName.get(f.receiver)?.hold ?? DEFAULT_RESERVE_HOLD_DAYS)
    : DEFAULT_RESERVE_HOLD_DAYS;
  const drafts = entriesFor(f, hold, tz);
  const effect = effectOf(e.id, f, hold, drafts);
  // the latest observation wins (of one report, its first row); one with the same effect books nothing, but
  // its report is the row's now: a second row of that report is a duplicate too
  const keep = (state: RowState) => {
    states.set(f.rowKey, state);
    b.dirty.set(f.rowKey, { ...state, lastEventId: e.id });
  };
  let prior: InForce | undefined;
  if (was === undefined) {
    if (drafts.length === 0) return reportId === null ? undefined : keep({ effect: [], reportId });
  } else {
    const same = sameInputs(was.effect, effect);
    prior = same ? undefined : inForce(was.effect, tz);
    if (same || sameEntries(prior?.drafts ?? [], drafts))
      return was.reportId === reportId ? undefined : keep({ effect: was.effect, reportId });
  }
  b.first ??= e.position;
  b.last = e.position;
  // values every row of this event repeats, escaped for COPY once
  const rowKey = copyCell(f.rowKey);
  const facts = `${rowKey}\t${copyCell(f.posId)}\t${copyCell(f.orderId)}\t${copyCell(f.paymentId)}\t${copyCell(f.method)}\t${copyCell(f.status)}`;
  const receiver = copyCell(f.receiver);
  const currency = copyCell(f.currency);
  const pos = `${e.position.commit.toString()}\t${e.position.prepare.toString()}`;
  const { entryText, lineText } = b;
  // reverse what is in force, dated as the originals
  if (prior) {
    const p = prior;
    p.drafts.forEach((old, i) => {
      const entryId = `${e.id}:r${i}`;
      const sale = old.kind === 'settlement';
      const at = old.bookedAt.toISOString();
      entryText.add(
        `${entryId}\treversal\t${p.eventId}:${i}\t${facts}\t${receiver}\t${currency}\t${sale ? -p.share : 0n}\t${sale ? -p.fee : 0n}\t` +
          `${old.releaseOn !== null ? -p.reserve : 0n}\t${-netOf(old.lines)}\t${at}\t${old.bookedOn}\t${old.releaseOn ?? '\\N'}\t${old.holdDays ?? '\\N'}\t{${e.id},${p.eventId}}\t${pos}\n`,
      );
      lineRows(lineText, entryId, old.lines, -1n, receiver, currency, at, pos);
    });
  }
  drafts.forEach((d, i) => {
    const entryId = `${e.id}:${i}`;
    const sale = d.kind === 'settlement';
    const at = d.bookedAt.toISOString();
    entryText.add(
      `${entryId}\t${d.kind}\t\\N\t${facts}\t${receiver}\t${currency}\t${sale ? f.share : 0n}\t${sale ? f.fee : 0n}\t` +
        `${d.releaseOn !== null ? f.reserve : 0n}\t${netOf(d.lines)}\t${at}\t${d.bookedOn}\t${d.releaseOn ?? '\\N'}\t${d.holdDays ?? '\\N'}\t{${e.id}}\t${pos}\n`,
    );
    lineRows(lineText, entryId, d.lines, 1n, receiver, currency, at, pos);
  });
  keep({ effect, reportId });
}

async function writeVersions(tx: Tx, schema: string, versions: Booked['versions']): Promise<void> {
  if (!versions.length) return;
  await copyRows(
    tx,
    `${ident(schema)}.sub_merchant_versions`,
    ['event_id', 'sub_merchant_id', 'name', 'reserve_hold_days', 'commit_pos', 'prepare_pos'],
    versions.map((v) => [v.eventId, v.id, v.name, v.hold, v.commit, v.prepare]),
  );
  const vs = [...new Map(versions.map((v) => [v.id, v])).values()];
  await tx`
    insert into ${tx(schema)}.directory (sub_merchant_id, name, reserve_hold_days, event_id, commit_pos, prepare_pos)
    select * from unnest(${vs.map((v) => v.id)}::text[], ${vs.map((v) => v.name)}::text[], ${vs.map((v) => v.hold)}::int4[],
      ${vs.map((v) => v.eventId)}::uuid[], ${vs.map((v) => v.commit)}::numeric[], ${vs.map((v) => v.prepare)}::numeric[])
    on conflict (sub_merchant_id) do update set name = excluded.name, reserve_hold_days = excluded.reserve_hold_days,
      event_id = excluded.event_id, commit_pos = excluded.commit_pos, prepare_pos = excluded.prepare_pos`;
}

async function writeEntries(tx: Tx, schema: string, b: Booked): Promise<void> {
  const q = ident(schema);
  const { first, last } = b;
  // Every entry was checked to net to zero in code (entriesFor; a reversal negates a checked entry).
  await copyText(tx, `${q}.entries`, ENTRY_COLUMNS, b.entryText.chunks());
  if (!first || !last) return;
  await copyText(tx, `${q}.lines`, JOURNAL_LINE_COLUMNS, b.lineText.chunks());
  // Checked again in the database, inside the same transaction: every line at the positions of this
  // batch's events (the lines just written), so nothing unbalanced is ever committed.
  const [bad] = await tx<{ entry_id: string; total: bigint }[]>`
    with written as materialized (
      select entry_id, currency, amount from ${tx(schema)}.lines
      where (commit_pos, prepare_pos) >= (${first.commit.toString()}::numeric, ${first.prepare.toString()}::numeric)
        and (commit_pos, prepare_pos) <= (${last.commit.toString()}::numeric, ${last.prepare.toString()}::numeric))
    select entry_id, sum(amount)::int8 as total from written group by entry_id, currency having sum(amount) <> 0 limit 1`;
  if (bad) throw new UnbalancedEntryError(bad.total, `entry ${bad.entry_id} (database check)`);
}

async function writeEffects(tx: Tx, schema: string, dirty: Booked['dirty'], known: ReadonlySet<string>) {
  if (!dirty.size) return;
  const fresh: Array<[string, string, string, string | null]> = [];
  const changed: Array<[string, string, string, string | null]> = [];
  for (const [k, v] of dirty)
    (known.has(k) ? changed : fresh).push([k, JSON.stringify(v.effect), v.lastEventId, v.reportId]);
  await copyRows(tx, `${ident(schema)}.register_rows`, ['row_key', 'effect', 'last_event_id', 'report_id'], fresh);
  if (changed.length) {
    await tx`
      update ${tx(schema)}.register_rows r set effect = t.e, last_event_id = t.id, report_id = t.rep
      from unnest(${changed.map((c) => c[0])}::text[], ${changed.map((c) => c[1])}::text[], ${changed.map((c) => c[2])}::uuid[],
        ${changed.map((c) => c[3])}::text[]) as t(k, e, id, rep)
      where r.row_key = t.k`;
  }
}

/** A batch's bookings: the settlement bookings, the payouts', the bank's charges, then the register rows. */
async function bookEvents(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  // the settlement bookings, the write-offs and their recoveries, append by append
  await bookSettlements(tx, events, ctx);
  await bookPayouts(tx, events, ctx);
  await bookBankCharges(tx, events, ctx);
  const batch = observationsOf(events, ctx.timezone);
  if (batch.todo.length === 0) return;
  const [dir, states] = await Promise.all([
    loadDirectory(tx, ctx.schema, [...batch.names], [...batch.ids]),
    loadEffects(tx, ctx.schema, batch.keys),
  ]);
  const known = new Set(states.keys());
  const booked: Booked = {
    versions: [],
    dirty: new Map(),
    entryText: createTextBuffer(),
    lineText: createTextBuffer(),
    first: undefined,
    last: undefined,
  };
  for (const { e, f } of batch.todo) {
    if (f === null) registerVersion(booked, dir, e);
    else bookRow(booked, dir, states, e, f, ctx.timezone);
  }
  await writeVersions(tx, ctx.schema, booked.versions);
  await writeEntries(tx, ctx.schema, booked);
  await writeEffects(tx, ctx.schema, booked.dirty, known);
}

export const projection: Projection = {
  name: 'journal',
  // what each version changed: docs/ledger.md, "Read-model versions"
  version: 27,
  usesBank: true,
  // the register rows and the directory (below), the settlement bookings (the cash leg's events), the payout
  // bookings, the bank's charges (a booked entry), write-offs and their revocations
  handles: eventTypes(
    [RegisterRecordObserved, SubMerchantRegistered],
    CASH_EVENTS,
    PAYOUT_EVENTS,
    [BankEntryBooked],
    WRITE_OFF_EVENTS,
  ),

  async setup(tx: Tx, ctx: ProjectionContext) {
    const s = ident(ctx.schema);
    // .unsafe: static DDL, several statements in one (the simple protocol); only the schema name is spliced, quoted
    await tx.unsafe(`
      create table ${s}.sub_merchant_versions (
        event_id uuid primary key,
        sub_merchant_id text not null,
        name text not null,
        reserve_hold_days int not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
      create index on ${s}.sub_merchant_versions (sub_merchant_id, commit_pos, prepare_pos);
      create index on ${s}.sub_merchant_versions (name, commit_pos, prepare_pos);
      create table ${s}.directory (
        sub_merchant_id text primary key,
        name text not null,
        reserve_hold_days int not null,
        event_id uuid not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
      create index on ${s}.directory (name);
      create table ${s}.register_rows (
        row_key text primary key,
        -- what is in force for this row (compact JSON, see Effect), reversed when a later observation changes it
        effect text not null,
        last_event_id uuid not null,
        -- the report of the observation in force: a second row of that report is a duplicate, not booked
        report_id text
      );
      create table ${s}.entries (
        -- unique (entries_pkey), made when the build goes live
        entry_id text not null,
        kind text not null check (kind in ('settlement', 'reserve_release', 'reversal', 'bank_settlement', 'payout', 'bank_charge', 'write_off', 'write_off_recovery', 'write_off_gain_taken_back')),
        reverses text,
        row_key text not null,
        pos_id text not null,
        order_id text,
        payment_id text not null,
        method text not null,
        status text not null,
        receiver text,
        currency text not null,
        share bigint not null,
        fee bigint not null,
        reserve bigint not null,
        -- effect on the owner's payable (credit positive): share - fee - reserve for a sale, -(share + fee) for a refund
        net bigint not null,
        booked_at timestamptz not null,
        booked_on date not null,
        release_on date,
        hold_days int,
        event_ids uuid[] not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
      create table ${s}.lines (
        entry_id text not null,
        line_no smallint not null,
        account text not null,
        receiver text,
        component text not null,
        currency text not null,
        amount bigint not null,
        booked_at timestamptz not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
        -- unique (entry_id, line_no) (lines_pkey), made when the build goes live
      );
      -- lines are appended in position order (inserts at the index's right edge, cheap): the lines a batch wrote
      create index lines_position_idx on ${s}.lines (commit_pos, prepare_pos);
    `);
    // the bookings' tables: static DDL as above
    await tx.unsafe(settlementBookingTables(s));
    await tx.unsafe(payoutBookingTables(s));
    await tx.unsafe(writeOffBookingTables(s));
    await tx.unsafe(recoveryBookingTables(s));
    await tx.unsafe(PAYABLE_MONTHS_TABLE.replace('%s', s));
  },

  async apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
    await bookEvents(tx, events, ctx);
    // every writer of lines has written: their months for the statements (src/ledger/payable-months.ts)
    await addPayableMonths(tx, ctx.schema, events, ctx.timezone);
  },

  views(ctx: ProjectionContext) {
    const s = ident(ctx.schema);
    // receiver name → sub-merchant id: the id holding the name now (the smallest when two do), else the id
    // that held it last (a renamed sub-merchant keeps the rows booked under its former name)
    const idOf = `coalesce((select d.sub_merchant_id from ${s}.directory d where d.name = x.receiver order by d.sub_merchant_id collate "C" limit 1),
      (select v.sub_merchant_id from ${s}.sub_merchant_versions v where v.name = x.receiver order by v.commit_pos desc, v.prepare_pos desc limit 1))`;
    const pos = `x.commit_pos::text || '/' || x.prepare_pos::text`;
    return [
      ...liveIndexes(s),
      `create or replace view recon.sub_merchants as
         select sub_merchant_id, name, reserve_hold_days, event_id, commit_pos::text || '/' || prepare_pos::text as position
         from ${s}.directory`,
      `create or replace view recon.sub_merchant_versions as
         select sub_merchant_id, name, reserve_hold_days, event_id, commit_pos, prepare_pos, commit_pos::text || '/' || prepare_pos::text as position
         from ${s}.sub_merchant_versions`,
      `create or replace view recon.journal_entries as
         select x.entry_id, x.kind, x.reverses, x.row_key, x.pos_id, x.order_id, x.payment_id, x.method, x.status,
                x.receiver as receiver_name, ${idOf} as sub_merchant_id, x.currency, x.share, x.fee, x.reserve,
                x.net, x.booked_at, x.booked_on, x.release_on, x.hold_days, x.event_ids,
                x.commit_pos, x.prepare_pos, ${pos} as position
         from ${s}.entries x`,
      `create or replace view recon.journal_lines as
         select x.entry_id, x.line_no, x.account,
                case when x.account in ('payable', 'reserve') then x.account || ':' || coalesce(${idOf}, 'receiver:' || x.receiver, 'marketplace')
                     else x.account end as account_code,
                x.receiver as receiver_name, ${idOf} as sub_merchant_id, x.component, x.currency, x.amount,
                greatest(x.amount, 0) as debit, greatest(-x.amount, 0) as credit, x.booked_at, x.commit_pos, x.prepare_pos, ${pos} as position
         from ${s}.lines x`,
      // the zone the months below are cut in (the build's): a statement in another zone sums the lines instead
      `create or replace view recon.journal_zone as select '${ctx.timezone.replaceAll("'", "''")}'::text as timezone`,
      // each receiver's payable movements per month of the build's zone: the statements' openings and closings
      `create or replace view recon.payable_months as
         select x.receiver as receiver_name, x.currency, x.month, x.component, x.amount,
           -- the position of the month's first line, named as every view names a row's position
           x.first_commit as commit_pos, x.first_prepare as prepare_pos, x.first_commit::text || '/' || x.first_prepare::text as position
         from ${s}.payable_months x`,
      // what the marketplace owes each receiver: credit positive
      `create or replace view recon.settlement_ledger as
         select x.receiver as receiver_name, ${idOf} as sub_merchant_id, x.currency, x.booked_at, x.entry_id, x.line_no, x.component,
                -x.amount as amount,
                sum(-x.amount) over (partition by x.receiver, x.currency order by x.booked_at, x.entry_id, x.line_no) as balance,
                x.commit_pos, x.prepare_pos, ${pos} as position
         from ${s}.lines x where x.account = 'payable'`,
      `create or replace view recon.fee_ledger as
         select x.receiver as receiver_name, ${idOf} as sub_merchant_id, x.currency, x.booked_at, x.entry_id, x.line_no,
                -x.amount as fee,
                sum(-x.amount) over (partition by x.receiver, x.currency order by x.booked_at, x.entry_id, x.line_no) as balance,
                x.commit_pos, x.prepare_pos, ${pos} as position
         from ${s}.lines x where x.account = 'psp_fees' and x.receiver is not null`,
      `create or replace view recon.reserve_ledger as
         select x.receiver as receiver_name, ${idOf} as sub_merchant_id, x.currency, x.booked_at, x.entry_id, x.line_no, x.component,
                -x.amount as amount,
                sum(-x.amount) over (partition by x.receiver, x.currency order by x.booked_at, x.entry_id, x.line_no) as balance,
                x.commit_pos, x.prepare_pos, ${pos} as position
         from ${s}.lines x where x.account = 'reserve' and x.receiver is not null`,
    ];
  },
};
