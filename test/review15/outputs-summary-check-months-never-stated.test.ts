import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The Summary's check row of a statement with months never stated adds them in its formula
 * (opening + adjustments + months never stated + net payable − paid out − closing), but its words said
 * "Check: opening + adjustments + net payable − paid out − closing (must be 0)": a sub-merchant adding up what
 * the words name gets the months never stated, not 0. The words now name every term the formula adds.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-check-gap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// what each term of the formula is called, in each language
const TERMS = {
  en: { notStated: 'months never stated', net: 'net payable', paidOut: 'paid out', opening: 'opening' },
  uk: { notStated: 'невідображені місяці', net: 'до виплати', paidOut: 'виплачено', opening: 'початкове' },
} as const;

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Shop',
  currency: 'UAH',
  opening: 10_000n,
  gross: 50_000n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 1_000n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 49_000n,
  operations: 0,
  adjustments: 500n,
  notStated: 700n,
  notStatedMonths: '2024-01',
  paidOut: 10_000n,
  closing: 50_200n,
};
const meta: StatementMeta = {
  month: '2024-03',
  timezone: 'UTC',
  position: '1/1',
  figuresSha256: figuresDigest('2024-03', 'UTC', [f]),
};

describe('review15: the Summary’s check names what its formula adds', () => {
  it.each(['en', 'uk'] as const)('%s: months never stated in the formula are in its words', async (language) => {
    const file = path.join(dir, `s-${language}.xlsx`);
    const source = { figures: [f], lines: async function* () {}, reserve: [] };
    await writeStatementWorkbook(file, source, meta, { ...plainHeader(meta), language });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.worksheets[0]!;
    let check: { label: string; formula: string } | undefined;
    ws.eachRow((r) => {
      const v = r.getCell(2).value as { formula?: string } | null;
      if (v && typeof v === 'object' && v.formula) check = { label: String(r.getCell(1).value), formula: v.formula };
    });
    expect(check).toBeDefined();
    // the rows the formula adds, by their labels: the months never stated are one of them
    const added = [...check!.formula.matchAll(/B(\d+)/g)].map((m) => String(ws.getRow(Number(m[1])).getCell(1).value));
    const terms = TERMS[language];
    expect(added.some((l) => l.includes(language === 'en' ? 'Months never stated' : 'не відображені'))).toBe(true);
    for (const term of Object.values(terms)) expect(check!.label.toLowerCase(), term).toContain(term);
  });
});
