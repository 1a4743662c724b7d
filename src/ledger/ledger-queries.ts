import type { Sql } from '../db/connect';
import type { Position } from '../store/types';
import { DateTime } from 'luxon';
import { monthBounds } from '../journal-rules';

/**
 * Statement figures from the journal's views (schema `recon`, see docs/ledger.md). Every query can be cut
 * at an event-store position: only journal lines written by events at or before it count, and the
 * sub-merchant directory is taken as it stood then. Amounts are bigint minor units.
 *
 * Sub-merchants are the receivers of the register; a receiver the directory does not know is reported
 * under the placeholder id `receiver:<name>` (with `known: false`) so that no money disappears.
 */

export interface StatementFigures {
  readonly subMerchantId: string;
  readonly subMerchantName: string;
  /** false: a receiverName the directory does not know (id `receiver:<name>`) */
  readonly known: boolean;
  readonly currency: string;
  /**
   * The balance the month starts from: the closing of the previous statement issued (see
   * `previousStatement`), else the ledger's balance at the start of the month.
   */
  readonly opening: bigint;
  /**
   * Changes to earlier months since the previous statement was issued (lines dated before this month that
   * it did not include: a late row, a later status, a correction), so that an amount paid on a statement
   * is never silently re-stated. Absent: no previous statement (the opening is the ledger's).
   */
  readonly adjustments?: bigint;
  /** the statement the opening comes from: `YYYY-MM at <position>` (absent: none issued before) */
  readonly previousStatement?: string;
  readonly gross: bigint;
  readonly refunds: bigint;
  readonly chargebacks: bigint;
  readonly fees: bigint;
  readonly reserveHeld: bigint;
  readonly reserveReleased: bigint;
  /** gross − refunds − chargebacks − fees − reserveHeld + reserveReleased */
  readonly netPayable: bigint;
  /** opening + adjustments + netPayable: the ledger's balance at the end of the month */
  readonly closing: bigint;
  /** register rows (settlement entries in force) of the month */
  readonly operations: number;
}

export interface StatementLine {
  readonly at: Date;
  readonly orderId: string | null;
  readonly paymentId: string;
  readonly method: string;
  readonly status: string;
  /** signed from the sub-merchant's side: + for a sale, − for a refund or chargeback */
  readonly share: bigint;
  /** fee charged (positive) */
  readonly fee: bigint;
  /** reserve held (positive) */
  readonly reserve: bigint;
  /** share − fee − reserve: what the row adds to the net payable */
  readonly net: bigint;
  readonly currency: string;
  readonly entryId: string;
  readonly eventIds: string[];
  /** position of the event that booked this line ("commit/prepare") */
  readonly position: string;
}

export interface ReserveRow {
  /** local date the reserve was held (yyyy-mm-dd) */
  readonly heldOn: string;
  readonly currency: string;
  readonly held: bigint;
  readonly releaseOn: string;
  /** released by the end of the month (0 when the release date is later) */
  readonly released: bigint;
}

export type LedgerAccount = 'payable' | 'reserve' | 'fees';

type Q = Sql;

const PLACEHOLDER = 'receiver:';

/**
 * SQL text of the directory (name → id) at a position, or current: every name ever registered, mapped to
 * the id holding it then (the smallest when two do), else to the id that held it last — so a renamed
 * sub-merchant keeps the rows booked under its former name. Parameters $c/$c+1 when cut.
 */
function directorySql(cut: boolean, c: number): string {
  const versions = cut
    ? `(select sub_merchant_id, name, commit_pos, prepare_pos from recon.sub_merchant_versions
         where (commit_pos, prepare_pos) <= ($${c}::numeric, $${c + 1}::numeric))`
    : `(select sub_merchant_id, name, commit_pos, prepare_pos from recon.sub_merchant_versions)`;
  return `with v as ${versions},
    cur as (select distinct on (sub_merchant_id) sub_merchant_id, name from v order by sub_merchant_id, commit_pos desc, prepare_pos desc),
    held as (select distinct on (name) name, sub_merchant_id from cur order by name, sub_merchant_id collate "C"),
    past as (select distinct on (name) name, sub_merchant_id from v order by name, commit_pos desc, prepare_pos desc)
    select m.sub_merchant_id, m.name, c.name as current_name
    from (select coalesce(h.sub_merchant_id, p.sub_merchant_id) as sub_merchant_id, p.name from past p left join held h on h.name = p.name) m
    join cur c on c.sub_merchant_id = m.sub_merchant_id`;
}

