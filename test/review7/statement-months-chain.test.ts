import { beforeAll, describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { useStatementTest } from '../export/support';

/**
 * Three months of one sub-merchant's money, checked where finance checks it: each statement opens at the closing
 * of the one before, and closing = opening + adjustments + gross − refunds − chargebacks − fees − reserve held +
 * reserve released, exactly. A January sale with a reserve, refunded in part in February (when its reserve is
 * released: 30 days), and a chargeback of another January sale in March.
 */

const t = useStatementTest({
  pos: 'pos-chain',
  outPrefix: 'recon-chain-',
  window: { from: '2025-01-01', to: '2025-04-01' },
});

beforeAll(() => t.directory('sub_merchant_id,name,reserve_hold_days\nSM-C,Chain Shop,30\n', { settle: false }));

const flows = (f: {
  opening: bigint;
  adjustments?: bigint;
  gross: bigint;
  refunds: bigint;
  chargebacks: bigint;
  fees: bigint;
  reserveHeld: bigint;
  reserveReleased: bigint;
}) =>
  f.opening + (f.adjustments ?? 0n) + f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased;

describe('statements month after month', () => {
  it('a refund and a chargeback after the month of the sale, a reserve released the month after: each opens at the last closing', async () => {
    await t.observe(
      t.sale('pay-1', '2025-01-10T10:00:00.000Z', 'Chain Shop', 100_000n, { fee: 2_000n, reserve: 10_000n }),
      '2025-01-11T00:00:00.000Z',
    );
    await t.observe(
      t.sale('pay-2', '2025-01-20T10:00:00.000Z', 'Chain Shop', 40_000n, { fee: 800n }),
      '2025-01-21T00:00:00.000Z',
    );
    const jan = (await issueStatements(t.deps, { month: '2025-01', outDir: t.out })).figures.find(
      (f) => f.subMerchantId === 'SM-C',
    )!;
    expect(jan.closing).toBe(flows(jan));

    await t.observe(
      {
        ...t.sale('pay-1', '2025-02-05T10:00:00.000Z', 'Chain Shop', 30_000n),
        method: 'refund',
        paymentId: 'pay-1-r1',
        orderId: 'order-pay-1',
      },
      '2025-02-06T00:00:00.000Z',
    );
    const feb = (await issueStatements(t.deps, { month: '2025-02', outDir: t.out })).figures.find(
      (f) => f.subMerchantId === 'SM-C',
    )!;
    expect(feb.opening).toBe(jan.closing);
    expect(feb.refunds).toBe(30_000n);
    expect(feb.reserveReleased).toBe(10_000n);
    expect(feb.closing).toBe(flows(feb));

    await t.observe(
      {
        ...t.sale('pay-2', '2025-03-03T10:00:00.000Z', 'Chain Shop', 40_000n),
        method: 'dispute',
        paymentId: 'pay-2-cb',
        orderId: 'order-pay-2',
      },
      '2025-03-04T00:00:00.000Z',
    );
    const mar = (await issueStatements(t.deps, { month: '2025-03', outDir: t.out })).figures.find(
      (f) => f.subMerchantId === 'SM-C',
    )!;
    expect(mar.opening).toBe(feb.closing);
    expect(mar.chargebacks).toBe(40_000n);
    expect(mar.closing).toBe(flows(mar));
    // nothing was paid out: what the sales paid the receiver (the fee on top of its share), less the refund and the chargeback
    expect(mar.closing).toBe(100_000n + 40_000n - 30_000n - 40_000n);
  });
});
