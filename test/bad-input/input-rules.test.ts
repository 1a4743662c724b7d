import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { checkText, FREE_TEXT, NAME_TEXT, plausibleDay, plausibleInstant, printable } from '../../src/input-rules';

const now = new Date('2026-11-27T12:00:00Z');

describe('plausible dates', () => {
  it.each([
    ['0000-01-01', 'before 2000-01-01'],
    ['0001-01-01', 'before 2000-01-01'],
    ['1900-01-01', 'before 2000-01-01'],
    ['9999-12-31', 'after 2036-11-27'],
    ['2025-02-30', 'not a day of the calendar'],
    ['2025-1-02', 'YYYY-MM-DD'],
    ['2025-01-02Tgarbage', 'YYYY-MM-DD'],
  ])('%s is refused (%s)', (text, words) => {
    const r = plausibleDay(text, undefined, now);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(words);
  });
  it('a real day inside the range is kept as written', () => {
    expect(plausibleDay('2026-11-27', undefined, now)).toEqual({ ok: true, value: '2026-11-27' });
    expect(plausibleDay('2036-11-27', undefined, now).ok).toBe(true);
    expect(plausibleDay('2036-11-28', undefined, now).ok).toBe(false);
  });
});

describe('plausible instants', () => {
  it.each([
    '9999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '2025-01-02T10:00:00',
    '2025-01-02T25:00:00Z',
    '2025-01-02T10:00:00+15:00',
    '2025-01-02 10:00:00Z',
    '2025-01-02T10:00:00Zjunk',
  ])('%s is refused', (text) => {
    expect(plausibleInstant(text, { now }).ok).toBe(false);
  });
  it('normalizes to UTC with milliseconds', () => {
    expect(plausibleInstant('2026-01-02T03:04:05+02:00', { now })).toEqual({
      ok: true,
      value: '2026-01-02T01:04:05.000Z',
    });
    expect(plausibleInstant('2026-01-02T03:04:05', { now, zoneless: 'utc' })).toEqual({
      ok: true,
      value: '2026-01-02T03:04:05.000Z',
    });
  });
});

describe('plausible instants without luxon (issue 26: the fixed ISO shape read by arithmetic)', () => {
  // A small deterministic generator: the same cases every run.
  let seed = 26;
  const draw = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  const pad = (v: number, w = 2) => String(v).padStart(w, '0');
  const zones = ['Z', '+00:00', '-00:00', '+02:00', '-12:00', '+14:59', '+0530', '-0945', '+14:00', '-11:59'];

  it('gives what luxon gives, and refuses what luxon refuses with the same words, for 5,000 instants', () => {
    for (let i = 0; i < 5_000; i++) {
      // Days across the range's two ends and leap days; fractions of 1 to 9 digits; every offset form.
      const year = [1999, 2000, 2004, 2024, 2025, 2036, 2037][draw(7)]!;
      const month = 1 + draw(12);
      const day = 1 + draw(31);
      const fraction =
        draw(3) === 0
          ? ''
          : `.${String(draw(1_000_000_000))
              .padStart(9, '0')
              .slice(0, 1 + draw(9))}`;
      const seconds = draw(4) === 0 ? '' : `:${pad(draw(60))}${fraction}`;
      const text = `${year}-${pad(month)}-${pad(day)}T${pad(draw(24))}:${pad(draw(60))}${seconds}${zones[draw(zones.length)]}`;
      const r = plausibleInstant(text, { now });
      const luxon = DateTime.fromISO(text, { setZone: true });
      const utcDay = luxon.isValid ? luxon.toUTC().toISODate()! : '';
      if (r.ok) {
        expect(r.value, text).toBe(luxon.toUTC().toISO({ suppressMilliseconds: false }));
        expect(utcDay >= '2000-01-01' && utcDay <= '2036-11-27', text).toBe(true);
      } else if (luxon.isValid && /^\d{4}-\d\d-\d\d/.test(utcDay)) {
        // Refused though luxon reads it: only for the day written or the day in UTC out of the range.
        expect(r.reason, text).toMatch(/^date \d{4}-\d\d-\d\d is (before 2000-01-01|after 2036-11-27)$/);
      } else {
        expect(r.reason, text).toBe(`not a day of the calendar: "${text.slice(0, 10)}"`);
      }
    }
  });

  it('a leap day, a fraction cut as luxon cuts it, and an offset moving the day into the range', () => {
    expect(plausibleInstant('2024-02-29T23:30:00.0299999-01:00', { now })).toEqual({
      ok: true,
      value: '2024-03-01T00:30:00.029Z',
    });
    expect(plausibleInstant('2025-02-29T10:00:00Z', { now })).toEqual({
      ok: false,
      reason: 'not a day of the calendar: "2025-02-29"',
    });
    expect(plausibleInstant('2000-01-01T00:30:00+01:00', { now })).toEqual({
      ok: false,
      reason: 'date 1999-12-31 is before 2000-01-01',
    });
    expect(plausibleInstant('2036-11-27T23:30:00-01:00', { now })).toEqual({
      ok: false,
      reason: 'date 2036-11-28 is after 2036-11-27',
    });
  });
});

describe('text policies', () => {
  it.each([
    ['a\u0000b', 'NUL'],
    ['a\uD800b', 'lone surrogate'],
    ['a\uDC00', 'lone surrogate'],
    ['line\nbreak', 'control character'],
    ['\u001b[31mred', 'control character'],
    ['\u202Eevil', 'bidirectional'],
    ['x'.repeat(201), 'longer than 200'],
    ['', 'empty'],
  ])('a name %j is refused (%s)', (text, words) => {
    const r = checkText(text, NAME_TEXT);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(words);
  });
  it('free text keeps line breaks and tabs and astral characters', () => {
    expect(checkText('a\r\nb\tc 😀', FREE_TEXT)).toEqual({ ok: true, value: 'a\r\nb\tc 😀' });
    expect(checkText('a\u0000', FREE_TEXT).ok).toBe(false);
  });
  it('printable escapes what moves a terminal and keeps the rest', () => {
    expect(printable('\u001b[31mred\u202E')).toBe('\\u{1b}[31mred\\u{202e}');
    expect(printable('a\nb', { oneLine: true })).toBe('a\\nb');
    expect(printable('Київ 😀')).toBe('Київ 😀');
  });
});