export function posParams(at?: Position): string[] {
  return at ? [at.commit.toString(), at.prepare.toString()] : [];
}

/** Receiver names of a sub-merchant id (as of the cut); a placeholder id names its receiver directly. */
export async function receiversOf(sql: Q, subMerchantId: string, at?: Position): Promise<string[]> {
  if (subMerchantId.startsWith(PLACEHOLDER)) {
    const name = subMerchantId.slice(PLACEHOLDER.length);
    const known = await sql.unsafe<{ name: string }[]>(`${directorySql(!!at, 1)}`, posParams(at));
    return known.some((k) => k.name === name) ? [] : [name];
  }
  const rows = await sql.unsafe<{ name: string }[]>(
    `select name from (${directorySql(!!at, 2)}) d where d.sub_merchant_id = $1`,
    [subMerchantId, ...posParams(at)],
  );
  return rows.map((r) => r.name);
}

/** A sum as PostgreSQL gives it: numeric, as text (a sum of many large amounts passes int8's 2^63 − 1). */
export type Sum = string | bigint;

interface FigureRow {
  /** the sub-merchant's name as of the cut, or the receiver's name when unknown to the directory */
  name: string;
  sub_merchant_id: string | null;
  currency: string;
  opening: Sum;
  gross: Sum;
  refunds: Sum;
  chargebacks: Sum;
  fees: Sum;
  reserve_held: Sum;
  reserve_released: Sum;
}

/**
 * The payable lines a statement counts: payouts are the statement's own "Paid out" line, read from the bank
 * (src/export/payouts/paid-out.ts); a write-off is the company's own loss, never a sub-merchant's figure
 * (docs/ledger.md, "Write-offs").
 */
const STATED = (l: string) => `${l}.account = 'payable' and ${l}.component not in ('payout', 'write_off')`;

/**
 * SQL rows (receiver_name, currency, opening, component, amount, present) of each receiver's payable lines
 * dated before `to` (`$n` texts), as of the cut: the months before `from` as `opening` (credit positive), the
 * month's movements by `component` with `amount` as the journal signs it (`from` null: everything is
 * opening). Read from the journal's months (src/ledger/payable-months.ts) less the lines of those months
 * written after the cut, so the cost follows the number of months, not of lines; from the lines themselves
 * when the journal's months are another zone's (a build for a new RECON_TIMEZONE not live yet) or not kept.
 * The zone is compared in the same statement: the branch taken and the rows read are one snapshot.
 * `present`: the receiver had a line by the cut (a statement cut earlier shows no receiver that had none).
 */
function payableRows(o: {
  from: string | null;
  to: string;
  month: string;
  zone: string;
  cut: [string, string] | null;
  receiverCond: string;
  /** false: the journal keeps no months (a build of a version before them is live) */
  months: boolean;
}): string {
  const names = (alias: string) => o.receiverCond.replaceAll('l.receiver_name', `${alias}.receiver_name`);
  const cutPos = o.cut ? `(${o.cut[0]}::numeric, ${o.cut[1]}::numeric)` : null;
  const same = `(select timezone from recon.journal_zone) = ${o.zone}`;
  // a line or month row before the statement's month is opening, one of the month a movement
  const before = (l: string) => (o.from === null ? 'true' : `${l}.booked_at < ${o.from}`);
  const split = (earlier: string, opening: string, amount: string, l: string) =>
    `case when ${earlier} then ${opening} end, case when not (${earlier}) then ${l}.component end, case when not (${earlier}) then ${amount} end`;
  const branches: string[] = [];
  if (o.months) {
    const earlier = o.from === null ? 'true' : `m.month < ${o.month}`;
    branches.push(`
      select m.receiver_name, m.currency, ${split(earlier, 'm.amount', '-m.amount', 'm')},
        ${cutPos ? `(m.commit_pos, m.prepare_pos) <= ${cutPos}` : 'true'}
      from recon.payable_months m
      where ${same} and m.month <= ${o.month} ${names('m')}`);
    // what those months hold that was written after the cut, taken back
    if (cutPos)
      branches.push(`
      select l.receiver_name, l.currency, ${split(before('l'), 'l.amount', '-l.amount', 'l')}, false
      from recon.journal_lines l
      where ${same} and (l.commit_pos, l.prepare_pos) > ${cutPos} and l.booked_at < ${o.to} and ${STATED('l')}
        and l.receiver_name is not null ${names('l')}`);
  }
  branches.push(`
      select l.receiver_name, l.currency, ${split(before('l'), '-l.amount', 'l.amount', 'l')}, true
      from recon.journal_lines l
      where ${o.months ? `not ${same} and ` : ''}${STATED('l')} and l.booked_at < ${o.to}
        ${cutPos ? `and (l.commit_pos, l.prepare_pos) <= ${cutPos}` : ''} ${names('l')}`);
  return `select * from (${branches.join('\n      union all')}) as o(receiver_name, currency, opening, component, amount, present)`;
}

