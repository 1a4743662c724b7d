import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { statementStream } from '../../src/events/statement-events';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * One sale of 9,999,999,999,999.99 (15 significant digits, what the doors accept and a spreadsheet number keeps):
 * every figure of the statement fits, but the Operations sheet sized its money columns from the month's movements
 * added up (gross + net payable, 16 digits) through the checked conversion, so `recon statements` refused the
 * statement (EXPORT_AMOUNT_TOO_LARGE) over a column width. Now the width is taken from the bound without it.
 */

const t = useStatementTest({ pos: 'pos-r16-oversize-width', outPrefix: 'r16-oversize-width-' });

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\n');
  await t.sync([t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 999_999_999_999_999n)], '2025-01-14T00:00:00Z');
});

afterAll(async () => {
  await killAll();
});

describe('recon statements with one sale of the largest amount a statement figure holds', () => {
  it('issues the statement', { timeout: 180_000 }, async () => {
    const r = await runRecon(
      ['statements', '--month', '2025-01'],
      reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_OUT_DIR: t.out } }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await t.store.readStream(statementStream('2025-01'))).toHaveLength(1);
    const files = readdirSync(t.out);
    expect(files).toContain('sm-a-alpha-shop-2025-01.xlsx');
    expect(files.filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});
