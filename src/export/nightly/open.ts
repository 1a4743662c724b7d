import { DateTime } from 'luxon';
import type { Sql } from '../../db/connect';
import { allDiscrepancies, subMerchantNames, subMerchantsOf } from '../../reconciliation/discrepancy-queries';
import { amountInDoubt, moneyText } from '../../reconciliation/discrepancy-summary';
import { counted } from '../i18n/labels';
import { addDays, dayStart, monthBounds } from '../../journal-rules';

/**
 * The nightly report's view of the discrepancies as they stood at the end of its business day: which were
 * open then (from their detection, resolution and acceptance times, not their status now), how old they
 * were, the money they put in doubt per currency and sub-merchant, the oldest, and the month to that day.
 * A past day reads the same times, so `--date D` shows what was open on D.
 *
 * A difference stands from when the money was due or the operation happened (`since`: the discrepancy's
 * occurred_at), not from when recon first ran: a month synced weeks later still shows, on its last day, what
 * was wrong then, aged from then. One that recon found only after the day and that has been resolved since
 * is not counted on it: the data that cleared it came with the data that raised it (an order the PSP's
 * records of the same sync paid).
 */

/** The times of one discrepancy that decide whether it was open at an instant, and what it concerns. */
export interface DiscrepancyTimes {
  readonly id: string;
  readonly type: string;
  /** when recon found it (its occurrence when the projection had no clock yet) */
  readonly detectedAt: Date;
  /** when the difference arose: the money due or the operation's time (absent: `detectedAt`) */
  readonly since?: Date;
  /** its resolution now (null: none) */
  readonly resolvedAt: Date | null;
  /**
   * each resolution the rule ended by finding it again, with the time it was found again, oldest first
   * ([resolved, found again, …]; null: the projection had no clock yet, taken as its detection)
   */
  readonly pastResolvedAt?: readonly (Date | null)[];
  readonly acceptedAt: Date | null;
  /** each acceptance taken back, with when it was revoked, oldest first ([accepted, revoked, …]) */
  readonly pastAcceptedAt?: readonly (Date | null)[];
  readonly currency: string | null;
  readonly subMerchantIds: readonly string[];
  /** the money in doubt, minor units; null: no amount */
  readonly amount: bigint | null;
}

const sinceOf = (d: DiscrepancyTimes): Date => d.since ?? d.detectedAt;

/**
 * A time as it stood at `at`, from its value now and its past values, each with when it ended ([set, ended, …]):
 * the first one not yet ended at `at` (one ended later stood then), else the one now. A null time in the past:
 * the projection had no clock yet, taken as the detection.
 */
function asOf(now: Date | null, past: readonly (Date | null)[], d: DiscrepancyTimes, at: Date): Date | null {
  for (let i = 0; i + 1 < past.length; i += 2)
    if ((past[i + 1] ?? d.detectedAt).getTime() >= at.getTime()) return past[i] ?? d.detectedAt;
  return now;
}

/** Its resolution as it stood at `at`: a day between a resolution and the finding again reads it resolved. */
export const resolvedAsOf = (d: DiscrepancyTimes, at: Date): Date | null =>
  asOf(d.resolvedAt, d.pastResolvedAt ?? [], d, at);

/** Its acceptance as it stood at `at`: a day between an acceptance and its revocation reads it accepted. */
export const acceptedAsOf = (d: DiscrepancyTimes, at: Date): Date | null =>
  asOf(d.acceptedAt, d.pastAcceptedAt ?? [], d, at);

/** `asOf` over a discrepancy view's columns (unqualified: the innermost FROM's); names are this file's. */
function asOfSql(sql: Sql, column: 'resolved_at' | 'accepted_at', past: string, at: Date) {
  const [now, p] = [sql.unsafe(column), sql.unsafe(past)];
  return sql`case when coalesce(cardinality(${p}), 0) = 0 then ${now} else coalesce(
    (select coalesce(${p}[i], detected_at, occurred_at) from generate_series(1, cardinality(${p}) - 1, 2) i
      where coalesce(${p}[i + 1], detected_at, occurred_at) >= ${at} order by i limit 1),
    ${now}) end`;
}

/** `resolvedAsOf` over a discrepancy view's columns. */
export const resolvedAsOfSql = (sql: Sql, at: Date) => asOfSql(sql, 'resolved_at', 'past_resolved_at', at);

/** `acceptedAsOf` over a discrepancy view's columns. */
export const acceptedAsOfSql = (sql: Sql, at: Date) => asOfSql(sql, 'accepted_at', 'past_accepted_at', at);

