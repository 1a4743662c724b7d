import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { shownLength } from '../../src/export/nightly/table';
import { formatAmount } from '../../src/export/statements/pdf';
import { figuresDigest, writeStatementWorkbook, type StatementFigures } from '../../src/export/statements/workbooks';

/**
 * Review 15: statements took a currency's decimals from Node's ICU, which says 0 for HUF (ISO 4217: 2). A HUF
 * receiver's workbook formatted its money `#,##0 "HUF"`, so a net payable of 1,234.50 HUF read "1,235 HUF", and
 * its PDF wrote 1,234.00 HUF as "1,234"; another Node could draw the same statement otherwise.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-r15-currency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const huf: StatementFigures = {
  subMerchantId: '3f0b7c1e-2f57-4a43-9d59-1f6c1d0e9a01',
  subMerchantName: 'Budapest Virág',
  currency: 'HUF',
  opening: 0n,
  gross: 123_450n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 0n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 123_450n,
  closing: 123_450n,
  operations: 1,
};

async function* none(): AsyncIterable<never> {}

describe('review15: a HUF statement shows forint with their two decimals', () => {
  it('formats every HUF money cell of the workbook with two decimals', async () => {
    const file = path.join(dir, 'huf.xlsx');
    const meta = { month: '2024-03', timezone: 'Europe/Kyiv', position: '1/1', figuresSha256: '' };
    await writeStatementWorkbook(
      file,
      { figures: [huf], lines: none, reserve: [] },
      { ...meta, figuresSha256: figuresDigest(meta.month, meta.timezone, [huf]) },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const formats: { at: string; value: unknown; numFmt: string }[] = [];
    wb.eachSheet((ws) =>
      ws.eachRow((row) =>
        row.eachCell((cell) => {
          if (cell.numFmt?.includes('HUF'))
            formats.push({ at: `${ws.name}!${cell.address}`, value: cell.value, numFmt: cell.numFmt });
        }),
      ),
    );
    expect(formats.some((f) => f.value === 1234.5)).toBe(true);
    for (const f of formats) expect(f).toEqual({ ...f, numFmt: '#,##0.00 "HUF";-#,##0.00 "HUF"' });
  });

  it('writes HUF amounts in the PDF with two decimals, IQD with three', () => {
    expect(formatAmount(123_400n, 'HUF')).toBe('1,234.00');
    expect(formatAmount(123_450n, 'IDR', 'uk')).toBe('1\u00a0234,50');
    expect(formatAmount(1_005n, 'IQD')).toBe('10.050');
    expect(formatAmount(123_400n, 'JPY')).toBe('1,234');
  });

  it('sizes a nightly HUF column for the two decimals it shows', () => {
    // "1,234.50 HUF"
    expect(shownLength({ money: 1234.5, currency: 'HUF' })).toBe(12);
  });
});
