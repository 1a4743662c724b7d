import { describe, expect, it } from 'vitest';
import { judgeSettlements } from '../../src/reconciliation/settlement/match';
import { dueDay as due, matchCredit as credit, NONE } from '../settlement/support';

/**
 * Two settlement days a bank charge's tolerance apart, both credited on one booking day: Monday's 101.50 paid a day
 * late, Tuesday's 100.00 on time. Each credit equals one day exactly. The credits were taken in (booking day,
 * amount) order, each with the earliest run within the tolerance (2.50), so the 100.00 took Monday's 101.50 as
 * paid less a 1.50 bank charge, and the 101.50 was left over: a false settlement_unexpected, Tuesday missing,
 * and a bank fee of 1.50 booked that nobody charged.
 */

describe('a credit that equals a due day exactly is not taken as another day less a bank charge', () => {
  it('two days 1.50 apart, credited the same day, each pay their own day exactly', () => {
    const days = [due('2026-01-12', 101_50n, '2026-01-09'), due('2026-01-13', 100_00n, '2026-01-12')];
    const credits = [credit('late-monday', '2026-01-13', 101_50n), credit('tuesday', '2026-01-13', 100_00n)];
    const j = judgeSettlements(days, credits, '2026-01-20', {
      tolerance: 2_50n,
      lateBusinessDays: 3,
      holidays: NONE,
    });
    expect(j.unexpected).toEqual([]);
    expect(j.missing).toEqual([]);
    const paid = j.matches.map((m) => ({ credit: m.credit.id, days: m.days.map((d) => d.day), fee: m.bankFee }));
    expect(paid).toEqual([
      { credit: 'tuesday', days: ['2026-01-13'], fee: 0n },
      { credit: 'late-monday', days: ['2026-01-12'], fee: 0n },
    ]);
  });
});
