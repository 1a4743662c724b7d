import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  figuresDigest,
  type StatementFigures,
  type StatementMeta,
  writePayoutsWorkbook,
} from '../../src/export/statements/workbooks';
import type { PayoutSection } from '../../src/export/payouts/sheets';

/**
 * Finance's Payouts index had its money columns 16 characters wide whatever they held: the demo's month (twelve
 * sub-merchants) totals 2,130,909.47 UAH of gross, and LibreOffice printed the UAH Total row's gross, net payable
 * and amount due as `###`. A money cell must be as wide as the number its format draws, and a margin.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-payouts-width-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (id: string, gross: bigint): StatementFigures => ({
  subMerchantId: id,
  subMerchantName: `Shop ${id}`,
  currency: 'UAH',
  opening: 0n,
  gross,
  refunds: 0n,
  chargebacks: 0n,
  fees: 0n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: gross,
  closing: gross,
  operations: 1,
});
// 900,000.00 UAH each: every row fits 16 characters ("900,000.00 UAH"), their total does not
const figures = ['sm-1', 'sm-2', 'sm-3'].map((id) => row(id, 90_000_000n));
figures.push(row('sm-4', 1_234_567_890n)); // 12,345,678.90 UAH: a row of its own past 16
const meta: StatementMeta = {
  month: '2025-01',
  timezone: 'Europe/Kyiv',
  position: '10/1',
  figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', figures),
};
const payoutOf = (subMerchantId: string, currency: string): PayoutSection => {
  const f = figures.find((x) => x.subMerchantId === subMerchantId)!;
  return {
    currency,
    reference: `RS-${subMerchantId.toUpperCase()}-2025-01-UAH`,
    held: 0n,
    released: 0n,
    amountDue: f.netPayable,
    payable: f.netPayable,
    holds: [],
    paid: [],
  };
};

/** As `#,##0.00 "UAH"` draws a number: grouped, two decimals, the code. */
const drawn = (n: number) => `${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} UAH`;

describe('Payouts index: money columns as wide as their money', () => {
  it('no total or amount prints as ###', async () => {
    const file = path.join(dir, 'payouts.xlsx');
    await writePayoutsWorkbook(file, figures, { ...meta, issuedAt: new Date('2025-02-03T08:30:00Z') }, payoutOf);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    let totals = 0;
    let checked = 0;
    for (const name of ['Payouts', 'Payout status']) {
      const ws = wb.getWorksheet(name)!;
      ws.eachRow((r) => {
        if (r.getCell(1).value === 'Total') totals++;
        r.eachCell((cell, col) => {
          if (typeof cell.value !== 'number' || !String(cell.numFmt ?? '').includes('UAH')) return;
          checked++;
          const text = drawn(cell.value);
          expect(ws.getColumn(col).width ?? 0, `${name} ${cell.address} ${text}`).toBeGreaterThanOrEqual(
            text.length + 2,
          );
        });
      });
    }
    expect(totals).toBe(1);
    expect(checked).toBeGreaterThan(40);
  });
});
