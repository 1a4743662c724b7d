import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { parsePosition } from '../../src/store/types';
import { useStatementTest } from './support';

/**
 * `--at-position` exists to regenerate a statement already sent (docs/outputs.md). Doing so for one
 * sub-merchant appends a new StatementIssued (its filter differs from the original full run). The next
 * month builds on the run of the latest cut, not on the latest issue: taken by event order, it once
 * opened at the OLD cut and paid again what a later re-issue of that month had already stated (found in
 * review).
 */

const t = useStatementTest({ pos: 'pos-r2b', outPrefix: 'recon-regenerated-' });
const { sale, observe } = t;

beforeAll(() => t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n'));

describe('statements: regenerating a sent statement for proof', () => {
  it('does not change what the next month opens at', async () => {
    await observe(sale('p1', '2025-01-10T10:00:00.000Z', 'Shop A', 1_000n), '2025-01-11T00:00:00.000Z');
    const janFirst = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    // a late January sale; January is issued again (as now known) for SM-A: it states the 300
    await observe(sale('p2', '2025-01-20T10:00:00.000Z', 'Shop A', 300n), '2025-02-02T00:00:00.000Z');
    const janAgain = await issueStatements(t.deps, { month: '2025-01', outDir: t.out, subMerchantId: 'SM-A' });
    expect(janAgain.figures[0]).toMatchObject({ netPayable: 1_300n, closing: 1_300n });
    await observe(sale('p3', '2025-02-10T10:00:00.000Z', 'Shop A', 50n), '2025-02-11T00:00:00.000Z');

    const before = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    expect(before.figures[0]).toMatchObject({ opening: 1_300n, adjustments: 0n, netPayable: 50n });

    // finance regenerates the statement sent first, for SM-A alone, to prove what it said
    const proof = await issueStatements(t.deps, {
      month: '2025-01',
      outDir: mkdtempSync(path.join(t.out, 'proof-')),
      subMerchantId: 'SM-A',
      atPosition: parsePosition(janFirst.position),
    });
    expect(proof.figuresSha256).not.toBe(''); // the proof itself is fine
    await observe(sale('p4', '2025-03-10T10:00:00.000Z', 'Other receiver', 1n), '2025-03-11T00:00:00.000Z'); // moves the checkpoint past it

    const after = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    // nothing about SM-A changed: February must still open at 1,300 (what January's latest statement said)
    expect(after.figures.find((f) => f.subMerchantId === 'SM-A')).toMatchObject({
      opening: 1_300n,
      adjustments: 0n,
      netPayable: 50n,
    });
  });
});
