import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { payholdSteps } from './payhold-support';

/**
 * Review 15: after a pay under a payment hold rule the statements hold the payment's growth since, measured as
 * the receivers' shares of its sales in the journal. The measure summed every entry of the payment, a refund's
 * too (booked under the payment's id with its share positive), so a 1,000.00 refund of a paid 5,000.00 payment
 * read as a payment of 6,000.00: 1,000.00 of what was left was held as "changed since it was reviewed", though
 * the refund takes money away and nothing was paid unseen. A pay of a discrepancy of the refund itself weighed the
 * sale against the refund's amount: the 5,000.00 sale read as 4,000.00 grown since a 1,000.00 refund was paid.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');

const day = (d: string) => at(`${d}T00:00:00Z`);
/** An operation as every source states it; the sale's register and period report a 1.00 fee, the webhook 5.00. */
const sources = (
  method: 'purchase' | 'refund',
  amount: bigint,
  dateTime: string,
  reportId: string,
  seen: string,
  webhookFee = method === 'purchase' ? 5_00n : 0n,
) => {
  const sale = method === 'purchase';
  const fee = sale ? 1_00n : 0n;
  return [
    registerRows({
      paymentId: 'pay-r',
      method,
      dateTime,
      amount,
      receivers: [{ name: 'Alpha Shop', amount: amount - fee, fee }],
      reportId,
      observedAt: seen,
    }),
    periodRow({ paymentId: 'pay-r', method, dateTime, amount, merchantFee: fee, reportId, observedAt: seen }),
    webhook({
      paymentId: 'pay-r',
      method,
      processedAt: dateTime,
      amount,
      fee: webhookFee,
      receivedAt: seen,
      ...(sale ? {} : { operationId: 'op-refund-1' }),
    }),
  ];
};

describe('review15: a refund of a paid payment is not growth of it', () => {
  it('a paid 5,000.00 payment refunded 1,000.00 the month after holds nothing', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sources('purchase', 5000_00n, at('2024-03-10T10:00:00Z'), 'rep-1', day('2024-03-11')),
      syncCompleted({
        from: day('2024-03-10'),
        to: day('2024-03-11'),
        completedAt: day('2024-03-14'),
        reportId: 'rep-1',
        announced: 1,
      }),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-r', 'fee_mismatch');
    expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect(await steps.held(APRIL_END)).toEqual([]);

    await appendAll(fx.store, [
      ...sources('refund', 1000_00n, at('2024-04-02T10:00:00Z'), 'rep-2', day('2024-04-03')),
      syncCompleted({
        from: day('2024-04-02'),
        to: day('2024-04-03'),
        completedAt: day('2024-04-06'),
        reportId: 'rep-2',
        announced: 1,
      }),
    ]);
    await steps.settle();
    // the refund is booked against the payment (the journal's net of it fell by 1,000.00)...
    const [net] = await fx.db.sql<{ net: string }[]>`
      select sum(net)::text as net from recon.journal_entries where payment_id = 'pay-r' and booked_at < ${APRIL_END}`;
    expect(BigInt(net!.net)).toBe(5000_00n - 1_00n - 1000_00n);
    // ...and nothing of what is left is held: no sale grew
    expect(await steps.held(APRIL_END)).toEqual([]);
  });

  it('a paid refund of a paid payment does not read the sale as grown', async () => {
    await appendAll(fx.store, [
      ...sources('refund', 1000_00n, at('2024-04-02T10:00:00Z'), 'rep-3', day('2024-04-04'), 2_00n),
      syncCompleted({
        from: day('2024-04-02'),
        to: day('2024-04-03'),
        completedAt: day('2024-04-07'),
        reportId: 'rep-3',
        announced: 1,
      }),
    ]);
    await steps.settle();
    const [refundDoubt] = await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where payment_id = 'pay-r' and type = 'fee_mismatch' and method = 'refund'`;
    // open: the whole payment is held again
    expect((await steps.held(APRIL_END)).map(([p, a]) => [p, a])).toEqual([['pay-r', 5000_00n - 1_00n - 1000_00n]]);
    expect(await steps.decide(refundDoubt!.id, 'pay', new Date('2024-04-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect(await steps.held(APRIL_END)).toEqual([]);
  });
});
