import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { minuteText } from '../../src/export/statements/pdf';

/**
 * A statement PDF line's time is written by hand from the workbook's local time (the zone's offset found once a
 * day) instead of by luxon for every instant: the text must be luxon's, to the character, in both languages,
 * on the days a zone's offset changes and in zones with offsets of half and quarter hours.
 */

const ZONES = ['Europe/Kyiv', 'UTC', 'America/St_Johns', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Apia'];
const FORMAT = { en: 'yyyy-MM-dd HH:mm', uk: 'dd.MM.yyyy HH:mm' } as const;

function instants(zone: string): Date[] {
  const out: Date[] = [];
  // every 97 minutes through two years (each offset change of these zones among them), at every minute of the hour
  for (let ms = Date.UTC(2024, 0, 1); ms < Date.UTC(2026, 0, 1); ms += 97 * 60_000) out.push(new Date(ms));
  // every minute of the days Kyiv's offset changes (2025-03-30, 2025-10-26), and second by second around them
  for (const day of [Date.UTC(2025, 2, 30), Date.UTC(2025, 9, 26)]) {
    for (let ms = day - 86_400_000; ms < day + 86_400_000; ms += 60_000) out.push(new Date(ms));
    for (let ms = day; ms < day + 3 * 3_600_000; ms += 9_973) out.push(new Date(ms));
  }
  // years luxon writes otherwise are left to it; an invalid date too
  out.push(new Date(Date.UTC(999, 5, 1, 12)), new Date(Date.UTC(10_000, 0, 1)), new Date(Number.NaN));
  return zone === 'UTC' ? out.slice(0, 5000) : out;
}

describe("statement PDF: a line's minute", () => {
  it.each(ZONES)('writes what luxon writes, in English and Ukrainian (%s)', (zone) => {
    for (const lang of ['en', 'uk'] as const) {
      const text = minuteText(zone, lang);
      const mismatches = instants(zone)
        .map((at) => [at, text(at), DateTime.fromJSDate(at, { zone }).toFormat(FORMAT[lang])] as const)
        .filter(([, ours, luxon]) => ours !== luxon);
      expect(mismatches).toEqual([]);
    }
  });
});