const FIGURE_SUMS = ['opening', 'gross', 'refunds', 'chargebacks', 'fees', 'reserve_held', 'reserve_released'] as const;

/** The sums `keys` of a row, exact, as bigint. */
function bigints<K extends string>(row: Readonly<Record<K, Sum>>, keys: readonly K[]): Record<K, bigint> {
  const out = {} as Record<K, bigint>;
  for (const k of keys) out[k] = BigInt(row[k]);
  return out;
}

/** Whether the journal's live build keeps its months (recon.journal_zone, from journal v25). */
async function keepsMonths(sql: Q): Promise<boolean> {
  const [r] = await sql<{ ok: boolean }[]>`select to_regclass('recon.journal_zone') is not null as ok`;
  return r?.ok === true;
}

/** Month figures per sub-merchant and currency (sorted by sub-merchant id, currency). */
export async function statementFigures(
  sql: Q,
  opts: { month: string; timezone: string; subMerchantId?: string; atPosition?: Position },
): Promise<StatementFigures[]> {
  const { from, to } = monthBounds(opts.month, opts.timezone);
  const cut = opts.atPosition;
  const params: unknown[] = [from, to, ...posParams(cut)];
  const posCond = (alias: string) =>
    cut ? `and (${alias}.commit_pos, ${alias}.prepare_pos) <= ($3::numeric, $4::numeric)` : '';
  let receiverCond = '';
  if (opts.subMerchantId !== undefined) {
    const names = await receiversOf(sql, opts.subMerchantId, cut);
    if (names.length === 0) return [];
    params.push(names);
    receiverCond = `and l.receiver_name = any($${params.length}::text[])`;
  }
  const dir = directorySql(!!cut, 3);
  const opsParams = [...params];
  const months = await keepsMonths(sql);
  // the month and zone only where the journal's months are read (a parameter no statement uses has no type)
  if (months) params.push(opts.month, opts.timezone);
  const [month, zone] = [`$${params.length - 1}`, `$${params.length}`];
  const movement = (c: string) =>
    `coalesce(sum(${c === 'gross' || c === 'reserve_released' ? '-' : ''}u.amount) filter (where u.component = '${c}'), 0)`;
  const rows = await sql.unsafe<FigureRow[]>(
    `
    with dir as (${dir}),
    u as (${payableRows({ from: '$1', to: '$2', month, zone, cut: cut ? ['$3', '$4'] : null, receiverCond, months })}
    )
    select coalesce(d.current_name, u.receiver_name) as name, d.sub_merchant_id, u.currency,
      coalesce(sum(u.opening), 0) as opening,
      ${movement('gross')} as gross, ${movement('refund')} as refunds, ${movement('chargeback')} as chargebacks,
      ${movement('fee')} as fees, ${movement('reserve_held')} as reserve_held, ${movement('reserve_released')} as reserve_released
    from u
    left join dir d on d.name = u.receiver_name
    -- one row per sub-merchant (all the names it was booked under) or unknown receiver, and currency, that had a
    -- line by the cut
    group by coalesce(d.sub_merchant_id, '${PLACEHOLDER}' || u.receiver_name), coalesce(d.current_name, u.receiver_name), d.sub_merchant_id, u.currency
    having bool_or(u.present)`,
    params as never[],
  );

  const ops = await sql.unsafe<{ key: string; currency: string; n: number }[]>(
    `
    with dir as (${dir})
    select coalesce(d.sub_merchant_id, '${PLACEHOLDER}' || e.receiver_name) as key, e.currency, count(*)::int as n
    from recon.journal_entries e
    left join dir d on d.name = e.receiver_name
    where e.kind = 'settlement' and e.receiver_name is not null and e.booked_at >= $1 and e.booked_at < $2 ${posCond('e')}
      ${receiverCond.replace('l.receiver_name', 'e.receiver_name')}
      and not exists (select 1 from recon.journal_entries r where r.reverses = e.entry_id ${posCond('r')})
    group by 1, e.currency`,
    opsParams as never[],
  );
  const opCount = new Map(ops.map((o) => [`${o.key}\u0000${o.currency}`, o.n]));

  const out = rows.map((raw): StatementFigures => {
    const r = { ...raw, ...bigints(raw, FIGURE_SUMS) };
    const netPayable = r.gross - r.refunds - r.chargebacks - r.fees - r.reserve_held + r.reserve_released;
    const subMerchantId = r.sub_merchant_id ?? `${PLACEHOLDER}${r.name}`;
    return {
      subMerchantId,
      subMerchantName: r.name,
      known: r.sub_merchant_id !== null,
      currency: r.currency,
      opening: r.opening,
      gross: r.gross,
      refunds: r.refunds,
      chargebacks: r.chargebacks,
      fees: r.fees,
      reserveHeld: r.reserve_held,
      reserveReleased: r.reserve_released,
      netPayable,
      closing: r.opening + netPayable,
      operations: opCount.get(`${subMerchantId}\u0000${r.currency}`) ?? 0,
    };
  });
  // One row per (sub-merchant or unknown receiver, currency): a renamed sub-merchant's names are one row.
  return out.sort(bySubMerchantAndCurrency);
}

