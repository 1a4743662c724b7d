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
