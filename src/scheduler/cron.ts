import cron from 'node-cron';
import { DateTime, IANAZone } from 'luxon';

/**
 * Cron expressions, validated and parsed by node-cron, evaluated in the business time zone with luxon so
 * that the next run time can be computed from any clock (a fake one in tests).
 *
 * Local-time rules (documented in docs/outputs.md):
 * - a wall time that does not exist on a spring-forward day (02:30 when clocks jump from 02:00 to 03:00)
 *   still runs, one hour later in wall time (the same instant luxon gives for it), so a nightly job is
 *   never lost on a DST day;
 * - a wall time that happens twice on a fall-back day runs once, at its first occurrence;
 * - day of month and day of week must both match (node-cron's rule, not Vixie cron's "either").
 */

export interface CronSchedule {
  readonly expression: string;
  readonly zone: string;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** numbers, or -1 for "L" (last day of the month) */
  readonly days: readonly number[];
  readonly months: readonly number[];
  /** 0 = Sunday … 6 = Saturday */
  readonly weekdays: readonly number[];
}

export type CronParse = { ok: true; schedule: CronSchedule } | { ok: false; reason: string };

export function parseCron(expression: string, zone: string): CronParse {
  const detailed = cron.validateDetailed(expression);
  if (!detailed.valid || !detailed.fields) {
    return { ok: false, reason: detailed.errors.map((e) => e.message).join('; ') || 'not a cron expression' };
  }
  const f = detailed.fields;
  const days: number[] = [];
  for (const d of f.dayOfMonth) {
    if (typeof d === 'number') days.push(d);
    else if (d === 'L') days.push(-1);
    else return { ok: false, reason: `day of month "${d}" is not supported (numbers, ranges, steps and L only)` };
  }
  const weekdays: number[] = [];
  for (const d of f.dayOfWeek) {
    if (typeof d === 'number') weekdays.push(d % 7);
    else return { ok: false, reason: `day of week "${d}" is not supported (numbers, names, ranges and steps only)` };
  }
  const asc = (xs: readonly number[]) => [...new Set(xs)].sort((a, b) => a - b);
  return {
    ok: true,
    schedule: {
      expression,
      zone,
      seconds: asc(f.second),
      minutes: asc(f.minute),
      hours: asc(f.hour),
      days: asc(days),
      months: asc(f.month),
      weekdays: asc(weekdays),
    },
  };
}

/** True when node-cron accepts the expression and this scheduler supports every field in it. */
export function validateCron(expression: string): boolean {
  return cron.validate(expression) && parseCron(expression, 'UTC').ok;
}

function dayMatches(s: CronSchedule, d: DateTime): boolean {
  if (!s.months.includes(d.month)) return false;
  if (!s.weekdays.includes(d.weekday % 7)) return false;
  return s.days.includes(d.day) || (s.days.includes(-1) && d.day === d.daysInMonth);
}

/** A zone's UTC offset (minutes) at an instant. */
type OffsetAt = (ms: number) => number;

interface Offsets {
  readonly at: OffsetAt;
  /** smallest and largest offset in the span (minutes) */
  readonly min: number;
  readonly max: number;
}

/**
 * The zone's offsets over `[lo, hi]` as a plain function. luxon reads each offset through Intl (several
 * microseconds), and a schedule with seconds tries 86,400 wall times a day: asked of luxon one by one, that
 * blocked the worker's event loop (and its webhook receiver) for about a second per run time. Assumes at
 * most one offset change in the span (2½ days here; real zones change at most twice a year).
 */
function offsetsOver(zone: IANAZone, lo: number, hi: number): Offsets {
  const first = zone.offset(lo);
  const last = zone.offset(hi);
  const range = { min: Math.min(first, last), max: Math.max(first, last) };
  if (first === last) return { at: () => first, ...range };
  let a = lo;
  let b = hi; // offset(a) = first, offset(b) = last: bisect to the first instant of the new offset
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (zone.offset(mid) === first) a = mid;
    else b = mid;
  }
  return { at: (ms) => (ms < b ? first : last), ...range };
}