interface LineRow {
  booked_at: Date;
  order_id: string | null;
  payment_id: string;
  method: string;
  status: string;
  share: bigint;
  fee: bigint;
  reserve: bigint;
  net: bigint;
  currency: string;
  entry_id: string;
  event_ids: string[];
  position: string;
}

/** The register rows in force of a sub-merchant's month, in time order, read through a cursor. */
export async function* statementLines(
  sql: Q,
  opts: {
    month: string;
    timezone: string;
    subMerchantId: string;
    currency?: string;
    atPosition?: Position;
    batch?: number;
  },
): AsyncIterable<StatementLine> {
  const { from, to } = monthBounds(opts.month, opts.timezone);
  const cut = opts.atPosition;
  const names = await receiversOf(sql, opts.subMerchantId, cut);
  if (names.length === 0) return;
  const params: unknown[] = [from, to, ...posParams(cut)];
  const posCond = (alias: string) =>
    cut ? `and (${alias}.commit_pos, ${alias}.prepare_pos) <= ($3::numeric, $4::numeric)` : '';
  params.push(names);
  const namesParam = `$${params.length}`;
  let currencyCond = '';
  if (opts.currency) {
    params.push(opts.currency);
    currencyCond = `and e.currency = $${params.length}`;
  }
  const query = sql.unsafe<LineRow[]>(
    `
    select e.booked_at, e.order_id, e.payment_id, e.method, e.status,
      case when e.method in ('refund', 'dispute') then -e.share else e.share end as share,
      e.fee, e.reserve, e.net, e.currency, e.entry_id, e.event_ids::text[] as event_ids, e.position
    from recon.journal_entries e
    where e.kind = 'settlement' and e.receiver_name = any(${namesParam}::text[]) ${currencyCond}
      and e.booked_at >= $1 and e.booked_at < $2 ${posCond('e')}
      and not exists (select 1 from recon.journal_entries r where r.reverses = e.entry_id ${posCond('r')})
    order by e.booked_at, e.entry_id`,
    params as never[],
  );
  for await (const rows of query.cursor(opts.batch ?? 500)) {
    for (const r of rows) {
      yield {
        at: r.booked_at,
        orderId: r.order_id,
        paymentId: r.payment_id,
        method: r.method,
        status: r.status,
        share: r.share,
        fee: r.fee,
        reserve: r.reserve,
        net: r.net,
        currency: r.currency,
        entryId: r.entry_id,
        eventIds: r.event_ids,
        position: r.position,
      };
    }
  }
}

/**
 * Each receiver's payable balance at the end of a month, as of a cut (every receiver, or the names given),
 * keyed `name \u0000 currency`: what a statement of that month stated per receiver name. A statement run
 * records them (StatementIssued.closings), so the next month opens at what was stated even if the directory
 * maps the names to other ids by then, or the journal is rebuilt by other rules.
 */
