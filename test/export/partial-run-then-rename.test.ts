import { describe, beforeAll, expect, it } from 'vitest';
import { issueStatements, type IssueResult } from '../../src/export/statements/issue';
import { useStatementTest } from './support';

/**
 * January is issued for everyone, then Shop A's January statement is sent again alone (`--sub-merchant`,
 * same position, same figures). A receiver January stated as `receiver:Shop A Ltd` is then given to SM-A
 * (directory corrected to the PSP's spelling). February must open at what January stated for both names;
 * it builds on the `--sub-merchant` run, whose closings only name `Shop A`. Without that re-send February is issued with opening 15,000 and adjustments 0.
 */

const t = useStatementTest({
  pos: 'pos-r5',
  outPrefix: 'recon-r5-partial-',
  window: { from: '2025-01-01', to: '2025-04-01' },
});
const { sync, directory } = t;
const sale = (paymentId: string, dateTime: string, receiver: string, amount: bigint, fee: bigint, reserve: bigint) =>
  t.sale(paymentId, dateTime, receiver, amount, { fee, reserve });

beforeAll(() => directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n', { settle: false }));

const due = (r: IssueResult, id: string) => {
  const f = r.figures.find((x) => x.subMerchantId === id);
  return f ? (f.adjustments ?? 0n) + f.netPayable : 0n;
};

describe('a statement re-sent for one sub-merchant, then a placeholder receiver given to that sub-merchant', () => {
  it("February opens at what January's statements stated for every name the sub-merchant has", async () => {
    // January: Shop A's sales, and sales the PSP reports under a name the directory does not know yet
    await sync(
      [
        sale('pay-a', '2025-01-10T10:00:00.000Z', 'Shop A', 10_000n, 100n, 0n),
        sale('pay-x', '2025-01-12T10:00:00.000Z', 'Shop A Ltd', 5_000n, 50n, 0n),
      ],
      '2025-01-13T00:00:00.000Z',
    );
    const jan = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    expect(jan.figures.map((f) => [f.subMerchantId, due(jan, f.subMerchantId)])).toEqual(
      [
        ['SM-A', 10_000n],
        ['receiver:Shop A Ltd', 5_000n],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    // Shop A's January statement is sent again (same figures, same position: nothing changed)
    const resent = await issueStatements(t.deps, { month: '2025-01', outDir: t.out, subMerchantId: 'SM-A' });
    expect(resent.position).toBe(jan.position);
    expect(due(resent, 'SM-A')).toBe(10_000n);

    // finance learns that "Shop A Ltd" is how the PSP spells Shop A: the directory is corrected
    await directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A Ltd,30\n');
    await sync([sale('pay-f', '2025-02-10T10:00:00.000Z', 'Shop A Ltd', 1_000n, 10n, 0n)], '2025-02-11T00:00:00.000Z');

    // January's 10,000 (Shop A) and 5,000 (as receiver:Shop A Ltd) were both stated and paid in January
    const feb = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    const f = feb.figures.find((x) => x.subMerchantId === 'SM-A')!;
    expect({ opening: f.opening, adjustments: f.adjustments, netPayable: f.netPayable, closing: f.closing }).toEqual({
      opening: 15_000n,
      adjustments: 0n,
      netPayable: 1_000n,
      closing: 16_000n,
    });
  });
});
