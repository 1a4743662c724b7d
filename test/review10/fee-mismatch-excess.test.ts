import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { claimOf, type DiscRow, excessClaimOf, excessOf } from '../../src/export/payouts/holds';
import { amountInDoubt } from '../../src/reconciliation/discrepancies/amounts';

/**
 * Review 10: a fee_mismatch holds the widest difference between the reports' fees, merchant or customer
 * (holds.ts `differenceOf`), while its amount in doubt, and so the amount a decision records and
 * `amount_in_doubt_now`, reads the merchant fee alone (amounts.ts). The excess since a decision added the two
 * measures: reports that differ by 6.00 on the customer fee and 1.00 on the merchant fee, withheld (6.00 held),
 * then 3.00 on the merchant fee, held 6.00 + 2.00 = 8.00 where 6.00 is in doubt; released by pay, 2.00 held
 * again though the 6.00 the decision released still covers the widest difference. What a decision covered is
 * at least the difference it held when it was taken (the frozen values'); beyond that, more in doubt is held.
 */

const accepted = (merchantNow: bigint): DiscRow => {
  const values = {
    register: { merchant_fee: '100', customer_fee: '0' },
    period: { merchant_fee: '200', customer_fee: '600' },
  };
  return {
    id: '00000000-0000-5000-8000-0000000000a1',
    type: 'fee_mismatch',
    status: 'accepted',
    detected_by_event: null,
    resolved_by_event: null,
    pos_id: 'pos',
    payment_id: 'pay',
    method: 'purchase',
    receiver_name: 'Alpha Shop',
    order_id: 'order-1',
    currency: 'USD',
    occurred_at: new Date('2026-10-05T10:00:00Z'),
    values,
    amount_in_doubt: amountInDoubt({ type: 'fee_mismatch', values }),
    amount_in_doubt_now: merchantNow,
  };
};

describe('review10: more in doubt since a decision on a fee_mismatch, in the measure it holds by', () => {
  it('the frozen row: 1.00 in doubt (merchant fee), 6.00 held (customer fee)', () => {
    const r = accepted(100n);
    expect(r.amount_in_doubt).toBe(100n);
    expect(claimOf(r, DEFAULT_HOLD_POLICY)).toMatchObject({ atMost: 600n });
  });

  it('withheld, the merchant fee then 3.00 apart: 6.00 held, not 8.00', () => {
    const r = accepted(300n);
    expect(claimOf(r, DEFAULT_HOLD_POLICY, excessOf(r, 100n))).toMatchObject({ atMost: 600n });
  });

  it('released by pay, the merchant fee then 3.00 apart: nothing held again (6.00 was released)', () => {
    const r = accepted(300n);
    expect(excessOf(r, 100n)).toBe(0n);
    expect(excessClaimOf(r, 100n, DEFAULT_HOLD_POLICY)).toBeNull();
  });

  it('the merchant fee then 9.00 apart: 3.00 held again after pay, 9.00 withheld', () => {
    const r = accepted(900n);
    expect(excessClaimOf(r, 100n, DEFAULT_HOLD_POLICY)).toMatchObject({ atMost: 300n });
    expect(claimOf(r, DEFAULT_HOLD_POLICY, excessOf(r, 100n))).toMatchObject({ atMost: 900n });
  });
});