function instantOfWall(offsetAt: OffsetAt, wall: number): number {
  const before = offsetAt(wall - 43_200_000);
  const after = offsetAt(wall + 43_200_000);
  let best: number | undefined;
  for (const off of before === after ? [before] : [before, after]) {
    const instant = wall - off * 60_000;
    if (offsetAt(instant) === off && (best === undefined || instant < best)) best = instant;
  }
  // In a gap: no offset reads back. Use the offset in force before the gap.
  return best ?? wall - before * 60_000;
}

// Far enough for "29 February on a Monday" style expressions.
const MAX_DAYS = 366 * 30;
const HOUR_MS = 3_600_000;

/** The first run time strictly after `after`. */
export function nextRun(s: CronSchedule, after: Date): Date {
  const afterMs = after.getTime();
  const zone = IANAZone.create(s.zone);
  // Start a day early: a shifted (nonexistent) wall time of the previous local day can fall after `after`.
  let day = DateTime.fromMillis(afterMs, { zone: s.zone }).startOf('day').minus({ days: 1 });
  for (let i = 0; i < MAX_DAYS; i++, day = day.plus({ days: 1 })) {
    if (!dayMatches(s, day)) continue;
    const wallDay = Date.UTC(day.year, day.month - 1, day.day);
    // Every offset read for this day's wall times (±12 h around them, ±14 h offsets) lies in this span.
    const offsets = offsetsOver(zone, wallDay - 16 * HOUR_MS, wallDay + 40 * HOUR_MS);
    // A wall time's instant lies within [wall − max offset, wall − min offset]: whole hours and minutes that
    // cannot hold the answer are skipped without reading their wall times (the minimum stays exact).
    const lastSecond = s.seconds[s.seconds.length - 1]! * 1000;
    const lastMinute = s.minutes[s.minutes.length - 1]! * 60_000 + lastSecond;
    let best: number | undefined;
    const canHold = (fromWall: number, toWall: number) =>
      toWall - offsets.min * 60_000 > afterMs && (best === undefined || fromWall - offsets.max * 60_000 < best);
    for (const hour of s.hours) {
      const h = wallDay + hour * HOUR_MS;
      if (!canHold(h, h + lastMinute)) continue;
      for (const minute of s.minutes) {
        const m = h + minute * 60_000;
        if (!canHold(m, m + lastSecond)) continue;
        for (const second of s.seconds) {
          const ms = instantOfWall(offsets.at, m + second * 1000);
          if (ms > afterMs && (best === undefined || ms < best)) best = ms;
        }
      }
    }
    if (best !== undefined) return new Date(best);
  }
  throw new RangeError(`cron "${s.expression}" has no run time in the next ${MAX_DAYS} days`);
}

/**
 * The latest run time in (`after`, `at`], or undefined when there is none. Bisected on whole milliseconds (about
 * 45 `nextRun` calls for a year): stepping through every run time between took as many calls as were missed.
 */
export function latestRunBetween(s: CronSchedule, after: Date, at: Date): Date | undefined {
  const end = at.getTime();
  let lo = after.getTime();
  if (nextRun(s, after).getTime() > end) return undefined;
  // nextRun(x) ≤ at holds for x below the latest run time and for no x at or above it
  let hi = end;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (nextRun(s, new Date(mid)).getTime() <= end) lo = mid;
    else hi = mid;
  }
  return nextRun(s, new Date(lo));
}

/** The next `count` run times after `after`. */
export function nextRuns(s: CronSchedule, after: Date, count: number): Date[] {
  const out: Date[] = [];
  let t = after;
  for (let i = 0; i < count; i++) {
    t = nextRun(s, t);
    out.push(t);
  }
  return out;
}