/**
 * Open at `at`: arisen before it, not accepted before it, and not resolved before it; a resolved one only
 * if recon had found it before `at` (found later and cleared since, it never stood as a difference on the
 * day). The SQL of the same rule: `openAtSql`.
 */
export function openAt(d: DiscrepancyTimes, at: Date): boolean {
  const t = at.getTime();
  const resolved = resolvedAsOf(d, at);
  const accepted = acceptedAsOf(d, at);
  return (
    sinceOf(d).getTime() < t &&
    (resolved === null || (resolved.getTime() >= t && d.detectedAt.getTime() < t)) &&
    (accepted === null || accepted.getTime() >= t)
  );
}

/** `openAt` over a discrepancy view's columns (unqualified: the innermost FROM's), for the report's counts. */
export function openAtSql(sql: Sql, at: Date) {
  const resolved = resolvedAsOfSql(sql, at);
  return sql`coalesce(occurred_at, detected_at) < ${at} and coalesce(${acceptedAsOfSql(sql, at)}, ${at}) >= ${at}
    and ((${resolved}) is null or ((${resolved}) >= ${at} and coalesce(detected_at, occurred_at) < ${at}))`;
}

/** Arose in [from, to) and counted by `openAt` at `to` or resolved by then (the day's or month's new ones). */
export function aroseWithinSql(sql: Sql, from: Date, to: Date) {
  return sql`coalesce(occurred_at, detected_at) >= ${from} and coalesce(occurred_at, detected_at) < ${to}
    and ((${resolvedAsOfSql(sql, to)}) is null or coalesce(detected_at, occurred_at) < ${to})`;
}

/** Business days from the day an instant falls on to `day` (both in `zone`), counted on the calendar. */
export function ageInDays(detectedAt: Date, day: string, zone: string): number {
  const detected = DateTime.fromJSDate(detectedAt, { zone }).toISODate()!;
  const a = DateTime.fromISO(detected, { zone: 'utc' });
  const b = DateTime.fromISO(day, { zone: 'utc' });
  return Math.round(b.diff(a, 'days').days);
}

export interface AgeBucket {
  readonly label: string;
  readonly min: number;
  /** inclusive; null: no upper bound */
  readonly max: number | null;
}

export const AGE_BUCKETS: readonly AgeBucket[] = [
  { label: '0–2 days', min: 0, max: 2 },
  { label: '3–7 days', min: 3, max: 7 },
  { label: '8–30 days', min: 8, max: 30 },
  { label: 'over 30 days', min: 31, max: null },
];

export const bucketOf = (age: number): AgeBucket =>
  AGE_BUCKETS.find((b) => age >= b.min && (b.max === null || age <= b.max)) ?? AGE_BUCKETS[0]!;

/** An open discrepancy with its age on the report's day. */
export interface OpenItem extends DiscrepancyTimes {
  readonly ageDays: number;
  readonly bucket: string;
}

/** Count and money of a set of discrepancies in one currency ('' when they concern no amount). */
export interface CountAndAmount {
  readonly currency: string;
  readonly count: number;
  readonly amount: bigint;
}

export interface AgeingRow extends CountAndAmount {
  readonly bucket: string;
}

export interface InDoubtRow extends CountAndAmount {
  /** sorted; empty: no sub-merchant (the marketplace's own, a bank line, a settlement) */
  readonly subMerchantIds: readonly string[];
  readonly names: readonly string[];
}

export interface MonthToDateRow {
  readonly currency: string;
  readonly detected: number;
  readonly detectedAmount: bigint;
  readonly resolved: number;
  readonly resolvedAmount: bigint;
  readonly accepted: number;
  readonly acceptedAmount: bigint;
  readonly open: number;
  readonly openAmount: bigint;
}

export interface OpenOnDay {
  readonly date: string;
  readonly timezone: string;
  /** the end of the business day: what was open at this instant */
  readonly asAt: Date;
  readonly monthFrom: Date;
  readonly open: readonly OpenItem[];
  /** every bucket, with a row per currency; a bucket with nothing open has one row with count 0 */
  readonly ageing: readonly AgeingRow[];
  readonly inDoubt: readonly InDoubtRow[];
  readonly oldest: OpenItem | null;
  readonly monthToDate: readonly MonthToDateRow[];
  /** sub-merchant id → the directory's name */
  readonly names: ReadonlyMap<string, string>;
}

const byCurrency = (a: { currency: string }, b: { currency: string }) =>
  a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;

/** Adds one discrepancy to a per-key tally, the amount in bigint, per currency. */
function tally<K extends string>(m: Map<K, { count: number; amount: bigint }>, key: K, amount: bigint | null): void {
  const t = m.get(key) ?? { count: 0, amount: 0n };
  t.count++;
  t.amount += amount ?? 0n;
  m.set(key, t);
}

