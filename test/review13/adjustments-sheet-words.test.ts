import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { figuresDigest, plainHeader } from '../../src/export/statements/figures';
import {
  type AdjustmentLine,
  type StatementFigures,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The Adjustments sheet is the sub-merchant's (only Audit is finance's), in its language. It wrote each entry's
 * journal kind as recon's code (`settlement`, `reversal`, `reserve_release`) and its type and status as the PSP's
 * codes (`purchase`, `failure`), untranslated on a Ukrainian statement whose Operations sheet says "оплата",
 * "неуспішно": internal words in a document that leaves the company.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review13-adjustments-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entries: AdjustmentLine[] = [
  {
    at: new Date('2024-02-10T10:00:00Z'),
    kind: 'reversal',
    orderId: 'ORD-1',
    paymentId: 'pay-1',
    method: 'purchase',
    status: 'failure',
    net: -9_000n,
    eventIds: ['e1'],
  },
  {
    at: new Date('2024-02-11T10:00:00Z'),
    kind: 'settlement',
    orderId: 'ORD-2',
    paymentId: 'pay-2',
    method: 'refund',
    status: 'success',
    net: -1_000n,
    eventIds: ['e2'],
  },
  {
    at: new Date('2024-02-12T10:00:00Z'),
    kind: 'reserve_release',
    orderId: 'ORD-3',
    paymentId: 'pay-3',
    method: 'purchase',
    status: 'success',
    net: 500n,
    eventIds: ['e3'],
  },
];

function figures(): StatementFigures {
  return {
    subMerchantId: 'sm-1',
    subMerchantName: 'Квітка',
    currency: 'UAH',
    opening: 100_000n,
    adjustments: -9_500n,
    previousStatement: '2024-02',
    gross: 0n,
    refunds: 0n,
    chargebacks: 0n,
    fees: 0n,
    reserveHeld: 0n,
    reserveReleased: 0n,
    netPayable: 0n,
    operations: 0,
    closing: 90_500n,
  };
}

async function adjustmentsSheet(language: 'en' | 'uk'): Promise<string[]> {
  const f = [figures()];
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'Europe/Kyiv',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', f),
  };
  const file = path.join(dir, `${language}.xlsx`);
  await writeStatementWorkbook(
    file,
    {
      figures: f,
      lines: async function* () {},
      adjustments: async function* () {
        yield* entries;
      },
      reserve: [],
    },
    meta,
    { ...plainHeader(meta), language },
  );
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  // the Adjustments sheet follows the Operations sheet
  const sheet = wb.worksheets[2]!;
  const cells: string[] = [];
  sheet.eachRow((r) => {
    r.eachCell((c) => {
      if (typeof c.value === 'string') cells.push(c.value);
    });
  });
  return cells;
}

describe('review13: the Adjustments sheet speaks the sub-merchant’s words', () => {
  it('no journal kind code on it, in either language', async () => {
    for (const language of ['en', 'uk'] as const) {
      const cells = await adjustmentsSheet(language);
      expect(cells.some((c) => c.includes('ORD-3'))).toBe(true);
      expect(cells, language).not.toContain('reserve_release');
    }
  });

  it('in Ukrainian, types, statuses and kinds are translated as on the Operations sheet', async () => {
    const cells = await adjustmentsSheet('uk');
    for (const code of ['purchase', 'failure', 'success', 'refund', 'settlement', 'reversal'])
      expect(cells, code).not.toContain(code);
    expect(cells).toContain('оплата');
    expect(cells).toContain('неуспішно');
  });
});
