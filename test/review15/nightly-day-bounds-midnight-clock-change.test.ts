import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dayBounds } from '../../src/export/nightly/open';
import { localDate, monthBounds } from '../../src/journal-rules';

/**
 * The nightly report's day ends where the next local day starts, and its month starts where the statements'
 * month starts, also where the clock changes at local midnight (America/Havana, America/Asuncion,
 * America/Santiago): luxon's start of a day plus a day keeps the wrong midnight there, which put an hour in
 * no day, or in two.
 */
const ZONES = ['America/Havana', 'America/Asuncion', 'America/Santiago', 'Asia/Beirut', 'Europe/Kyiv'];

describe('the nightly report’s day and month edges', () => {
  it('end each day at the first instant of the next local day, and start its month with the statements’', () => {
    let checked = 0;
    for (const zone of ZONES) {
      for (let d = DateTime.fromISO('2023-01-01', { zone: 'utc' }); d.year < 2027; d = d.plus({ days: 1 })) {
        const date = d.toISODate()!;
        const next = d.plus({ days: 1 }).toISODate()!;
        const { asAt, monthFrom } = dayBounds(date, zone);
        // the last instant before the edge is the day's, the edge the next day's
        expect([localDate(new Date(asAt.getTime() - 1), zone), localDate(asAt, zone), zone]).toEqual([
          date,
          next,
          zone,
        ]);
        expect(monthFrom.getTime()).toBe(monthBounds(date.slice(0, 7), zone).from.getTime());
        checked++;
      }
    }
    expect(checked).toBe(ZONES.length * 1461);
  });
});
