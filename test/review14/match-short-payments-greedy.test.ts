import { describe, expect, it } from 'vitest';
import { judgeSettlements } from '../../src/reconciliation/settlement/match';
import { dueDay as due, matchCredit as credit, NONE } from '../settlement/support';

/**
 * Two settlement days both paid short (the PSP netted a chargeback from each): Monday owes 1,000.00 and was paid
 * 990.00 on Wednesday, Tuesday owes 900.00 and was paid 880.00 on Tuesday. Short payments were taken in booking
 * order, each with the earliest day it could pay: Tuesday's 880.00 took Monday (short 120.00), and the 990.00,
 * more than Tuesday owes, was left over: a settlement_unexpected of 990.00 and Tuesday missing 900.00, where
 * the bank shows both days paid, each a little short.
 */

describe('short payments are paired so that as many days as can be are paid', () => {
  it('a short credit that fits two days leaves the earlier one to the credit that fits it alone', () => {
    const days = [due('2026-01-12', 1000_00n, '2026-01-09'), due('2026-01-13', 900_00n, '2026-01-12')];
    const credits = [credit('tuesday', '2026-01-13', 880_00n), credit('monday', '2026-01-14', 990_00n)];
    const rules = { tolerance: 5n, lateBusinessDays: 3, holidays: NONE };
    for (const order of [credits, [...credits].reverse()]) {
      const j = judgeSettlements(days, order, '2026-01-20', rules);
      expect(j.unexpected).toEqual([]);
      expect(j.missing).toEqual([]);
      const paid = j.matches.map((m) => ({ credit: m.credit.id, days: m.days.map((d) => d.day), short: m.shortfall }));
      expect(paid).toEqual([
        { credit: 'tuesday', days: ['2026-01-13'], short: 20_00n },
        { credit: 'monday', days: ['2026-01-12'], short: 10_00n },
      ]);
    }
  });
});