/**
 * What the day's view gathers as it reads the discrepancies, in any order: the open ones, the month's tallies
 * per currency and the sub-merchants named. A month's store holds a million discrepancies touched in the
 * month at 1M payments (one resolved `order_not_at_psp` an order), so they are folded in as they are read.
 */
export interface DayFold {
  readonly asAt: Date;
  readonly monthFrom: Date;
  readonly open: DiscrepancyTimes[];
  readonly month: Map<string, MonthToDateRow>;
  readonly subMerchants: Set<string>;
}

export function startDay(date: string, timezone: string): DayFold {
  return { ...dayBounds(date, timezone), open: [], month: new Map(), subMerchants: new Set() };
}

/** Adds one discrepancy to the day's view. */
export function foldDay(f: DayFold, d: DiscrepancyTimes): void {
  const { asAt, monthFrom } = f;
  for (const id of d.subMerchantIds) f.subMerchants.add(id);
  const within = (t: Date | null) => t !== null && t >= monthFrom && t < asAt;
  const isOpen = openAt(d, asAt);
  if (isOpen) f.open.push(d);
  const resolved = resolvedAsOf(d, asAt);
  const accepted = acceptedAsOf(d, asAt);
  // new in the month: arisen in it, unless found after the day and resolved since (never stood on it)
  const arose = within(sinceOf(d)) && (resolved === null || d.detectedAt < asAt);
  if (!arose && !within(resolved) && !within(accepted) && !isOpen) return;
  const c = d.currency ?? '';
  const a = d.amount ?? 0n;
  const r = { ...(f.month.get(c) ?? emptyMonthRow(c)) };
  if (arose) Object.assign(r, { detected: r.detected + 1, detectedAmount: r.detectedAmount + a });
  if (within(resolved)) Object.assign(r, { resolved: r.resolved + 1, resolvedAmount: r.resolvedAmount + a });
  if (within(accepted)) Object.assign(r, { accepted: r.accepted + 1, acceptedAmount: r.acceptedAmount + a });
  if (isOpen) Object.assign(r, { open: r.open + 1, openAmount: r.openAmount + a });
  f.month.set(c, r);
}

const emptyMonthRow = (currency: string): MonthToDateRow => ({
  currency,
  detected: 0,
  detectedAmount: 0n,
  resolved: 0,
  resolvedAmount: 0n,
  accepted: 0,
  acceptedAmount: 0n,
  open: 0,
  openAmount: 0n,
});

