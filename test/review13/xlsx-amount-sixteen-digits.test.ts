import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { figuresDigest } from '../../src/export/statements/figures';
import {
  type StatementFigures,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';
import { minorToMajor } from '../../src/export/workbook/xlsx';

/**
 * A workbook amount is a number in major units: Number(minor) / 100, guarded to |minor| ≤ 2^53 − 1. But a double
 * holds about 15.95 decimal digits, and a spreadsheet 15: an amount of 16 significant digits (minor units from
 * 10^15 up, a month's gross of ten lines at the largest amount a payment may have) is not stated exactly.
 * 2^53 − 1 minor units (90,071,992,547,409.91) is written into the file as `90071992547409.9`, a cent short in
 * the file itself; 1,234,567,890,123,456 minor units is written `12345678901234.56` and LibreOffice shows
 * `12,345,678,901,234.60` (checked with `soffice --convert-to csv` as shown). Such a figure must be refused
 * (EXPORT_AMOUNT_TOO_LARGE), as one beyond 2^53 already is, never written inexact.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review13-digits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function figures(gross: bigint): StatementFigures {
  return {
    subMerchantId: 'sm-big',
    subMerchantName: 'Big',
    currency: 'EUR',
    opening: 0n,
    gross,
    refunds: 0n,
    chargebacks: 0n,
    fees: 0n,
    reserveHeld: 0n,
    reserveReleased: 0n,
    netPayable: gross,
    operations: 1,
    closing: gross,
  };
}

/** Every number on the Summary: exact or absent (the workbook refused). */
async function summaryNumbers(gross: bigint): Promise<number[] | 'refused'> {
  const f = [figures(gross)];
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'Europe/Kyiv',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', f),
  };
  const file = path.join(dir, `${gross}.xlsx`);
  try {
    await writeStatementWorkbook(file, { figures: f, lines: async function* () {}, reserve: [] }, meta);
  } catch (e) {
    if ((e as { code?: string }).code === 'EXPORT_AMOUNT_TOO_LARGE') return 'refused';
    throw e;
  }
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const out: number[] = [];
  wb.worksheets[0]!.eachRow((r) => {
    const v = r.getCell(2).value;
    if (typeof v === 'number') out.push(v);
  });
  return out;
}

describe('review13: an amount of 16 significant digits in a workbook', () => {
  it('2^53 − 1 minor units is refused, not written a cent short', async () => {
    const got = await summaryNumbers(9_007_199_254_740_991n);
    if (got !== 'refused') expect(got.map(String)).toContain('90071992547409.91');
    expect(got).toBe('refused');
  });

  it('an amount a spreadsheet keeps only to 15 digits is refused; 15 digits and round amounts are kept', () => {
    expect(() => minorToMajor(1_234_567_890_123_456n)).toThrow(/beyond/);
    expect(() => minorToMajor(-1_000_000_000_000_001n)).toThrow(/beyond/);
    expect(String(minorToMajor(987_654_321_098_765n))).toBe('9876543210987.65');
    expect(String(minorToMajor(-1_000_000_000_000_000n))).toBe('-10000000000000');
  });
});
