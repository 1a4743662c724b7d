import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { figuresDigest, plainHeader } from '../../src/export/statements/figures';
import {
  type AdjustmentLine,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * A statement's words are translated, and the columns were sized for the English ones: on a Ukrainian statement
 * "регулярний платіж" (recurrent, 17 characters) sat in the Type column of 11 and printed cut by the status
 * beside it ("регулярний пуспішно"), and "повернення з резерву" (20) in the Adjustments' Entry column of 16.
 * Rule of the print-ready workbooks (docs/outputs.md): a text fits its column or runs on over empty cells.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-uk-words-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = new Date('2024-03-05T10:00:00Z');
const line = (method: string, status: string, share: bigint): StatementLine => ({
  at,
  orderId: 'ORD-1',
  paymentId: 'pay-1',
  method,
  status,
  share,
  fee: 0n,
  reserve: 0n,
  net: share,
  eventIds: ['e1'],
});
const lines: StatementLine[] = [
  line('recurrent', 'success', 1_000n),
  line('chargeback', 'failure', -100n),
  line('purchase', 'pending', 0n),
];
const entries: AdjustmentLine[] = [
  {
    at: new Date('2024-02-12T10:00:00Z'),
    kind: 'reserve_release',
    orderId: 'ORD-3',
    paymentId: 'pay-3',
    method: 'recurrent',
    status: 'failure',
    net: 500n,
    eventIds: ['e3'],
  },
];

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Квітка',
  currency: 'UAH',
  opening: 0n,
  adjustments: 500n,
  previousStatement: '2024-02',
  gross: 1_000n,
  refunds: 0n,
  chargebacks: 100n,
  fees: 0n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 900n,
  operations: 3,
  closing: 1_400n,
};

function expectNothingCut(ws: ExcelJS.Worksheet): number {
  let checked = 0;
  ws.eachRow((row) => {
    row.eachCell((cell, col) => {
      if (typeof cell.value !== 'string') return;
      checked++;
      const width = ws.getColumn(col).width ?? 8.43;
      const next = row.getCell(col + 1).value;
      if (cell.value.length + 1 > width)
        expect(next === null || next === undefined || next === '', `${ws.name} ${cell.address} «${cell.value}»`).toBe(
          true,
        );
    });
  });
  return checked;
}

describe('a Ukrainian statement prints its translated words whole', () => {
  for (const language of ['uk', 'en'] as const)
    it(`Operations and Adjustments (${language})`, async () => {
      const meta: StatementMeta = {
        month: '2024-03',
        timezone: 'Europe/Kyiv',
        position: '1/1',
        figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', [f]),
      };
      const file = path.join(dir, `${language}.xlsx`);
      await writeStatementWorkbook(
        file,
        {
          figures: [f],
          lines: async function* () {
            yield* lines;
          },
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
      const [operations, adjustments] = [wb.worksheets[1]!, wb.worksheets[2]!];
      const words = (ws: ExcelJS.Worksheet) => {
        const out: string[] = [];
        ws.eachRow((r) => {
          r.eachCell((c) => {
            if (typeof c.value === 'string') out.push(c.value);
          });
        });
        return out;
      };
      if (language === 'uk') {
        expect(words(operations)).toContain('регулярний платіж');
        expect(words(adjustments)).toContain('повернення з резерву');
      }
      expect(expectNothingCut(operations)).toBeGreaterThan(10);
      expect(expectNothingCut(adjustments)).toBeGreaterThan(5);
    });
});