/** The open set aged, the ageing, the money in doubt and the oldest item, from what the fold gathered. */
export function finishDay(
  f: DayFold,
  date: string,
  timezone: string,
  names: ReadonlyMap<string, string> = new Map(),
): OpenOnDay {
  const open = f.open
    .map((d): OpenItem => {
      const ageDays = ageInDays(sinceOf(d), date, timezone);
      return { ...d, ageDays, bucket: bucketOf(ageDays).label };
    })
    .sort((a, b) => sinceOf(a).getTime() - sinceOf(b).getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const ageing: AgeingRow[] = [];
  for (const b of AGE_BUCKETS) {
    const per = new Map<string, { count: number; amount: bigint }>();
    for (const d of open) if (d.bucket === b.label) tally(per, d.currency ?? '', d.amount);
    const rows = [...per].map(([currency, t]) => ({ bucket: b.label, currency, ...t })).sort(byCurrency);
    ageing.push(...(rows.length ? rows : [{ bucket: b.label, currency: '', count: 0, amount: 0n }]));
  }

  const doubt = new Map<string, { count: number; amount: bigint }>();
  for (const d of open) tally(doubt, JSON.stringify([d.currency ?? '', [...d.subMerchantIds]]), d.amount);
  const inDoubt = [...doubt]
    .map(([k, t]): InDoubtRow => {
      const [currency, ids] = JSON.parse(k) as [string, string[]];
      return { currency, subMerchantIds: ids, names: ids.map((id) => names.get(id) ?? ''), ...t };
    })
    .sort((a, b) => byCurrency(a, b) || (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0));

  return {
    date,
    timezone,
    asAt: f.asAt,
    monthFrom: f.monthFrom,
    open,
    ageing,
    inDoubt,
    oldest: open[0] ?? null,
    monthToDate: [...f.month.values()].sort(byCurrency),
    names,
  };
}

/**
 * The open set, ageing, money in doubt, oldest item and month to date at the end of `date`, from the
 * discrepancies' times alone (a pure function, so that a test can state the history and the expectation).
 */
export function openOnDay(
  all: readonly DiscrepancyTimes[],
  date: string,
  timezone: string,
  names: ReadonlyMap<string, string> = new Map(),
): OpenOnDay {
  const f = startDay(date, timezone);
  for (const d of all) foldDay(f, d);
  return finishDay(f, date, timezone, names);
}

/** The end of the business day (the next day's start) and the start of its month, in the zone. */
export function dayBounds(date: string, timezone: string): { asAt: Date; monthFrom: Date } {
  // cut as the statements cut months (journal-rules `dayStart`): where the clock changes at local midnight,
  // luxon's start of a day plus a day is not the next day's start
  return { asAt: dayStart(addDays(date, 1), timezone), monthFrom: monthBounds(date.slice(0, 7), timezone).from };
}

type TimesRow = {
  id: string;
  type: string;
  detected: Date;
  since: Date;
  resolved_at: Date | null;
  accepted_at: Date | null;
  currency: string | null;
  sub_merchant_id: string | null;
  sub_merchant_ids: string[] | null;
  values: Record<string, unknown> | null;
};

const timesOf = (r: TimesRow): DiscrepancyTimes => ({
  id: r.id,
  type: r.type,
  detectedAt: r.detected,
  since: r.since,
  resolvedAt: r.resolved_at,
  acceptedAt: r.accepted_at,
  currency: r.currency,
  subMerchantIds: subMerchantsOf({ sub_merchant_id: r.sub_merchant_id, sub_merchant_ids: r.sub_merchant_ids ?? [] }),
  amount: amountInDoubt({ type: r.type, values: r.values ?? {}, currency: r.currency }),
});

/**
 * The times of the discrepancies that matter for `date`'s report, handed to `each` as they are read (1,000
 * rows a fetch): open at the day's end, or arisen, resolved or accepted in its month, as `foldDay` counts
 * them. Every discrepancy view, read as one. A month's orders found after the day and resolved since (a
 * million at 1M payments, when the report is written after the month) are left out here, not read and dropped.
 */
export async function eachDiscrepancyTimes(
  sql: Sql,
  date: string,
  timezone: string,
  each: (d: DiscrepancyTimes) => void,
): Promise<void> {
  const { asAt, monthFrom } = dayBounds(date, timezone);
  // its resolution and acceptance as they stood at the day's end (one ended since included)
  const resolved = resolvedAsOfSql(sql, asAt);
  const accepted = acceptedAsOfSql(sql, asAt);
  const query = sql<TimesRow[]>`
    select id::text, type, coalesce(detected_at, occurred_at) as detected, coalesce(occurred_at, detected_at) as since,
      ${resolved} as resolved_at, ${accepted} as accepted_at, currency, sub_merchant_id, sub_merchant_ids, "values"
    from ${sql.unsafe(await allDiscrepancies(sql))}
    where coalesce(occurred_at, detected_at) < ${asAt}
      and ((${openAtSql(sql, asAt)}) or (${aroseWithinSql(sql, monthFrom, asAt)})
        or ((${resolved}) >= ${monthFrom} and (${resolved}) < ${asAt})
        or ((${accepted}) >= ${monthFrom} and (${accepted}) < ${asAt}))`;
  for await (const rows of query.cursor(1000)) for (const r of rows) each(timesOf(r));
}

/** Reads the times and the sub-merchants' names, and builds the day's view. */
export async function openOnDayFrom(sql: Sql, date: string, timezone: string): Promise<OpenOnDay> {
  const f = startDay(date, timezone);
  await eachDiscrepancyTimes(sql, date, timezone, (d) => foldDay(f, d));
  return finishDay(f, date, timezone, await subMerchantNames(sql, [...f.subMerchants].sort()));
}

const days = counted('en-GB', { one: 'day', other: 'days' });

/** The day's ageing and money in doubt in a few lines of plain text (the command's summary). */
export function ageingLines(v: OpenOnDay): string[] {
  const counts = AGE_BUCKETS.map((b) => {
    const n = v.ageing.filter((r) => r.bucket === b.label).reduce((a, r) => a + r.count, 0);
    return `${b.label} ${n}`;
  });
  const perCurrency = new Map<string, bigint>();
  for (const r of v.inDoubt)
    if (r.currency) perCurrency.set(r.currency, (perCurrency.get(r.currency) ?? 0n) + r.amount);
  const money = [...perCurrency].map(([c, a]) => moneyText(a, c));
  return [
    `ageing: ${counts.join(', ')}`,
    `in doubt: ${money.join(', ') || 'nothing'}`,
    v.oldest ? `oldest: ${v.oldest.type} ${v.oldest.id}, ${days(v.oldest.ageDays)} open` : 'oldest: none',
  ];
}
