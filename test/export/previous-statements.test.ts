import { describe, expect, it } from 'vitest';
import {
  closingKey,
  openAtPreviousStatements,
  previousRunOf,
  type IssuedRun,
} from '../../src/export/statements/previous';
import type { StatementFigures } from '../../src/export/statements/workbooks';

/**
 * How a month opens at the statements issued before it (src/export/statements/previous.ts), without a
 * database: the figures of the ledger now, the runs issued before, what each stated per receiver name.
 */

const figures = (over: Partial<StatementFigures>): StatementFigures => ({
  subMerchantId: 'SM-A',
  subMerchantName: 'Shop A',
  currency: 'EUR',
  opening: 0n,
  gross: 0n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 0n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 0n,
  closing: 0n,
  operations: 0,
  ...over,
});
const cut = (n: number) => ({ commit: BigInt(n), prepare: 0n });
const run = (
  month: string,
  n: number,
  subMerchantId: string | null,
  closings?: Array<[string, string, bigint]>,
): IssuedRun => ({
  month,
  cut: cut(n),
  cutText: `${n}/0`,
  subMerchantId,
  ...(closings ? { closings: new Map(closings.map(([r, c, v]) => [closingKey(r, c), v])) } : {}),
});

describe('opening at the previous statement', () => {
  it('opens at what the run stated for the names the sub-merchant has now, whatever the journal says at its cut', async () => {
    // the ledger now: 1,300 before February (January was stated 1,000 under two names, 600 + 400)
    const now = [figures({ opening: 1_300n, gross: 200n, netPayable: 200n, closing: 1_500n })];
    const asked: IssuedRun[] = [];
    const out = await openAtPreviousStatements(
      now,
      [
        run('2025-01', 10, null, [
          ['Shop A', 'EUR', 600n],
          ['Shop A (old)', 'EUR', 400n],
          ['Shop B', 'EUR', 77n],
        ]),
      ],
      {
        closingsOf: async (r) => {
          asked.push(r);
          return r.closings!;
        },
        namesOf: async () => ['Shop A', 'Shop A (old)'],
      },
    );
    expect(out).toEqual([{ ...now[0], opening: 1_000n, adjustments: 300n, previousStatement: '2025-01 at 10/0' }]);
    expect(out[0]!.opening + out[0]!.adjustments! + out[0]!.netPayable).toBe(out[0]!.closing);
    expect(asked).toHaveLength(1);
  });

  it("without a statement before, the figures are the ledger's, with no adjustments", async () => {
    const now = [figures({ opening: 5n, closing: 5n })];
    const out = await openAtPreviousStatements(now, [run('2025-01', 10, 'SM-OTHER', [])], {
      closingsOf: async () => new Map(),
      namesOf: async () => ['Shop A'],
    });
    expect(out).toEqual(now);
  });

  it('builds on the latest run that covered the sub-merchant: a run for all, or one for it', () => {
    const runs = [run('2025-02', 30, 'SM-B'), run('2025-02', 20, null), run('2025-01', 10, null)];
    expect(previousRunOf(runs, 'SM-A')?.cutText).toBe('20/0');
    expect(previousRunOf(runs, 'SM-B')?.cutText).toBe('30/0');
  });
});
