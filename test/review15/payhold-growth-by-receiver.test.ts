import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { payholdSteps } from './payhold-support';

/**
 * Review 15: the growth of a payment paid on a decision (under a `payment` hold rule) was weighed for the payment
 * as a whole and held wherever the payment's net came first: a split of 3,000.00 to Alpha Shop and 2,000.00 to
 * Beta Shop, paid, then corrected to 3,000.00 and 6,000.00, held the 4,000.00 Beta was given unseen as 3,000.00 of
 * Alpha's statement (which had changed in nothing) and 1,000.00 of Beta's. The decision now records each
 * receiver's share it saw, and each receiver's statement holds its own growth.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const dateTime = at('2024-03-10T10:00:00Z');

/** A split of `alpha` and `beta` (each 1.00 of it the receiver's fee); the webhook states a 5.00 fee, the others 2.00. */
const sources = (alpha: bigint, beta: bigint, reportId: string, observedAt: string) => [
  registerRows({
    paymentId: 'pay-ab',
    dateTime,
    amount: alpha + beta,
    receivers: [
      { name: 'Alpha Shop', amount: alpha - 1_00n, fee: 1_00n },
      { name: 'Beta Shop', amount: beta - 1_00n, fee: 1_00n },
    ],
    reportId,
    observedAt,
  }),
  periodRow({ paymentId: 'pay-ab', dateTime, amount: alpha + beta, merchantFee: 2_00n, reportId, observedAt }),
  webhook({ paymentId: 'pay-ab', processedAt: dateTime, amount: alpha + beta, fee: 5_00n, receivedAt: observedAt }),
];
const completed = (reportId: string, day: string) =>
  syncCompleted({
    from: at('2024-03-10T00:00:00Z'),
    to: at('2024-03-11T00:00:00Z'),
    completedAt: at(day),
    reportId,
    announced: 2,
  });

describe('review15: a paid split payment grown since holds the growth on the receiver it went to', () => {
  it('Beta Shop’s share grown by 4,000.00: Beta holds 4,000.00, Alpha nothing', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      subMerchant('SM-B', 'Beta Shop'),
      ...sources(3000_00n, 2000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      completed('rep-1', '2024-03-14T00:00:00Z'),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-ab', 'fee_mismatch');
    expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect(await steps.held(APRIL_END)).toEqual([]);

    await appendAll(fx.store, [
      ...sources(3000_00n, 6000_00n, 'rep-2', at('2024-04-05T00:00:00Z')),
      completed('rep-2', '2024-04-06T00:00:00Z'),
    ]);
    await steps.settle();
    const cut = (await ledgerPosition(fx.db.sql))!;
    const held = (await heldAt(fx.db.sql, fx.store, cut, { periodEnd: APRIL_END, policy })) ?? [];
    expect(held.map((h) => [h.receiverName, h.amount])).toEqual([['Beta Shop', 4000_00n]]);
    expect(held[0]!.reason).toMatch(/the payment changed since it was reviewed/);
  });
});
