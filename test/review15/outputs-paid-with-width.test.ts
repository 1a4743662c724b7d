import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/export/i18n/labels';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The Operations sheet's "Paid with" column was 22 characters wide in every language, so a card scheme the
 * statement knows printed cut against the Share amount beside it: "Google Pay · American Express" (29),
 * "Картка · American Express" (25). The column is sized, as Type and Status are, for the widest words the
 * statement's language writes for a known payway and scheme.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-paid-with-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAID: ReadonlyArray<{ payway: string; scheme: string | null }> = [
  { payway: 'card', scheme: 'visa' },
  { payway: 'card', scheme: 'amex' },
  { payway: 'apple_pay', scheme: 'amex' },
  { payway: 'google_pay', scheme: 'amex' },
  { payway: 'bank_transfer', scheme: null },
];

const line = (i: number): StatementLine => ({
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
  paidWith: PAID[i]!,
});

describe('review15: the statement’s Paid with column holds the words it prints', () => {
  it.each(['en', 'uk'] as const)('%s: as wide as its widest value and 2 more, as Type and Status', async (language) => {
    const lines = PAID.map((_, i) => line(i));
    const net = BigInt(lines.length) * 1_000n;
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
    const file = path.join(dir, `s-${language}.xlsx`);
    const source = {
      figures: [f],
      lines: async function* () {
        yield* lines;
      },
      reserve: [],
    };
    await writeStatementWorkbook(file, source, meta, { ...plainHeader(meta), language });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.worksheets[1]!;
    const col = (ws.getRow(1).values as unknown[]).indexOf(LABELS[language].paidWith);
    expect(col).toBeGreaterThan(0);
    const values: string[] = [];
    ws.eachRow((r, n) => {
      if (n > 1 && n <= lines.length + 1) values.push(String(r.getCell(col).value));
    });
    expect(values).toHaveLength(lines.length);
    expect(values.some((v) => v.includes('American Express'))).toBe(true);
    const widest = Math.max(...values.map((v) => v.length));
    // the lines hold the widest words a known payway and scheme give: the column fits them, and no more
    expect(ws.getColumn(col).width).toBe(widest + 2);
  });
});
