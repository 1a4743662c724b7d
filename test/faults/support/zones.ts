/**
 * Plain UTC arithmetic with the zones' published offsets for 2024–2025 (no luxon, no Intl): the independent
 * reading of local days, month membership and sync windows that recon's results are compared with.
 */

interface ZoneRule {
  /** minutes east of UTC */
  readonly standard: number;
  readonly summer: number;
  /** [start, end) of summer time, UTC */
  readonly summerTime: ReadonlyArray<readonly [string, string]>;
}

/** EU: last Sunday of March 01:00 UTC to last Sunday of October 01:00 UTC. US: second Sunday of March 02:00 local to first Sunday of November 02:00 local. */
export const ZONE_RULES: Readonly<Record<string, ZoneRule>> = {
  'Europe/Kyiv': {
    standard: 120,
    summer: 180,
    summerTime: [
      ['2024-03-31T01:00:00Z', '2024-10-27T01:00:00Z'],
      ['2025-03-30T01:00:00Z', '2025-10-26T01:00:00Z'],
    ],
  },
  'America/New_York': {
    standard: -300,
    summer: -240,
    summerTime: [
      ['2024-03-10T07:00:00Z', '2024-11-03T06:00:00Z'],
      ['2025-03-09T07:00:00Z', '2025-11-02T06:00:00Z'],
    ],
  },
  UTC: { standard: 0, summer: 0, summerTime: [] },
};

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function rule(zone: string): ZoneRule {
  const r = ZONE_RULES[zone];
  if (!r) throw new Error(`no offsets written down for ${zone}`);
  return r;
}

/** Offset in minutes at an instant (2024–2025 only). */
export function offsetAt(zone: string, ms: number): number {
  const r = rule(zone);
  if (ms < Date.parse('2024-01-01T00:00:00Z') || ms >= Date.parse('2026-01-01T00:00:00Z'))
    throw new Error('outside the offsets written down');
  return r.summerTime.some(([a, b]) => ms >= Date.parse(a) && ms < Date.parse(b)) ? r.summer : r.standard;
}

/** Local wall-clock time of an instant, `YYYY-MM-DDTHH:mm:ss`. */
export function wallClock(zone: string, ms: number): string {
  return new Date(ms + offsetAt(zone, ms) * 60_000).toISOString().slice(0, 19);
}

/** The local month (`YYYY-MM`) an instant belongs to. */
export function localMonth(zone: string, ms: number): string {
  return wallClock(zone, ms).slice(0, 7);
}

/** The instant of local midnight starting a day (midnight exists once in these zones: changes are at 01:00–03:00). */
export function localMidnight(zone: string, day: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`);
  const r = rule(zone);
  for (const off of [r.standard, r.summer]) {
    const t = wall - off * 60_000;
    if (offsetAt(zone, t) === off) return t;
  }
  throw new Error(`midnight of ${day} does not exist in ${zone}`);
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
}

export interface ExpectedWindow {
  readonly fromDay: string;
  readonly toDay: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Windows as the PSP's rules say they must be: consecutive local days from `from` to `to` (exclusive), each
 * at most `maxDays` local days and at most `maxDays` × 24 hours long, as long as those allow.
 */
export function expectedWindows(zone: string, from: string, to: string, maxDays = 31): ExpectedWindow[] {
  const out: ExpectedWindow[] = [];
  let cursor = from;
  while (cursor < to) {
    let next = addDays(cursor, maxDays) < to ? addDays(cursor, maxDays) : to;
    while (localMidnight(zone, next) - localMidnight(zone, cursor) > maxDays * DAY && addDays(cursor, 1) < next)
      next = addDays(next, -1);
    out.push({ fromDay: cursor, toDay: next, from: localMidnight(zone, cursor), to: localMidnight(zone, next) });
    cursor = next;
  }
  return out;
}
