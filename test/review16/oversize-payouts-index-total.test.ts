import { readdirSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { statementStream } from '../../src/events/statement-events';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Two sub-merchants with a sale of 9,999,999,999,999.99 each: every statement holds its figures exactly, but the
 * Payouts index's total of the month is 16 significant digits. `recon statements` wrote both statements, then
 * failed on the index (EXPORT_AMOUNT_TOO_LARGE): no run recorded, the statements' files left behind unissued.
 * Now the index is written with that total exact as marked text, and the run is issued.
 */

const t = useStatementTest({ pos: 'pos-r16-oversize-index', outPrefix: 'r16-oversize-index-' });
const MAX = 999_999_999_999_999n;

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\nsm-b,Beta Shop,0\n');
  await t.sync(
    [t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', MAX), t.sale('p2', '2025-01-11T10:00:00Z', 'Beta Shop', MAX)],
    '2025-01-14T00:00:00Z',
  );
});

afterAll(async () => {
  await killAll();
});

describe('recon statements whose Payouts index total a spreadsheet number cannot hold', () => {
  it('issues the run, the index total exact as marked text', { timeout: 180_000 }, async () => {
    const r = await runRecon(
      ['statements', '--month', '2025-01'],
      reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_OUT_DIR: t.out } }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await t.store.readStream(statementStream('2025-01'))).toHaveLength(1);
    const files = readdirSync(t.out);
    expect(files.filter((f) => f.endsWith('.partial'))).toEqual([]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(t.out, 'payouts-2025-01.xlsx'));
    const texts: string[] = [];
    wb.eachSheet((s) => s.eachRow((row) => row.eachCell((c) => texts.push(c.text))));
    expect(
      texts.some((x) => /19,999,999,999,999\.98/.test(x) && /digits/.test(x)),
      texts.join(' | '),
    ).toBe(true);
  });
});
