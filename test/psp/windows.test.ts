import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { windows } from '../../src/psp/windows';

const LIMIT_MS = 31 * 24 * 3_600_000;
const ZONES = ['Europe/Kyiv', 'America/New_York', 'Australia/Lord_Howe', 'UTC', 'Asia/Kolkata', 'America/Santiago'];

function checkCover(fromDay: string, toDay: string, zone: string, maxDays = 31) {
  const ws = windows(fromDay, toDay, zone, maxDays);
  const start = DateTime.fromISO(fromDay, { zone }).startOf('day');
  const end = DateTime.fromISO(toDay, { zone }).startOf('day');
  if (end <= start) {
    expect(ws).toEqual([]);
    return ws;
  }
  expect(ws[0]!.from.getTime()).toBe(start.toMillis());
  expect(ws.at(-1)!.to.getTime()).toBe(end.toMillis());
  expect(ws[0]!.fromDay).toBe(fromDay);
  expect(ws.at(-1)!.toDay).toBe(toDay);
  ws.forEach((w, i) => {
    const a = DateTime.fromJSDate(w.from, { zone });
    const b = DateTime.fromJSDate(w.to, { zone });
    // aligned to local midnight (or the first instant of a day whose midnight does not exist)
    expect(a.startOf('day').toMillis()).toBe(a.toMillis());
    expect(b.startOf('day').toMillis()).toBe(b.toMillis());
    expect(a.toISODate()).toBe(w.fromDay);
    expect(b.toISODate()).toBe(w.toDay);
    // within the PSP's limits, in absolute time and in local days
    expect(w.to.getTime() - w.from.getTime()).toBeLessThanOrEqual(maxDays * 24 * 3_600_000);
    const days = Math.round(b.diff(a, 'days').days);
    expect(days).toBeGreaterThanOrEqual(1);
    expect(days).toBeLessThanOrEqual(maxDays);
    // no gap, no overlap
    if (i > 0) expect(w.from.getTime()).toBe(ws[i - 1]!.to.getTime());
    // maximal: a window that is not the last one could not have been one day longer
    if (i < ws.length - 1 && days < maxDays) {
      expect(
        a
          .plus({ days: days + 1 })
          .startOf('day')
          .toMillis() - a.toMillis(),
      ).toBeGreaterThan(maxDays * 24 * 3_600_000);
    }
  });
  return ws;
}

describe('windows', () => {
  it('cuts a plain range into 31-day windows', () => {
    const ws = checkCover('2024-01-01', '2024-03-15', 'UTC');
    expect(ws.map((w) => [w.fromDay, w.toDay])).toEqual([
      ['2024-01-01', '2024-02-01'],
      ['2024-02-01', '2024-03-03'],
      ['2024-03-03', '2024-03-15'],
    ]);
  });

  it('shortens a window across the autumn DST change by one day (Kyiv, 25-hour day)', () => {
    // 2024-10-27 is 25 hours long in Kyiv: 31 local days from 2024-10-01 are 31×24 h + 1 h.
    const ws = checkCover('2024-10-01', '2024-12-01', 'Europe/Kyiv');
    expect(ws[0]).toMatchObject({ fromDay: '2024-10-01', toDay: '2024-10-31' });
    expect(ws[0]!.to.getTime() - ws[0]!.from.getTime()).toBe(30 * 24 * 3_600_000 + 3_600_000);
  });

  it('keeps 31 days across the spring change (New York, 23-hour day)', () => {
    const ws = checkCover('2024-03-01', '2024-04-01', 'America/New_York');
    expect(ws).toHaveLength(1);
    expect(ws[0]!.to.getTime() - ws[0]!.from.getTime()).toBe(LIMIT_MS - 3_600_000);
  });

  it('handles the half-hour shift of Lord Howe', () => {
    const ws = checkCover('2024-03-20', '2024-05-01', 'Australia/Lord_Howe');
    expect(ws[0]).toMatchObject({ fromDay: '2024-03-20', toDay: '2024-04-19' });
  });

  it('accepts instants: from is floored, to is ceiled to local midnight', () => {
    const ws = windows(DateTime.fromISO('2024-02-28T15:00:00Z'), '2024-03-01T00:30:00+02:00', 'Europe/Kyiv');
    expect(ws.map((w) => [w.fromDay, w.toDay])).toEqual([['2024-02-28', '2024-03-02']]);
  });

  it('leap days and month ends', () => {
    expect(checkCover('2024-02-29', '2024-03-31', 'UTC').map((w) => w.toDay)).toEqual(['2024-03-31']);
    expect(checkCover('2023-01-31', '2023-03-01', 'Europe/Kyiv').map((w) => w.toDay)).toEqual(['2023-03-01']);
  });

  it('returns no window for an empty range and refuses bad input', () => {
    expect(windows('2024-05-01', '2024-05-01', 'UTC')).toEqual([]);
    expect(windows('2024-05-02', '2024-05-01', 'UTC')).toEqual([]);
    expect(() => windows('2024-05-01', '2024-06-01', 'Mars/Olympus')).toThrow(RangeError);
    expect(() => windows('yesterday', '2024-06-01', 'UTC')).toThrow(RangeError);
  });

  it('covers any range exactly, in every zone (property)', () => {
    const day = fc
      .integer({ min: 0, max: 365 * 12 })
      .map((n) => DateTime.fromISO('2018-01-01', { zone: 'utc' }).plus({ days: n }).toISODate()!);
    fc.assert(
      fc.property(
        day,
        fc.integer({ min: 0, max: 500 }),
        fc.constantFrom(...ZONES),
        fc.integer({ min: 2, max: 40 }),
        (from, len, zone, maxDays) => {
          const to = DateTime.fromISO(from, { zone: 'utc' }).plus({ days: len }).toISODate()!;
          checkCover(from, to, zone, maxDays);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never exceeds 31×24 h around every DST change 2020–2030 (property, default limit)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 365 * 10 }),
        fc.integer({ min: 1, max: 120 }),
        fc.constantFrom('Europe/Kyiv', 'America/New_York', 'Australia/Lord_Howe'),
        (offset, len, zone) => {
          const from = DateTime.fromISO('2020-01-01', { zone: 'utc' }).plus({ days: offset }).toISODate()!;
          const to = DateTime.fromISO(from, { zone: 'utc' }).plus({ days: len }).toISODate()!;
          for (const w of checkCover(from, to, zone))
            expect(w.to.getTime() - w.from.getTime()).toBeLessThanOrEqual(LIMIT_MS);
        },
      ),
      { numRuns: 400 },
    );
  });
});
