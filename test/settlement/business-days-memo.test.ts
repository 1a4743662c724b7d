import { describe, expect, it } from 'vitest';
import { addBusinessDays, businessDaysAfter } from '../../src/business-days';

/**
 * src/business-days.ts remembers its answers per holiday Set (the cash leg asks the same ones at every append):
 * a remembered answer is the one worked out, per Set, so two calendars never share one.
 */
describe('business days remembered per holiday set', () => {
  const days = Array.from({ length: 40 }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10));

  it('asking again gives the first answer, and another set of holidays its own', () => {
    const none = new Set<string>();
    const monday = new Set(['2026-01-05']);
    const first = days.map((d) => [addBusinessDays(d, 1, none), addBusinessDays(d, 1, monday)]);
    const again = days.map((d) => [addBusinessDays(d, 1, none), addBusinessDays(d, 1, monday)]);
    expect(again).toEqual(first);
    // Friday the 2nd: Monday the 5th without holidays, Tuesday the 6th when the 5th is one
    expect(addBusinessDays('2026-01-02', 1, none)).toBe('2026-01-05');
    expect(addBusinessDays('2026-01-02', 1, monday)).toBe('2026-01-06');
    expect(addBusinessDays('2026-01-03', 0, none)).toBe('2026-01-05');
    expect(addBusinessDays('2026-01-03', 0, monday)).toBe('2026-01-06');
    // a fresh Set of the same days gives the same answers
    expect(addBusinessDays('2026-01-02', 1, new Set(['2026-01-05']))).toBe('2026-01-06');
  });

  it('counts business days between two days per calendar, and zero backwards', () => {
    const none = new Set<string>();
    const monday = new Set(['2026-01-05']);
    expect(businessDaysAfter('2026-01-02', '2026-01-07', none)).toBe(3);
    expect(businessDaysAfter('2026-01-02', '2026-01-07', monday)).toBe(2);
    expect(businessDaysAfter('2026-01-02', '2026-01-07', none)).toBe(3);
    expect(businessDaysAfter('2026-01-07', '2026-01-02', none)).toBe(0);
  });

  it('a day that is no date is refused each time it is asked', () => {
    const none = new Set<string>();
    expect(() => addBusinessDays('2026-13-01', 1, none)).toThrow(/not a date/);
    expect(() => addBusinessDays('2026-13-01', 1, none)).toThrow(/not a date/);
  });
});
