import { describe, expect, it } from 'vitest';
import { type PlanInput, planRun, type StatementRun } from '../../src/payout-runs/plan';

/**
 * A hold a statement released only in part: a discrepancy holding 500.00 is decided pay on 300.00 (the amount
 * accepted), and the next statement holds it again at 200.00, the excess (holds.ts excessClaimOf, under the same
 * discrepancy id), releasing 300.00 into its correction. The decision is then revoked: the 300.00 is in doubt
 * again. plan.ts releasedInto listed as released only the holds the row no longer names, so a hold whose amount
 * fell released nothing to check, and the run paid the 300.00 whose decision was taken back (a full release of
 * the same hold is left out as hold_in_force).
 */

const D1 = '11111111-1111-4111-8111-111111111111';
const E1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const E2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const payees = new Map([['SM-A', { name: 'A shop', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]);
const row = (reference: string, payable: string, holds: [string, string][] = []) => ({
  subMerchantId: 'SM-A',
  currency: 'EUR',
  reference,
  payable,
  holds,
});
const run = (id: string, payouts: StatementRun['payouts']): StatementRun => ({ id, month: '2026-10', payouts });
const input = (o: Partial<PlanInput>): PlanInput => ({
  runs: [],
  before: null,
  payoutRuns: [],
  payees,
  decisions: new Map(),
  paidByBank: new Map(),
  ...o,
});

describe('a hold released in part, its decision revoked since', () => {
  const held = run(E1, [row('RS-SM-A-2026-10-EUR', '100000', [[D1, '50000']])]);
  // issued again after D1 was decided pay on 300.00: 200.00 still held (more in doubt since), 300.00 released
  const released = run(E2, [row('RS-SM-A-2026-10-EUR-2', '30000', [[D1, '20000']])]);

  it('revoked: the released 300.00 is left out as hold_in_force, not paid', () => {
    const plan = planRun(input({ runs: [held, released], decisions: new Map([[D1, 'revoked']]) }));
    expect(plan.lines.map((l) => l.reference)).toEqual(['RS-SM-A-2026-10-EUR']);
    expect(plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([
      ['RS-SM-A-2026-10-EUR-2', '30000', 'hold_in_force'],
    ]);
  });

  it('decided pay still: paid, the line naming the 300.00 released', () => {
    const plan = planRun(input({ runs: [held, released], decisions: new Map([[D1, 'pay']]) }));
    expect(plan.lines.map((l) => [l.reference, l.amount])).toEqual([
      ['RS-SM-A-2026-10-EUR', '100000'],
      ['RS-SM-A-2026-10-EUR-2', '30000'],
    ]);
    expect(plan.lines[1]!.releasedHolds).toEqual([{ discrepancyId: D1, amount: '30000', decision: 'pay' }]);
  });
});
