import { readdirSync } from 'node:fs';
import ExcelJS from 'exceljs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Two sales of 9,999,999,999,999.99 in one day, each accepted at the door, make the day's totals 16 significant
 * digits, more than a spreadsheet number keeps: `recon report nightly` wrote no report at all
 * (EXPORT_AMOUNT_TOO_LARGE naming neither the figure nor what to do). Now the report is written, the figure shown
 * exactly as text and marked.
 */

const t = useStatementTest({ pos: 'pos-r16-oversize-nightly', outPrefix: 'r16-oversize-nightly-' });
const MAX = 999_999_999_999_999n;

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-b,Beta Shop,0\n');
  await t.sync(
    [t.sale('p2', '2025-01-11T10:00:00Z', 'Beta Shop', MAX), t.sale('p3', '2025-01-11T11:00:00Z', 'Beta Shop', MAX)],
    '2025-01-14T00:00:00Z',
  );
});

afterAll(async () => {
  await killAll();
});

describe('recon report nightly with a day total a spreadsheet number cannot hold', () => {
  it('writes the report, the total exact as marked text', { timeout: 180_000 }, async () => {
    const env = reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_OUT_DIR: t.out } });
    const built = await runRecon(['project'], env);
    expect(built.code, built.stderr).toBe(0);
    const r = await runRecon(['report', 'nightly', '--date', '2025-01-11'], env);
    expect(r.code, r.stderr).toBe(0);
    const file = readdirSync(t.out).find((f) => f === 'nightly-2025-01-11.xlsx');
    expect(file, readdirSync(t.out).join()).toBeDefined();
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(t.out, file!));
    const texts: string[] = [];
    const numbers: unknown[] = [];
    wb.eachSheet((s) =>
      s.eachRow((row) =>
        row.eachCell((c) => {
          texts.push(c.text);
          numbers.push(c.value);
        }),
      ),
    );
    // the exact total, as text, marked
    expect(
      texts.some((x) => /19,999,999,999,999\.98/.test(x) && /digits/.test(x)),
      texts.join(' | '),
    ).toBe(true);
    // the day's two operations still counted as a number
    expect(numbers).toContain(2);
  });
});
