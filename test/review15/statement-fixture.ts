import path from 'node:path';
import ExcelJS from 'exceljs';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/** A 10.00 UAH purchase of March 2024, the i-th of the month (`extra`: fields of its own, e.g. paidWith). */
export const purchaseLine = (i: number, extra: Partial<StatementLine> = {}): StatementLine => ({
  at: new Date(Date.UTC(2024, 2, 5, 10, i)),
  orderId: `ORD-${i}`,
  paymentId: `pay-${i}`,
  method: 'purchase',
  status: 'success',
  share: 1_000n,
  fee: 0n,
  reserve: 0n,
  net: 1_000n,
  eventIds: [],
  ...extra,
});

/**
 * One sub-merchant's workbook of March 2024 (UTC) holding `lines` (their nets its figures), written to `file`
 * in `language` and read back.
 */
export async function workbookOfLines(
  file: string,
  lines: readonly StatementLine[],
  language: 'en' | 'uk',
): Promise<ExcelJS.Workbook> {
  const net = lines.reduce((s, l) => s + l.net, 0n);
  const f: StatementFigures = {
    subMerchantId: 'sm-1',
    subMerchantName: 'Shop',
    currency: 'UAH',
    opening: 0n,
    gross: net,
    refunds: 0n,
    chargebacks: 0n,
    fees: 0n,
    reserveHeld: 0n,
    reserveReleased: 0n,
    netPayable: net,
    operations: lines.length,
    closing: net,
  };
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'UTC',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'UTC', [f]),
  };
  const source = {
    figures: [f],
    lines: async function* () {
      yield* lines;
    },
    reserve: [],
  };
  await writeStatementWorkbook(path.resolve(file), source, meta, { ...plainHeader(meta), language });
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb;
}