export async function closingsByReceiver(
  sql: Q,
  opts: { month: string; timezone: string; atPosition: Position; names?: readonly string[] },
): Promise<Map<string, bigint>> {
  const { to } = monthBounds(opts.month, opts.timezone);
  const params: unknown[] = [to, opts.atPosition.commit.toString(), opts.atPosition.prepare.toString()];
  let cond = '';
  if (opts.names) {
    params.push(opts.names);
    cond = `and l.receiver_name = any($4::text[])`;
  }
  const months = await keepsMonths(sql);
  if (months) params.push(opts.month, opts.timezone);
  const rows = await sql.unsafe<{ receiver: string; currency: string; closing: Sum }[]>(
    `
    select u.receiver_name as receiver, u.currency, coalesce(sum(u.opening), 0) as closing
    from (${payableRows({ from: null, to: '$1', month: `$${params.length - 1}`, zone: `$${params.length}`, cut: ['$2', '$3'], receiverCond: cond, months })}) u
    where u.receiver_name is not null
    group by u.receiver_name, u.currency
    having bool_or(u.present)`,
    params as never[],
  );
  return new Map(rows.map((r) => [`${r.receiver}\u0000${r.currency}`, BigInt(r.closing)]));
}

export interface AdjustmentEntry {
  /** when the entry is dated (before the statement's month) */
  readonly at: Date;
  /** settlement, reversal (of the entry `reverses`) or reserve_release */
  readonly kind: string;
  readonly reverses: string | null;
  readonly orderId: string | null;
  readonly paymentId: string;
  readonly method: string;
  readonly status: string;
  /** what the entry adds to the sub-merchant's balance (credit +) */
  readonly net: bigint;
  readonly currency: string;
  readonly entryId: string;
  readonly eventIds: string[];
  /** position of the event that wrote it ("commit/prepare"): after the previous statement's cut, or dated after its month */
  readonly position: string;
}

interface AdjustmentRow {
  booked_at: Date;
  kind: string;
  reverses: string | null;
  order_id: string | null;
  payment_id: string;
  method: string;
  status: string;
  net: bigint;
  currency: string;
  entry_id: string;
  event_ids: string[];
  position: string;
}

const ADJUSTMENT_COLUMNS = `e.booked_at, e.kind, e.reverses, e.order_id, e.payment_id, e.method, e.status, e.net, e.currency, e.entry_id, e.event_ids, e.position, e.commit_pos, e.prepare_pos`;

/**
 * The journal entries behind a statement's adjustments (see StatementFigures.adjustments): dated before the
 * month and not in the previous statement (written after its cut, or dated after its month), as of the cut.
 * Their nets add up to the adjustments. In date order, through a cursor.
 */
export async function* adjustmentEntries(
  sql: Q,
  opts: {
    month: string;
    timezone: string;
    subMerchantId: string;
    currency?: string;
    atPosition?: Position;
    /** `timezone`: the zone the previous statement was cut in, when it is not this one (a re-based run) */
    previous: { month: string; atPosition: Position; timezone?: string };
    batch?: number;
  },
): AsyncIterable<AdjustmentEntry> {
  const { from } = monthBounds(opts.month, opts.timezone);
  const prevTo = monthBounds(opts.previous.month, opts.previous.timezone ?? opts.timezone).to;
  const cut = opts.atPosition;
  const names = await receiversOf(sql, opts.subMerchantId, cut);
  if (names.length === 0) return;
  const params: unknown[] = [
    from,
    prevTo,
    opts.previous.atPosition.commit.toString(),
    opts.previous.atPosition.prepare.toString(),
    names,
  ];
  let cond = '';
  if (cut) {
    params.push(cut.commit.toString(), cut.prepare.toString());
    cond += ` and (e.commit_pos, e.prepare_pos) <= ($${params.length - 1}::numeric, $${params.length}::numeric)`;
  }
  if (opts.currency) {
    params.push(opts.currency);
    cond += ` and e.currency = $${params.length}`;
  }
  const adjusting = `e.receiver_name = any($5::text[]) and e.net <> 0 and e.row_key not like 'payout:%' and e.row_key not like 'write_off:%'`;
  const query = sql.unsafe<AdjustmentRow[]>(
    `
    select e.booked_at, e.kind, e.reverses, e.order_id, e.payment_id, e.method, e.status, e.net, e.currency, e.entry_id,
      e.event_ids::text[] as event_ids, e.position
    from (
      -- dated between the previous statement's month and this one (by the receiver's booking-time index)
      select ${ADJUSTMENT_COLUMNS} from recon.journal_entries e where e.booked_at >= $2 and e.booked_at < $1 and ${adjusting} ${cond}
      union all
      -- dated in or before the previous statement's month, written after its cut (by the receiver's position
      -- index): neither reads the receiver's entries the previous statement already stated
      select ${ADJUSTMENT_COLUMNS} from recon.journal_entries e
      where e.booked_at < $2 and e.booked_at < $1 and (e.commit_pos, e.prepare_pos) > ($3::numeric, $4::numeric) and ${adjusting} ${cond}
    ) e
    order by e.booked_at, e.commit_pos, e.prepare_pos, e.entry_id`,
    params as never[],
  );
  for await (const rows of query.cursor(opts.batch ?? 500)) {
    for (const r of rows) {
      yield {
        at: r.booked_at,
        kind: r.kind,
        reverses: r.reverses,
        orderId: r.order_id,
        paymentId: r.payment_id,
        method: r.method,
        status: r.status,
        net: r.net,
        currency: r.currency,
        entryId: r.entry_id,
        eventIds: r.event_ids,
        position: r.position,
      };
    }
  }
}

