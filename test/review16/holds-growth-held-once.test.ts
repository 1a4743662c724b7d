import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';

/**
 * Review 16: a payment paid on two decisions (two discrepancies of it, each held whole under a `payment` rule) that
 * grew since holds its growth once: the growth is one fact of the payment, the same money under both decisions.
 * Each decision's growth was a claim of its own, so a payment of 5,000.00 corrected to 9,000.00 held 8,000.00 as
 * "changed since it was reviewed" where 4,000.00 had changed.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const day = (d: string) => at(`${d}T00:00:00Z`);
const dateTime = at('2024-03-10T10:00:00Z');

/** The register and the period report `amount` with a 1.00 fee; the notification 4,900.00 with a 5.00 fee. */
const sources = (amount: bigint, reportId: string, seen: string) => [
  registerRows({
    paymentId: 'pay-2',
    dateTime,
    amount,
    receivers: [{ name: 'Alpha Shop', amount: amount - 1_00n, fee: 1_00n }],
    reportId,
    observedAt: seen,
  }),
  periodRow({ paymentId: 'pay-2', dateTime, amount, merchantFee: 1_00n, reportId, observedAt: seen }),
  webhook({ paymentId: 'pay-2', processedAt: dateTime, amount: 4900_00n, fee: 5_00n, receivedAt: seen }),
];

const completed = (reportId: string, done: string) =>
  syncCompleted({ from: day('2024-03-10'), to: day('2024-03-11'), completedAt: day(done), reportId, announced: 1 });

describe('review16: a payment paid on two decisions holds its growth since once', () => {
  it('5,000.00 paid on an amount and a fee discrepancy, corrected to 9,000.00: 4,000.00 is held, not 8,000.00', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sources(5000_00n, 'rep-1', day('2024-03-11')),
      completed('rep-1', '2024-03-14'),
    ]);
    await steps.settle();
    const ids = [await steps.discrepancy('pay-2', 'amount_mismatch'), await steps.discrepancy('pay-2', 'fee_mismatch')];
    // open: the payment is held, once
    expect((await steps.held(APRIL_END)).map(([, a]) => a).reduce((x, y) => x + y, 0n)).toBe(5000_00n - 1_00n);
    for (const id of ids)
      expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect(await steps.held(APRIL_END)).toEqual([]);

    // April: the PSP corrects the register and the period report to 9,000.00
    await appendAll(fx.store, [...sources(9000_00n, 'rep-2', day('2024-04-05')), completed('rep-2', '2024-04-06')]);
    await steps.settle();
    const april = await steps.held(APRIL_END);
    // 4,000.00 of the payment changed since either decision: that much is held, and no more
    expect(april.map(([, a]) => a).reduce((x, y) => x + y, 0n)).toBe(4000_00n);
    expect(april.every(([p, , reason]) => p === 'pay-2' && /changed since it was reviewed/.test(reason))).toBe(true);
  });
});
