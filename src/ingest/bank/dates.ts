import { type Checked, DEFAULT_PLAUSIBLE_DATES, plausibleDay, quoteForMessage } from '../../input-rules';

/**
 * Every day a bank file gives goes through the shared rule (src/input-rules.ts, docs/bad-input.md): strict
 * YYYY-MM-DD, a day of the calendar, within the plausible range (2000-01-01 to ten years ahead). A day outside
 * is a placeholder (0000-01-01, 9999-12-31) or a typo, and once stored it would stop every projection.
 */

/** A day of the calendar in the plausible range, or the reason it is not one. */
export function bankDay(text: string): Checked<string> {
  // a statement has few distinct days and many entries: each day is checked once (per day of the clock,
  // since the range ends ten years after today)
  const today = Math.floor(Date.now() / 86_400_000);
  if (today !== checkedOn) {
    CHECKED.clear();
    checkedOn = today;
  }
  let r = CHECKED.get(text);
  if (r === undefined) {
    r = plausibleDay(text, DEFAULT_PLAUSIBLE_DATES);
    if (CHECKED.size > 10_000) CHECKED.clear();
    CHECKED.set(text, r);
  }
  return r;
}

const CHECKED = new Map<string, Checked<string>>();
let checkedOn = -1;

/** ISO 20022 ISODateTime: a local time or one with its zone; nothing after it. */
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.\d{1,9})?(?:Z|[+-](?:0\d|1[0-4]):[0-5]\d)?$/;

/**
 * camt gives a day (`Dt`, ISODate) or a date-time (`DtTm`, ISODateTime): the day as the bank wrote it. Both
 * strict: `2025-01-02Tgarbage`, `2025-01-02 10:00` or a day with a time after it in `Dt` are refused.
 */
export function dayOfCamt(text: string, element: 'Dt' | 'DtTm'): Checked<string> {
  const t = text.trim();
  if (element === 'Dt') return bankDay(t);
  const m = DATE_TIME.exec(t);
  if (!m) return { ok: false, reason: `not a date-time in the form YYYY-MM-DDTHH:MM:SS[zone]: ${quoteForMessage(t)}` };
  return bankDay(m[1]!);
}

/**
 * MT940 YYMMDD: years 80–99 are 19xx, the rest 20xx (so that 991231 is named as 1999-12-31, before the
 * plausible range, rather than as a day in 2099).
 */
export function dayOfYymmdd(text: string): Checked<string> {
  if (!/^\d{6}$/.test(text)) return { ok: false, reason: `not a date in the form YYMMDD: ${quoteForMessage(text)}` };
  const yy = Number(text.slice(0, 2));
  return bankDay(`${yy >= 80 ? 19 : 20}${text.slice(0, 2)}-${text.slice(2, 4)}-${text.slice(4, 6)}`);
}
