import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The Operations sheet's total line counted its lines with one word whatever the count: "Total (1 lines)", and in
 * Ukrainian "Разом (1 рядків)", "Разом (2 рядків)", "Разом (21 рядків)", where the language says 1 рядок, 2 рядки,
 * 5 рядків, 21 рядок. Each count now takes the form of its language's plural rules.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-plural-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
});

async function totalLabel(n: number, language: 'en' | 'uk'): Promise<string> {
  const lines = Array.from({ length: n }, (_, i) => line(i));
  const net = BigInt(n) * 1_000n;
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
    operations: n,
    closing: net,
  };
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'UTC',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'UTC', [f]),
  };
  const file = path.join(dir, `s-${language}-${n}.xlsx`);
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
  const sheet = wb.worksheets[1]!;
  const labels: string[] = [];
  sheet.eachRow((r) => {
    const v = String(r.getCell(1).value ?? '');
    if (/^(Total|Разом) \(/.test(v)) labels.push(v);
  });
  expect(labels, `${language} ${n}`).toHaveLength(1);
  return labels[0]!;
}

describe('review15: the Operations total counts its lines in the words of the statement’s language', () => {
  it.each([
    ['en', 1, 'Total (1 line)'],
    ['en', 2, 'Total (2 lines)'],
    ['en', 21, 'Total (21 lines)'],
    ['uk', 1, 'Разом (1 рядок)'],
    ['uk', 2, 'Разом (2 рядки)'],
    ['uk', 5, 'Разом (5 рядків)'],
    ['uk', 11, 'Разом (11 рядків)'],
    ['uk', 21, 'Разом (21 рядок)'],
    ['uk', 22, 'Разом (22 рядки)'],
  ] as const)('%s, a count of %i: %s', async (language, n, expected) => {
    expect(await totalLabel(n, language)).toBe(expected);
  });
});
