import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerStatementQueries } from '../../src/export/statements/queries';
import { issueStatements } from '../../src/export/statements/issue';
import { useStatementTest } from './support';

/**
 * A receiver unknown to the directory is stated as `receiver:<name>`. When the directory later learns it
 * (id SM-GHOST), the next month's statement must open at what January's statement said for that receiver
 * (1,000), not at 0 with the whole history re-paid as an "adjustment".
 */

const t = useStatementTest({ pos: 'pos-r2', outPrefix: 'recon-directory-change-' });
const { sale, observe, directory } = t;

describe('statements: a placeholder receiver that the directory later knows', () => {
  it("February opens at January's stated closing of receiver:Ghost Shop once Ghost Shop is SM-GHOST (no re-payment, no refusal)", async () => {
    await observe(sale('pay-g1', '2025-01-15T10:00:00.000Z', 'Ghost Shop', 1_000n), '2025-01-16T00:00:00.000Z');
    const jan = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    expect(jan.figures.map((f) => [f.subMerchantId, f.closing])).toEqual([['receiver:Ghost Shop', 1_000n]]);

    // the directory learns the receiver; February has one more sale
    await directory('sub_merchant_id,name,reserve_hold_days\nSM-GHOST,Ghost Shop,30\n');
    await observe(sale('pay-g2', '2025-02-10T10:00:00.000Z', 'Ghost Shop', 200n), '2025-02-11T00:00:00.000Z');

    // the figures as issueStatements computes them (without the Adjustments sheet's own check)
    const { adjustments: _omit, ...noAdjustmentSheet } = ledgerStatementQueries(t.db.sql);
    const figures = (
      await issueStatements(
        { ...t.deps, queries: noAdjustmentSheet },
        { month: '2025-02', outDir: mkdtempSync(path.join(t.out, 'b-')) },
      )
    ).figures;
    const ghost = figures.find((f) => f.subMerchantId === 'SM-GHOST');
    // January already stated (and paid) the 1,000: February's amount due is its own 200 only
    expect({
      opening: ghost?.opening,
      adjustments: ghost?.adjustments,
      amountDue: (ghost?.adjustments ?? 0n) + (ghost?.netPayable ?? 0n),
    }).toEqual({ opening: 1_000n, adjustments: 0n, amountDue: 200n });
  });

  it('the real run (with the Adjustments sheet) issues February instead of refusing it', async () => {
    const feb = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    expect(feb.figures.find((f) => f.subMerchantId === 'SM-GHOST')).toMatchObject({
      opening: 1_000n,
      adjustments: 0n,
      netPayable: 200n,
      closing: 1_200n,
    });
  });
});
