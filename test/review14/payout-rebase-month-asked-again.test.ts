import { beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { issueStatements } from '../../src/export/statements/issue';
import { useStatementTest } from '../export/support';

/**
 * A month's statement asks only what the month's earlier statements did not, and nothing once a later month was
 * issued (that one carries the change as an adjustment). Both readings looked only at statements in the current
 * RECON_TIMEZONE: after a change of zone, June issued again asked its whole amount due a second time (June in
 * Europe/Kyiv had asked it), and June issued again in its own zone after July was re-based on it asked a late
 * sale that August then asked again as an adjustment.
 */

const t = useStatementTest({ pos: 'pos-rebase-asked', outPrefix: 'recon-rebase-asked-' });
const utc = () => ({ ...t.deps, timezone: 'UTC' });

/** What the month's runs recorded as asked of SM-A in EUR (payable), in the order issued. */
async function asked(month: string): Promise<bigint[]> {
  return (await t.store.readStream(statementStream(month)))
    .map((e) => dataOf(StatementIssued, e))
    .flatMap((d) => (d.payouts ?? []).filter((p) => p.subMerchantId === 'SM-A').map((p) => BigInt(p.payable)));
}

beforeAll(() => t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,0\n'));

describe('a month issued in one zone, then again in another', () => {
  it('never asks the month again', async () => {
    await t.observe(t.sale('pay-may', '2025-05-10T10:00:00.000Z', 'Shop A', 40_000n), '2025-05-11');
    await t.observe(t.sale('pay-jun', '2025-06-10T10:00:00.000Z', 'Shop A', 100_000n), '2025-06-11');
    await issueStatements(t.deps, { month: '2025-05', outDir: t.out });
    await t.settle();
    await issueStatements(t.deps, { month: '2025-06', outDir: t.out });
    await t.settle();
    expect(await asked('2025-06')).toEqual([100_000n]);
    // the zone changes; June issued again (nothing about June changed) must not ask its 1,000.00 once more:
    // refused, naming the zone June was issued in, with or without --rebase-timezone
    for (const rebaseTimezone of [true, false]) {
      const again = issueStatements(utc(), { month: '2025-06', outDir: t.out, rebaseTimezone });
      await expect(again).rejects.toMatchObject({ code: 'STATEMENT_TIMEZONE_CHANGED' });
      await expect(again).rejects.toThrow(/2025-06 was issued in Europe\/Kyiv/);
    }
    expect(await asked('2025-06')).toEqual([100_000n]);
  });

  it('asks nothing for a month whose next month, issued in another zone, was built on it', async () => {
    await t.settle();
    // July re-based on June's Kyiv statement
    await t.observe(t.sale('pay-jul', '2025-07-10T10:00:00.000Z', 'Shop A', 20_000n), '2025-07-11');
    await issueStatements(utc(), { month: '2025-07', outDir: t.out, rebaseTimezone: true });
    await t.settle();
    // a June sale reported late, then June issued again in Kyiv: July is issued, so this is for information
    await t.observe(t.sale('pay-jun-late', '2025-06-20T10:00:00.000Z', 'Shop A', 5_000n), '2025-07-20');
    const before = (await asked('2025-06')).reduce((s, v) => s + v, 0n);
    await issueStatements(t.deps, { month: '2025-06', outDir: t.out });
    await t.settle();
    expect((await asked('2025-06')).reduce((s, v) => s + v, 0n)).toBe(before);
    // August, built on July, asks the late sale as an adjustment: asked once
    const aug = await issueStatements(utc(), { month: '2025-08', outDir: t.out });
    expect(aug.figures.find((f) => f.subMerchantId === 'SM-A')).toMatchObject({ adjustments: 5_000n });
    expect(await asked('2025-08')).toEqual([5_000n]);
  });
});
