import { copyRows } from '../src/ledger/copy-rows';
import { RegisterRecordObserved } from '../src/events/ingest-events';
import { DEFAULT_RESERVE_HOLD_DAYS, SubMerchantRegistered } from '../src/events/ledger-events';
import { entriesFor, netOf, rowFacts, UnbalancedEntryError, type Account, type Component, type RowFacts } from '../src/ledger/journal-rules';
import type { Projection, ProjectionContext, Tx } from '../src/ledger/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * The double-entry journal and the sub-merchant directory (docs/ledger.md).
 *
 * The journal is append-only: when a later observation of a register row changes its effect (a status
 * changed, an amount was corrected), the entries in force are reversed by entries dated as the originals
 * and the new ones are added, all carrying the position of the event that caused them. So figures cut at
 * any position are the figures the journal showed then, and the latest observation wins after it.
 */

interface StoredEntry {
  id: string;
  kind: 'settlement' | 'reserve_release';
  at: string;
  on: string;
  releaseOn: string | null;
  holdDays: number | null;
  lines: Array<[Account, Component, string]>;
  share: string;
  fee: string;
  reserve: string;
  net: string;
  eventId: string;
}

interface RowState {
  entries: StoredEntry[];
}

/** What makes two observations of a row equivalent for the journal: the entries' dates and lines. */
function signatureOf(entries: readonly StoredEntry[]): string {
  return JSON.stringify(entries.map((e) => [e.kind, e.at, e.releaseOn, e.lines]));
}

interface EntryRow {
  entryId: string;
  kind: 'settlement' | 'reserve_release' | 'reversal';
  reverses: string | null;
  facts: RowFacts;
  status: string;
  share: bigint;
  fee: bigint;
  reserve: bigint;
  net: bigint;
  bookedAt: string;
  bookedOn: string;
  releaseOn: string | null;
  holdDays: number | null;
  eventIds: string[];
  commit: string;
  prepare: string;
}

interface LineRow {
  entryId: string;
  lineNo: number;
  account: Account;
  receiver: string | null;
  component: Component;
  currency: string;
  amount: bigint;
  bookedAt: string;
  commit: string;
  prepare: string;
}

interface Directory {
  holdByName: Map<string, { id: string; hold: number }>;
  byId: Map<string, { name: string; hold: number }>;
}

function fallbackAt(e: RecordedEvent): Date {
  const observed = e.metadata['observedAt'];
  return typeof observed === 'string' && !Number.isNaN(Date.parse(observed)) ? new Date(observed) : e.recordedAt;
}

async function loadDirectory(tx: Tx, schema: string, names: string[], ids: string[]): Promise<Directory> {
  const dir: Directory = { holdByName: new Map(), byId: new Map() };
  if (names.length === 0 && ids.length === 0) return dir;
  const rows = await tx<{ sub_merchant_id: string; name: string; reserve_hold_days: number }[]>`
    select sub_merchant_id, name, reserve_hold_days from ${tx(schema)}.directory
    where name = any(${names}::text[]) or sub_merchant_id = any(${ids}::text[])
    order by sub_merchant_id`;
  for (const r of rows) {
    dir.byId.set(r.sub_merchant_id, { name: r.name, hold: r.reserve_hold_days });
    // two ids under one name: the smallest id takes the name (deterministic)
    if (!dir.holdByName.has(r.name)) dir.holdByName.set(r.name, { id: r.sub_merchant_id, hold: r.reserve_hold_days });
  }
  return dir;
}

function register(dir: Directory, id: string, name: string, hold: number): void {
  const prev = dir.byId.get(id);
  if (prev && prev.name !== name && dir.holdByName.get(prev.name)?.id === id) dir.holdByName.delete(prev.name);
  dir.byId.set(id, { name, hold });
  const holder = dir.holdByName.get(name);
  if (!holder || holder.id >= id) dir.holdByName.set(name, { id, hold });
}

