import { DateTime } from 'luxon';

/** A day of the calendar (YYYY-MM-DD) or null: 2025-02-30 has the shape and is not one. */
export function calendarDay(text: string): string | null {
  const t = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(t)) return null;
  // a statement has few distinct days and many entries: each day is checked once
  let ok = CHECKED.get(t);
  if (ok === undefined) {
    ok = DateTime.fromISO(t, { zone: 'UTC' }).isValid;
    if (CHECKED.size > 10_000) CHECKED.clear();
    CHECKED.set(t, ok);
  }
  return ok ? t : null;
}

const CHECKED = new Map<string, boolean>();

/** camt gives a day (`Dt`) or a date-time (`DtTm`): the day as the bank wrote it. */
export function dayOfDateTime(text: string): string | null {
  const t = text.trim();
  return calendarDay(t.slice(0, 10)) !== null && (t.length === 10 || t[10] === 'T') ? t.slice(0, 10) : null;
}

/** MT940 YYMMDD: years 80–99 are 19xx, the rest 20xx. */
export function dayOfYymmdd(text: string): string | null {
  if (!/^\d{6}$/.test(text)) return null;
  const yy = Number(text.slice(0, 2));
  return calendarDay(`${yy >= 80 ? 19 : 20}${text.slice(0, 2)}-${text.slice(2, 4)}-${text.slice(4, 6)}`);
}
