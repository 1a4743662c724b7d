import { describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { issueStatements } from '../../src/export/statements/issue';
import { useStatementTest } from '../export/support';

/**
 * A receiver the directory does not know is never paid: what it is owed is held until it is registered, and the
 * statement of the sub-merchant it is registered under releases it. What it owes is the mirror: a month below 0
 * (a sale refunded with the refund's fee charged to it) must come off its first payouts once registered, as the
 * holds it had come onto them. The placeholder's amount due below 0 was recorded as nothing owed back, so the
 * registered sub-merchant's next sale was asked in full and the refund's fee was lost.
 */

const t = useStatementTest({
  pos: 'pos-owed-unregistered',
  outPrefix: 'recon-owed-unregistered-',
  window: { from: '2025-05-01', to: '2025-09-01' },
});

/** What the month's latest run records of `id` in EUR. */
async function payoutOf(month: string, id: string) {
  const runs = (await t.store.readStream(statementStream(month))).filter((e) => e.type === StatementIssued.type);
  const p = dataOf(StatementIssued, runs.at(-1)!).payouts!.find((x) => x.subMerchantId === id)!;
  return { amountDue: BigInt(p.amountDue), payable: BigInt(p.payable), owedBack: BigInt(p.owedBack ?? '0') };
}

describe('a receiver not registered whose month is below 0, then registered', () => {
  it('has what it owes taken off its first payout', async () => {
    // May: a sale of 100.00 to a receiver the directory does not know: held whole
    await t.observe(t.sale('pay-x1', '2025-05-10T10:00:00.000Z', 'Shop X', 10_000n), '2025-05-11T00:00:00.000Z');
    await issueStatements(t.deps, { month: '2025-05', outDir: t.out });
    await t.settle();
    // June: the sale refunded in full, the refund's fee of 5.00 charged to the receiver: it owes 5.00
    await t.observe(
      { ...t.sale('ref-x1', '2025-06-05T10:00:00.000Z', 'Shop X', 10_000n), method: 'refund', receiverFee: '500' },
      '2025-06-06T00:00:00.000Z',
    );
    const jun = await issueStatements(t.deps, { month: '2025-06', outDir: t.out });
    await t.settle();
    // the refund and its fee as the journal books them: more than the 100.00 May held
    const net = jun.figures.find((f) => f.subMerchantId === 'receiver:Shop X')!.netPayable;
    expect(net).toBeLessThan(-10_000n);
    const owed = -(net + 10_000n);
    // released 100.00 (May's hold) less the refund and its fee: below 0, nothing asked
    expect(await payoutOf('2025-06', 'receiver:Shop X')).toMatchObject({ amountDue: -owed, payable: 0n });
    // July: registered as SM-X, a sale of 50.00: asks 50.00 less what it owed
    await t.directory('sub_merchant_id,name,reserve_hold_days\nSM-X,Shop X,0\n');
    await t.observe(t.sale('pay-x2', '2025-07-10T10:00:00.000Z', 'Shop X', 5_000n), '2025-07-11T00:00:00.000Z');
    await issueStatements(t.deps, { month: '2025-07', outDir: t.out });
    expect(await payoutOf('2025-07', 'SM-X')).toMatchObject({ amountDue: 5_000n - owed, payable: 5_000n - owed });
  });
});
