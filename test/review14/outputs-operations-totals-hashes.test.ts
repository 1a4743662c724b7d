import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { figuresDigest, plainHeader } from '../../src/export/statements/figures';
import {
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * A statement's Operations sheet had money columns 16 (share, net) and 14 (fee, reserve) wide whatever the month
 * held: a sub-merchant selling 1,234,567.89 UAH in a month (a few hundred sales) got a totals row that printed
 * `###` where its share and net belong. The columns are sized for the month's amounts.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-ops-width-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sale = (i: number, share: bigint): StatementLine => ({
  at: new Date(`2024-03-${String(5 + i).padStart(2, '0')}T10:00:00Z`),
  orderId: `ORD-${i}`,
  paymentId: `pay-${i}`,
  method: 'purchase',
  status: 'success',
  share,
  fee: share / 50n,
  reserve: share / 10n,
  net: share - share / 50n - share / 10n,
  eventIds: [`e${i}`],
});
// three sales of 411,522.63 UAH: each fits 16 characters, their total (1,234,567.89 UAH) does not
const lines = [sale(0, 41_152_263n), sale(1, 41_152_263n), sale(2, 41_152_263n)];
const sum = (k: 'share' | 'fee' | 'reserve' | 'net') => lines.reduce((s, l) => s + l[k], 0n);
const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Квітка',
  currency: 'UAH',
  opening: 0n,
  gross: sum('share'),
  refunds: 0n,
  chargebacks: 0n,
  fees: sum('fee'),
  reserveHeld: sum('reserve'),
  reserveReleased: 0n,
  netPayable: sum('net'),
  operations: 3,
  closing: sum('net'),
};

const drawn = (n: number) => `${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} UAH`;

describe('Operations: money columns as wide as the month’s money', () => {
  it('the totals row prints its amounts, not ###', async () => {
    const meta: StatementMeta = {
      month: '2024-03',
      timezone: 'Europe/Kyiv',
      position: '1/1',
      figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', [f]),
    };
    const file = path.join(dir, 'uk.xlsx');
    await writeStatementWorkbook(
      file,
      {
        figures: [f],
        lines: async function* () {
          yield* lines;
        },
        reserve: [],
      },
      meta,
      { ...plainHeader(meta), language: 'uk' },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.worksheets[1]!;
    let checked = 0;
    let total = false;
    ws.eachRow((r) => {
      r.eachCell((cell, col) => {
        if (cell.value === 1_234_567.89) total = true;
        if (typeof cell.value !== 'number') return;
        checked++;
        const text = drawn(cell.value);
        expect(ws.getColumn(col).width ?? 0, `${cell.address} ${text}`).toBeGreaterThanOrEqual(text.length + 2);
      });
    });
    expect(total).toBe(true);
    expect(checked).toBeGreaterThan(15);
  });
});
