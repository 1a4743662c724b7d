import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { recordTimeToIso } from '../../src/psp/field-readers';

// The luxon reading the fast path must agree with (what recordTimeToIso did before it had one).
function viaLuxon(t: string, now: Date): string | null {
  const dt = DateTime.fromISO(t.replace(' ', 'T'), { zone: 'utc' });
  if (!dt.isValid) return null;
  const ms = dt.toMillis();
  if (ms < Date.UTC(2000, 0, 1) || ms > now.getTime() + 366 * 24 * 3600 * 1000) return null;
  return dt.toUTC().toISO();
}

const NOW = new Date('2026-11-21T00:00:00Z');
const pad = (n: number, w: number) => String(n).padStart(w, '0');
// Calendar-shaped text, including impossible days, hours and seconds, and 1 to 3 fraction digits.
const timeText = fc
  .record({
    y: fc.integer({ min: 1990, max: 2030 }),
    mo: fc.integer({ min: 0, max: 13 }),
    d: fc.integer({ min: 0, max: 32 }),
    h: fc.integer({ min: 0, max: 25 }),
    mi: fc.integer({ min: 0, max: 61 }),
    s: fc.integer({ min: 0, max: 61 }),
    frac: fc.option(fc.stringMatching(/^\d{1,3}$/), { nil: undefined }),
    sep: fc.constantFrom('T', ' '),
    z: fc.constantFrom('', 'Z'),
  })
  .map(
    ({ y, mo, d, h, mi, s, frac, sep, z }) =>
      `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac === undefined ? '' : `.${frac}`}${z}`,
  );

describe('webhook record times', () => {
  it('reads the common shape exactly as luxon does, and refuses what luxon refuses', () => {
    fc.assert(
      fc.property(timeText, (t) => {
        const r = recordTimeToIso(t, 'created_at', NOW);
        expect(r.ok ? r.value : null).toBe(viaLuxon(t, NOW));
      }),
      { numRuns: 5000 },
    );
  });

  it('examples: leap day, impossible day, fraction digits, space separator', () => {
    expect(recordTimeToIso('2024-02-29T23:59:59.5', 'f', NOW)).toEqual({ ok: true, value: '2024-02-29T23:59:59.500Z' });
    expect(recordTimeToIso('2025-02-29T10:00:00', 'f', NOW).ok).toBe(false);
    expect(recordTimeToIso('2025-03-01 10:00:02.07', 'f', NOW)).toEqual({
      ok: true,
      value: '2025-03-01T10:00:02.070Z',
    });
    expect(recordTimeToIso('2025-03-01T10:00:00+02:00', 'f', NOW)).toEqual({
      ok: true,
      value: '2025-03-01T08:00:00.000Z',
    });
    expect(recordTimeToIso('1999-12-31T23:59:59', 'f', NOW)).toMatchObject({ ok: false, field: 'f' });
  });
});
