import { describe, expect, it } from 'vitest';
import { judgeSettlements } from '../../src/reconciliation/settlement/match';
import { dueDay as due, matchCredit as credit, NONE } from '../settlement/support';

/**
 * Monday and Tuesday owe 500.00 each, Wednesday 1,000.00. The PSP pays Wednesday's 1,000.00 on Wednesday and,
 * on Thursday, Monday and Tuesday short (480.00 and 490.00: a chargeback netted from each). The 1,000.00 equals
 * Monday + Tuesday too, and the credits were matched greedily, runs first: it took Monday and Tuesday, so the
 * 480.00 and the 490.00 (each less than half of Wednesday) paid nothing: two credits settlement_unexpected
 * (970.00) and Wednesday missing (1,000.00), 1,970.00 in doubt where each credit pays one day of its own and
 * 30.00 is short.
 */

describe('a credit equal to a run of days does not take the days other credits pay short', () => {
  const days = [
    due('2026-01-12', 500_00n, '2026-01-11'),
    due('2026-01-13', 500_00n, '2026-01-12'),
    due('2026-01-14', 1000_00n, '2026-01-13'),
  ];
  const rules = { tolerance: 5_00n, lateBusinessDays: 3, holidays: NONE };

  it('the 1,000.00 pays Wednesday, the two short credits Monday and Tuesday', () => {
    const credits = [
      credit('wednesday', '2026-01-14', 1000_00n),
      credit('monday', '2026-01-15', 480_00n),
      credit('tuesday', '2026-01-15', 490_00n),
    ];
    const j = judgeSettlements(days, credits, '2026-01-31', rules);
    expect(j.unexpected.map((c) => c.id)).toEqual([]);
    expect(j.missing.map((d) => d.day)).toEqual([]);
    const paid = j.matches.map((m) => ({ credit: m.credit.id, days: m.days.map((d) => d.day), short: m.shortfall }));
    expect(paid.sort((a, b) => (a.credit < b.credit ? -1 : 1))).toEqual([
      { credit: 'monday', days: ['2026-01-12'], short: 20_00n },
      { credit: 'tuesday', days: ['2026-01-13'], short: 10_00n },
      { credit: 'wednesday', days: ['2026-01-14'], short: 0n },
    ]);
  });

  it('a credit that pays an open day short keeps to it: the 1,000.00 keeps Monday and Tuesday', () => {
    const more = [...days, due('2026-01-15', 1300_00n, '2026-01-14')];
    const credits = [credit('both', '2026-01-14', 1000_00n), credit('thursday', '2026-01-16', 1200_00n)];
    const j = judgeSettlements(more, credits, '2026-01-31', rules);
    const paid = j.matches.map((m) => ({ credit: m.credit.id, days: m.days.map((d) => d.day) }));
    expect(paid).toEqual([
      { credit: 'both', days: ['2026-01-12', '2026-01-13'] },
      { credit: 'thursday', days: ['2026-01-15'] },
    ]);
  });
});
