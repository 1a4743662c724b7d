import { describe, expect, it } from 'vitest';
import type { DueDay } from '../../src/reconciliation/settlement/expected';
import { type BankCredit, judgeSettlements, type MatchRules } from '../../src/reconciliation/settlement/match';

/**
 * Review 8: a settlement paid in two credits pairs a short payment with the credit that pays its rest (f976c33,
 * match.ts rule 3). Each short took the first credit that fitted within the tolerance, in credit order, so it
 * took the rest of another day: two days short of 400 and 390, rests of 390 and 400 paid the same day; the first
 * short took the 390 (10 absorbed as a bank fee), the second found nothing. One day paid, one short and a credit
 * unexpected, where both days were paid exactly. Now each short prefers the closest rest, and one taken by an
 * earlier short is handed over when that short has another that fits (the most days paid in two).
 */

const rules: MatchRules = { tolerance: 10n, lateBusinessDays: 3, holidays: new Set() };
const due = (day: string, amount: bigint): DueDay => ({
  currency: 'EUR',
  day,
  firstActivity: '2026-01-01',
  lastActivity: '2026-01-01',
  clearing: amount,
  fees: 0n,
  amount,
});
const credit = (id: string, bookingDate: string, amount: bigint): BankCredit => ({
  id,
  accountId: 'DE00SETTLE',
  currency: 'EUR',
  bookingDate,
  amount,
  bankRef: `ref-${id}`,
});
const pairs = (j: ReturnType<typeof judgeSettlements>) =>
  j.matches.map((m) => [m.credit.id, m.days.map((d) => d.day).join(), m.bankFee, m.shortfall, m.restOf ?? null]);

describe('review8: the rest of a day paid in two is not taken by another day', () => {
  it('each short pairs with its exact rest, not the first that fits', () => {
    const days = [due('2026-01-05', 1000n), due('2026-01-06', 1000n)];
    const credits = [
      credit('a', '2026-01-06', 600n), // 05 short of 400
      credit('b', '2026-01-06', 610n), // 06 short of 390
      credit('r390', '2026-01-07', 390n),
      credit('r400', '2026-01-07', 400n),
    ];
    const j = judgeSettlements(days, credits, '2026-01-09', rules);
    expect(j.unexpected).toEqual([]);
    expect(pairs(j)).toEqual([
      ['a', '2026-01-05', 0n, 0n, null],
      ['b', '2026-01-06', 0n, 0n, null],
      ['r390', '2026-01-06', 0n, 0n, 'b'],
      ['r400', '2026-01-05', 0n, 0n, 'a'],
    ]);
  });

  it('a rest an earlier short fits best goes to a later one that has no other, the earlier taking its other', () => {
    // 05 short of 395 (fits 385..395), 06 short of 400 (fits 390..400); 392 fits both, 386 only the first
    const days = [due('2026-01-05', 1000n), due('2026-01-06', 1000n)];
    const credits = [
      credit('a', '2026-01-06', 605n),
      credit('b', '2026-01-07', 600n),
      credit('r392', '2026-01-07', 392n),
      credit('r386', '2026-01-08', 386n),
    ];
    const j = judgeSettlements(days, credits, '2026-01-09', rules);
    expect(j.unexpected).toEqual([]);
    const rests = Object.fromEntries(j.matches.filter((m) => m.restOf).map((m) => [m.credit.id, m.restOf]));
    expect(rests).toEqual({ r386: 'a', r392: 'b' });
    expect(j.matches.every((m) => m.shortfall === 0n)).toBe(true);
  });

  it('the credits given in any order judge the same', () => {
    const days = [due('2026-01-05', 1000n), due('2026-01-06', 1000n)];
    const credits = [
      credit('a', '2026-01-06', 600n),
      credit('b', '2026-01-06', 610n),
      credit('r390', '2026-01-07', 390n),
      credit('r400', '2026-01-07', 400n),
    ];
    const a = pairs(judgeSettlements(days, credits, '2026-01-09', rules));
    expect(pairs(judgeSettlements(days, [...credits].reverse(), '2026-01-09', rules))).toEqual(a);
  });
});
