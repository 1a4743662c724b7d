import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { statementStream } from '../../src/events/statement-events';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Two sales of 9,999,999,999,999.99 to one sub-merchant in a month make its gross 16 significant digits, more
 * than a workbook number keeps (EXPORT_AMOUNT_TOO_LARGE). `recon statements` then refused the whole month: no
 * sub-merchant got a statement. Now the others are issued, the one that cannot be written is listed (which
 * sub-merchant, which figure, what to do), nothing of it is written or recorded, and the command exits non-zero.
 */

const t = useStatementTest({ pos: 'pos-r16-oversize', outPrefix: 'r16-oversize-' });
const MAX = 999_999_999_999_999n;

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\nsm-b,Beta Shop,0\nsm-c,Gamma Shop,0\n');
  await t.sync(
    [
      t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n),
      t.sale('p2', '2025-01-11T10:00:00Z', 'Beta Shop', MAX),
      t.sale('p3', '2025-01-12T10:00:00Z', 'Beta Shop', MAX),
      t.sale('p4', '2025-01-13T10:00:00Z', 'Gamma Shop', 25_000n),
    ],
    '2025-01-14T00:00:00Z',
  );
});

afterAll(async () => {
  await killAll();
});

const statements = (...args: string[]) =>
  runRecon(
    ['statements', '--month', '2025-01', ...args],
    reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_OUT_DIR: t.out } }),
  );

describe('recon statements with one sub-merchant whose figure a workbook cannot hold', () => {
  it('issues the others, lists the refused one, exits non-zero', { timeout: 180_000 }, async () => {
    const r = await statements();
    expect(r.code, r.stderr).not.toBe(0);
    const files = readdirSync(t.out);
    expect(
      files.some((f) => f.includes('sm-a') && f.endsWith('.xlsx')),
      files.join(),
    ).toBe(true);
    expect(
      files.some((f) => f.includes('sm-c') && f.endsWith('.pdf')),
      files.join(),
    ).toBe(true);
    // nothing of the refused one, not even a temporary file
    expect(files.filter((f) => f.includes('sm-b'))).toEqual([]);
    expect(r.stderr).toMatch(/sm-b/);
    expect(r.stderr).toMatch(/19,?999,?999,?999,?999\.98/);
    expect(r.stderr).toMatch(/--sub-merchant sm-b/);
    const issued = await t.store.readStream(statementStream('2025-01'));
    expect(issued).toHaveLength(1);
    const data = issued[0]!.data as { files: string[]; statements: number };
    expect(data.statements).toBe(2);
    expect(data.files.some((f) => f.includes('sm-b'))).toBe(false);

    // a re-run with nothing changed records nothing new and still names the refused one
    const again = await statements();
    expect(again.code).toBe(r.code);
    expect(again.stderr).toMatch(/sm-b/);
    expect(await t.store.readStream(statementStream('2025-01'))).toHaveLength(1);

    // asked for alone, it is refused the same way, nothing written
    const alone = await statements('--sub-merchant', 'sm-b');
    expect(alone.code).toBe(r.code);
    expect(alone.stderr).toMatch(/statement of sm-b .*19,?999,?999,?999,?999\.98/);
    expect(readdirSync(t.out).filter((f) => f.includes('sm-b'))).toEqual([]);
    expect(await t.store.readStream(statementStream('2025-01'))).toHaveLength(1);
  });
});