/**
 * Reserves of a sub-merchant that concern the month: held in it, or released in it. `released` is what
 * was released by the month's end.
 */
export async function reserveSchedule(
  sql: Q,
  opts: { month: string; timezone: string; subMerchantId: string; atPosition?: Position },
): Promise<ReserveRow[]> {
  const { from, to } = monthBounds(opts.month, opts.timezone);
  const cut = opts.atPosition;
  const names = await receiversOf(sql, opts.subMerchantId, cut);
  if (names.length === 0) return [];
  const params: unknown[] = [from, to, ...posParams(cut)];
  const posCond = (alias: string) =>
    cut ? `and (${alias}.commit_pos, ${alias}.prepare_pos) <= ($3::numeric, $4::numeric)` : '';
  params.push(names);
  const reserves = `e.kind = 'settlement' and e.reserve <> 0 and e.receiver_name = any($${params.length}::text[]) ${posCond('e')}`;
  // the release days that can fall in the month: its first day less one to the next month's first day
  const first = DateTime.fromISO(`${opts.month}-01`, { zone: 'UTC' });
  const days = { first: first.minus({ days: 1 }).toISODate()!, last: first.plus({ months: 1 }).toISODate()! };
  const rows = await sql.unsafe<{ held_on: string; currency: string; held: Sum; release_on: string; released: Sum }[]>(
    `
    with held as (
      -- held in the month, or released in it (a day either side of its days: the exact test is below), by the
      -- receiver's reserve indexes: not every reserve the receiver ever had
      select e.entry_id, e.booked_on, e.currency, e.reserve, e.release_on, e.booked_at from recon.journal_entries e
      where ${reserves} and e.booked_at >= $1 and e.booked_at < $2
      union
      select e.entry_id, e.booked_on, e.currency, e.reserve, e.release_on, e.booked_at from recon.journal_entries e
      where ${reserves} and e.release_on >= $${params.length + 2}::date and e.release_on <= $${params.length + 3}::date
    ),
    rel as (
      select e.entry_id, e.booked_on as held_on, e.currency, e.reserve, e.release_on, e.booked_at,
        ((e.release_on::timestamp) at time zone $${params.length + 1}) as release_at
      from held e
      where not exists (select 1 from recon.journal_entries r where r.reverses = e.entry_id ${posCond('r')})
    )
    select to_char(held_on, 'YYYY-MM-DD') as held_on, currency, sum(reserve) as held, to_char(release_on, 'YYYY-MM-DD') as release_on,
      sum(case when release_at < $2 then reserve else 0 end) as released
    from rel
    where (booked_at >= $1 and booked_at < $2) or (release_at >= $1 and release_at < $2)
    group by held_on, currency, release_on
    order by held_on, currency, release_on`,
    [...params, opts.timezone, days.first, days.last] as never[],
  );
  return rows.map((r) => ({
    heldOn: r.held_on,
    currency: r.currency,
    held: BigInt(r.held),
    releaseOn: r.release_on,
    released: BigInt(r.released),
  }));
}

/** The order of every per-sub-merchant listing: by sub-merchant id, then currency (code-point order, stable). */
export function bySubMerchantAndCurrency(
  a: { readonly subMerchantId: string; readonly currency: string },
  b: { readonly subMerchantId: string; readonly currency: string },
): number {
  if (a.subMerchantId !== b.subMerchantId) return a.subMerchantId < b.subMerchantId ? -1 : 1;
  return a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;
}
