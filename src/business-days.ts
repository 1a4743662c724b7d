import { DateTime } from 'luxon';

/**
 * Business days of RECON_TIMEZONE as calendar dates (yyyy-mm-dd): Saturdays, Sundays and the configured
 * holidays are not business days. The dates are already local days, so the arithmetic is on plain dates.
 */

function parseDay(day: string): DateTime {
  const d = DateTime.fromISO(day, { zone: 'UTC' });
  if (!d.isValid) throw new RangeError(`not a date: ${JSON.stringify(day)} (expected YYYY-MM-DD)`);
  return d;
}

export function isBusinessDay(day: string, holidays: ReadonlySet<string>): boolean {
  return parseDay(day).weekday <= 5 && !holidays.has(day);
}

/**
 * Results already computed, per holiday set (the same Set object: callers keep one per configuration,
 * src/reconciliation/settlement/state.ts `holidaysOf`) and per question. Both functions below are pure in their
 * arguments, and the cash leg asks the same few questions (a month's days, a few lags) at every append:
 * luxon's date arithmetic was most of its judging before. A set never seen again is collected with its results.
 */
const answers = new WeakMap<ReadonlySet<string>, Map<string, string | number>>();
const MAX_ANSWERS = 100_000;

function remembered<T extends string | number>(holidays: ReadonlySet<string>, key: string, work: () => T): T {
  let known = answers.get(holidays);
  if (!known) {
    known = new Map();
    answers.set(holidays, known);
  }
  const hit = known.get(key);
  if (hit !== undefined) return hit as T;
  const r = work();
  if (known.size >= MAX_ANSWERS) known.clear();
  known.set(key, r);
  return r;
}

/** The n-th business day after `day` (n = 0: `day` itself when it is a business day, else the next one). */
export function addBusinessDays(day: string, n: number, holidays: ReadonlySet<string>): string {
  return remembered(holidays, `+${day}|${n}`, () => addBusinessDaysOnce(day, n, holidays));
}

function addBusinessDaysOnce(day: string, n: number, holidays: ReadonlySet<string>): string {
  let d = parseDay(day);
  let left = n;
  const ok = (x: DateTime) => x.weekday <= 5 && !holidays.has(x.toISODate()!);
  if (left === 0) {
    while (!ok(d)) d = d.plus({ days: 1 });
    return d.toISODate()!;
  }
  while (left > 0) {
    d = d.plus({ days: 1 });
    if (ok(d)) left--;
  }
  return d.toISODate()!;
}

/** The day the PSP pays the money of an activity day: `lag` business days later. */
export function settlementDayOf(activityDay: string, lag: number, holidays: ReadonlySet<string>): string {
  return addBusinessDays(activityDay, lag, holidays);
}

/** Business days in (from, to]: 0 when `to` is not after `from`. */
export function businessDaysAfter(from: string, to: string, holidays: ReadonlySet<string>): number {
  if (to <= from) return 0;
  return remembered(holidays, `(${from}|${to}`, () => businessDaysBetween(from, to, holidays));
}

function businessDaysBetween(from: string, to: string, holidays: ReadonlySet<string>): number {
  let d = parseDay(from);
  let n = 0;
  for (;;) {
    d = d.plus({ days: 1 });
    const iso = d.toISODate()!;
    if (iso > to) return n;
    if (d.weekday <= 5 && !holidays.has(iso)) n++;
  }
}
