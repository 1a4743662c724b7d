import { DateTime, IANAZone } from 'luxon';

/**
 * Sync windows: `[from, to)` in local days of the business time zone, cut into consecutive windows
 * aligned to local midnight. The PSP refuses a register period over 31 days; a window of 31 local days
 * that contains the autumn daylight-saving change lasts 31 × 24 h plus the shift, so such a window is
 * one day shorter. Windows cover the range exactly once: no gap, no overlap.
 */

export interface SyncWindow {
  /** Local midnight starting the window, as an instant. */
  readonly from: Date;
  /** Local midnight ending the window (exclusive), as an instant. */
  readonly to: Date;
  /** Local day of `from` (yyyy-MM-dd). */
  readonly fromDay: string;
  /** Local day of `to`, exclusive (yyyy-MM-dd). */
  readonly toDay: string;
}

const HOUR_MS = 3_600_000;

/**
 * Reads a bound as a local day. A string is a day (`yyyy-MM-dd`) or an ISO instant; a DateTime is an
 * instant. An instant inside a day counts from that day's midnight for `from` (`floor`) and up to the
 * next midnight for `to` (`ceil`), so that the windows always cover what was asked.
 */
function localDay(value: DateTime | string, zone: string, round: 'floor' | 'ceil'): DateTime {
  const dt =
    typeof value === 'string'
      ? /^\d{4}-\d{2}-\d{2}$/.test(value)
        ? DateTime.fromISO(value, { zone })
        : DateTime.fromISO(value, { zone: 'utc', setZone: true }).setZone(zone)
      : value.setZone(zone);
  if (!dt.isValid) throw new RangeError(`not a day or an instant: ${String(value)}`);
  const start = dt.startOf('day');
  if (round === 'ceil' && start.toMillis() !== dt.toMillis()) return start.plus({ days: 1 }).startOf('day');
  return start;
}

export function windows(from: DateTime | string, to: DateTime | string, zone: string, maxDays = 31): SyncWindow[] {
  if (!IANAZone.isValidZone(zone)) throw new RangeError(`not an IANA time zone: ${zone}`);
  if (!Number.isInteger(maxDays) || maxDays < 1)
    throw new RangeError(`maxDays must be a whole number ≥ 1, got ${maxDays}`);
  const start = localDay(from, zone, 'floor');
  const end = localDay(to, zone, 'ceil');
  const limitMs = maxDays * 24 * HOUR_MS;
  const out: SyncWindow[] = [];
  let cursor = start;
  while (cursor < end) {
    let days = Math.min(maxDays, Math.max(1, Math.round(end.diff(cursor, 'days').days)));
    let next = cursor.plus({ days }).startOf('day');
    if (next > end) next = end;
    // Shorten by whole local days while the absolute length exceeds the PSP's limit.
    while (next.toMillis() - cursor.toMillis() > limitMs && days > 1) {
      days--;
      next = cursor.plus({ days }).startOf('day');
    }
    if (next <= cursor) throw new Error(`cannot advance past ${cursor.toISO()} in ${zone}`);
    out.push({ from: cursor.toJSDate(), to: next.toJSDate(), fromDay: cursor.toISODate()!, toDay: next.toISODate()! });
    cursor = next;
  }
  return out;
}
