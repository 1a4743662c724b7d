import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';

/**
 * Review 16: a payment paid on two decisions that each doubted it whole (its amount and its status), when a source
 * states it larger since, holds that excess once: both discrepancies read the same larger amount, the same money
 * in doubt. Each held it as its own, so a notification re-sent at 9,000.00 for a paid 5,000.00 payment held the
 * whole 4,999.00 the payment adds (8,000.00 claimed) where 4,000.00 came into doubt.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({}).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const day = (d: string) => at(`${d}T00:00:00Z`);
const dateTime = at('2024-03-10T10:00:00Z');

describe('review16: more in doubt since two decisions on the whole payment is held once', () => {
  it('a notification of a failed 4,900.00, paid; then re-sent at 9,000.00: 4,000.00 is held, not the payment', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      registerRows({
        paymentId: 'pay-x',
        dateTime,
        amount: 5000_00n,
        receivers: [{ name: 'Alpha Shop', amount: 4999_00n, fee: 1_00n }],
        reportId: 'rep-1',
        observedAt: day('2024-03-11'),
      }),
      periodRow({
        paymentId: 'pay-x',
        dateTime,
        amount: 5000_00n,
        merchantFee: 1_00n,
        reportId: 'rep-1',
        observedAt: day('2024-03-11'),
      }),
      webhook({
        paymentId: 'pay-x',
        status: 'failure',
        processedAt: dateTime,
        amount: 4900_00n,
        fee: 1_00n,
        receivedAt: day('2024-03-11'),
      }),
      syncCompleted({
        from: day('2024-03-10'),
        to: day('2024-03-11'),
        completedAt: day('2024-03-14'),
        reportId: 'rep-1',
        announced: 1,
      }),
    ]);
    await steps.settle();
    const ids = [
      await steps.discrepancy('pay-x', 'amount_mismatch'),
      await steps.discrepancy('pay-x', 'status_mismatch'),
    ];
    for (const id of ids)
      expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect(await steps.held(APRIL_END)).toEqual([]);

    // the notification is sent again, processed later: 9,000.00, still failed
    await appendAll(fx.store, [
      webhook({
        paymentId: 'pay-x',
        status: 'failure',
        processedAt: at('2024-03-10T10:00:01Z'),
        amount: 9000_00n,
        fee: 1_00n,
        receivedAt: day('2024-04-05'),
      }),
    ]);
    await steps.settle();
    const april = await steps.held(APRIL_END);
    expect(april.map(([, a]) => a).reduce((x, y) => x + y, 0n)).toBe(4000_00n);
    expect(april.every(([p, , reason]) => p === 'pay-x' && /more in doubt since/.test(reason))).toBe(true);
  });
});