export const projection: Projection = {
  name: 'journal',
  version: 1,

  async setup(tx: Tx, ctx: ProjectionContext) {
    const s = `"${ctx.schema}"`;
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
        -- the entries in force for this row (JSON), reversed when a later observation changes them
        effect text not null,
        last_event_id uuid not null
      );
      create table ${s}.entries (
        entry_id text primary key,
        kind text not null check (kind in ('settlement', 'reserve_release', 'reversal')),
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
      create index on ${s}.entries (receiver, currency, booked_at);
      create index on ${s}.entries (reverses) where reverses is not null;
      create index on ${s}.entries (payment_id);
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
        prepare_pos numeric(20,0) not null,
        primary key (entry_id, line_no)
      );
      create index on ${s}.lines (receiver, currency, account, booked_at);
    `);
  },

  async apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
    const schema = ctx.schema;
    const registers: RecordedEvent[] = [];
    const names = new Set<string>();
    const keys = new Set<string>();
    const ids = new Set<string>();
    const facts = new Map<string, RowFacts>();
    for (const e of events) {
      if (e.type === RegisterRecordObserved.type && e.version === RegisterRecordObserved.version) {
        const d = e.data as { posId: string; record: Parameters<typeof rowFacts>[1] };
        const f = rowFacts(d.posId, d.record, fallbackAt(e), ctx.timezone);
        facts.set(e.id, f);
        registers.push(e);
        keys.add(f.rowKey);
        if (f.receiver) names.add(f.receiver);
      } else if (e.type === SubMerchantRegistered.type && e.version === SubMerchantRegistered.version) {
        registers.push(e);
        ids.add((e.data as { subMerchantId: string }).subMerchantId);
      }
    }
    if (registers.length === 0) return;

    const dir = await loadDirectory(tx, schema, [...names], [...ids]);
    const states = new Map<string, RowState>();
    const known = new Set<string>();
    if (keys.size) {
      const rows = await tx<{ row_key: string; effect: string }[]>`
        select row_key, effect from ${tx(schema)}.register_rows where row_key = any(${[...keys]}::text[])`;
      for (const r of rows) {
        states.set(r.row_key, { entries: JSON.parse(r.effect) as StoredEntry[] });
        known.add(r.row_key);
      }
    }

    const versions: Array<{ eventId: string; id: string; name: string; hold: number; commit: string; prepare: string }> = [];
    const dirty = new Map<string, { entries: StoredEntry[]; lastEventId: string }>();
    const entries: EntryRow[] = [];
    const lines: LineRow[] = [];

    for (const e of registers) {
      const commit = e.position.commit.toString();
      const prepare = e.position.prepare.toString();
      if (e.type === SubMerchantRegistered.type) {
        const d = SubMerchantRegistered.schema.parse(e.data);
        register(dir, d.subMerchantId, d.name, d.reserveHoldDays);
        versions.push({ eventId: e.id, id: d.subMerchantId, name: d.name, hold: d.reserveHoldDays, commit, prepare });
        continue;
      }
      const f = facts.get(e.id)!;
      // The hold of a reserve is fixed when it is held (the directory as known at this event).
      const hold = f.receiver ? dir.holdByName.get(f.receiver)?.hold ?? DEFAULT_RESERVE_HOLD_DAYS : DEFAULT_RESERVE_HOLD_DAYS;
      const drafts = entriesFor(f, hold, ctx.timezone);
      const stored: StoredEntry[] = drafts.map((d, i) => {
        const sale = d.kind === 'settlement';
        return {
          id: `${e.id}:${i}`, kind: d.kind, at: d.bookedAt.toISOString(), on: d.bookedOn, releaseOn: d.releaseOn, holdDays: d.holdDays,
          lines: d.lines.map((l) => [l.account, l.component, l.amount.toString()]),
          share: (sale ? f.share : 0n).toString(), fee: (sale ? f.fee : 0n).toString(),
          reserve: (d.releaseOn !== null ? f.reserve : 0n).toString(), net: netOf(d.lines).toString(), eventId: e.id,
        };
      });
      const prior = states.get(f.rowKey);
      // the latest observation wins; an observation with the same effect changes nothing
      if (prior ? signatureOf(prior.entries) === signatureOf(stored) : stored.length === 0) continue;
      // reverse what is in force, dated as the originals
      (prior?.entries ?? []).forEach((old, i) => {
        const entryId = `${e.id}:r${i}`;
        entries.push({
          entryId, kind: 'reversal', reverses: old.id, facts: f, status: f.status,
          share: -BigInt(old.share), fee: -BigInt(old.fee), reserve: -BigInt(old.reserve), net: -BigInt(old.net),
          bookedAt: old.at, bookedOn: old.on, releaseOn: old.releaseOn, holdDays: old.holdDays,
          eventIds: [e.id, old.eventId], commit, prepare,
        });
        old.lines.forEach(([account, component, amount], n) => {
          lines.push({ entryId, lineNo: n, account, receiver: f.receiver, component, currency: f.currency, amount: -BigInt(amount), bookedAt: old.at, commit, prepare });
        });
      });
      for (const st of stored) {
        entries.push({
          entryId: st.id, kind: st.kind, reverses: null, facts: f, status: f.status,
          share: BigInt(st.share), fee: BigInt(st.fee), reserve: BigInt(st.reserve), net: BigInt(st.net),
          bookedAt: st.at, bookedOn: st.on, releaseOn: st.releaseOn, holdDays: st.holdDays, eventIds: [e.id], commit, prepare,
        });
        st.lines.forEach(([account, component, amount], n) => {
          lines.push({ entryId: st.id, lineNo: n, account, receiver: f.receiver, component, currency: f.currency, amount: BigInt(amount), bookedAt: st.at, commit, prepare });
        });
      }
      states.set(f.rowKey, { entries: stored });
      dirty.set(f.rowKey, { entries: stored, lastEventId: e.id });
    }

    // Checked in code before writing: every entry nets to zero.
    const totals = new Map<string, bigint>();
    for (const l of lines) totals.set(l.entryId, (totals.get(l.entryId) ?? 0n) + l.amount);
    for (const [id, t] of totals) if (t !== 0n) throw new UnbalancedEntryError(t, `entry ${id}`);

    const q = `"${schema}"`;
    if (versions.length) {
      await copyRows(tx, `${q}.sub_merchant_versions`, ['event_id', 'sub_merchant_id', 'name', 'reserve_hold_days', 'commit_pos', 'prepare_pos'],
        versions.map((v) => [v.eventId, v.id, v.name, v.hold, v.commit, v.prepare]));
      const vs = [...new Map(versions.map((v) => [v.id, v])).values()];
      await tx`
        insert into ${tx(schema)}.directory (sub_merchant_id, name, reserve_hold_days, event_id, commit_pos, prepare_pos)
        select * from unnest(${vs.map((v) => v.id)}::text[], ${vs.map((v) => v.name)}::text[], ${vs.map((v) => v.hold)}::int4[],
          ${vs.map((v) => v.eventId)}::uuid[], ${vs.map((v) => v.commit)}::numeric[], ${vs.map((v) => v.prepare)}::numeric[])
        on conflict (sub_merchant_id) do update set name = excluded.name, reserve_hold_days = excluded.reserve_hold_days,
          event_id = excluded.event_id, commit_pos = excluded.commit_pos, prepare_pos = excluded.prepare_pos`;
    }
    await copyRows(tx, `${q}.entries`, ['entry_id', 'kind', 'reverses', 'row_key', 'pos_id', 'order_id', 'payment_id', 'method', 'status', 'receiver', 'currency',
      'share', 'fee', 'reserve', 'net', 'booked_at', 'booked_on', 'release_on', 'hold_days', 'event_ids', 'commit_pos', 'prepare_pos'],
    entries.map((e) => [e.entryId, e.kind, e.reverses, e.facts.rowKey, e.facts.posId, e.facts.orderId, e.facts.paymentId, e.facts.method, e.status, e.facts.receiver,
      e.facts.currency, e.share, e.fee, e.reserve, e.net, e.bookedAt, e.bookedOn, e.releaseOn, e.holdDays, `{${e.eventIds.join(',')}}`, e.commit, e.prepare]));
    if (lines.length) {
      await copyRows(tx, `${q}.lines`, ['entry_id', 'line_no', 'account', 'receiver', 'component', 'currency', 'amount', 'booked_at', 'commit_pos', 'prepare_pos'],
        lines.map((l) => [l.entryId, l.lineNo, l.account, l.receiver, l.component, l.currency, l.amount, l.bookedAt, l.commit, l.prepare]));
      // Checked again in the database, inside the same transaction: nothing unbalanced is ever committed.
      const entryIds = [...totals.keys()];
      const [bad] = await tx<{ entry_id: string; total: bigint }[]>`
        select entry_id, sum(amount)::int8 as total from ${tx(schema)}.lines where entry_id = any(${entryIds}::text[])
        group by entry_id, currency having sum(amount) <> 0 limit 1`;
      if (bad) throw new UnbalancedEntryError(bad.total, `entry ${bad.entry_id} (database check)`);
    }
    if (dirty.size) {
      const fresh: Array<[string, { entries: StoredEntry[]; lastEventId: string }]> = [];
      const changed: Array<[string, { entries: StoredEntry[]; lastEventId: string }]> = [];
      for (const kv of dirty) (known.has(kv[0]) ? changed : fresh).push(kv);
      await copyRows(tx, `${q}.register_rows`, ['row_key', 'effect', 'last_event_id'], fresh.map(([k, v]) => [k, JSON.stringify(v.entries), v.lastEventId]));
      if (changed.length) {
        await tx`
          update ${tx(schema)}.register_rows r set effect = t.e, last_event_id = t.id
          from unnest(${changed.map(([k]) => k)}::text[], ${changed.map(([, v]) => JSON.stringify(v.entries))}::text[], ${changed.map(([, v]) => v.lastEventId)}::uuid[]) as t(k, e, id)
          where r.row_key = t.k`;
      }
    }
  },

  views(ctx: ProjectionContext) {
    const s = `"${ctx.schema}"`;
    // receiver name → sub-merchant id by the current directory (smallest id when a name is given twice)
    const idOf = `(select d.sub_merchant_id from ${s}.directory d where d.name = x.receiver order by d.sub_merchant_id limit 1)`;
    const pos = `x.commit_pos::text || '/' || x.prepare_pos::text`;
    return [
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
