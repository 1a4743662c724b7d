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
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';
import { FONT_NAME } from '../../src/export/workbook/xlsx';
import type { PayoutSection } from '../../src/export/payouts/sheets';
import { payoutReference } from '../../src/export/statements/payout-references';
import type { StatementHeader } from '../../src/export/statements/figures';

/**
 * Print-ready workbooks: every sheet of a statement and of the Payouts index, read back from the file,
 * prints one page wide, landscape where wide, with its header rows repeated and page numbers in the
 * footer; no column is narrower than its header; every bold run names the one font family.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-print-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Alpha Shop',
  currency: 'EUR',
  opening: 0n,
  gross: 10_000n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 250n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 9_750n,
  closing: 9_750n,
  operations: 1,
};
const meta: StatementMeta = {
  month: '2025-01',
  timezone: 'Europe/Kyiv',
  position: '10/1',
  figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', [f]),
};

async function sheetsOf(file: string): Promise<ExcelJS.Worksheet[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb.worksheets;
}

function expectPrintReady(ws: ExcelJS.Worksheet): void {
  const where = `sheet ${ws.name}`;
  expect(ws.pageSetup.fitToPage, where).toBe(true);
  expect(ws.pageSetup.fitToWidth, where).toBe(1);
  expect(ws.pageSetup.fitToHeight, where).toBe(0);
  expect(ws.headerFooter.oddFooter, where).toMatch(/&P (of|з) &N/);
  // the document's name (not the file's) in the header and the footer
  expect(ws.headerFooter.oddHeader, where).toMatch(/Payout statement|Виплатна виписка|Payouts 2025-01/);
  expect(ws.headerFooter.oddFooter, where).toMatch(/Payout statement|Виплатна виписка|Payouts 2025-01/);
  const widths = (ws.columns ?? []).map((c) => c.width ?? 0);
  const total = widths.reduce((s, w) => s + w, 0);
  expect(ws.pageSetup.orientation, where).toBe(total > 100 ? 'landscape' : 'portrait');
  ws.eachRow((row) => {
    row.eachCell((cell) => {
      if (cell.font?.bold) expect(cell.font.name, `${where} ${cell.address}`).toBe(FONT_NAME);
    });
  });
  // nothing cut: a text fits its column, or runs on over empty cells to its right
  ws.eachRow((row) => {
    row.eachCell((cell, col) => {
      if (typeof cell.value !== 'string') return;
      const width = ws.getColumn(col).width ?? 8.43;
      const next = row.getCell(col + 1).value;
      if (cell.value.length + 1 > width)
        expect(next === null || next === undefined || next === '', `${where} ${cell.address} ${cell.value}`).toBe(true);
    });
  });
  // a date (right-aligned by default) never prints against the text of the column after it
  ws.eachRow((row) => {
    row.eachCell((cell, col) => {
      if (cell.value instanceof Date && typeof row.getCell(col + 1).value === 'string')
        expect(cell.alignment?.horizontal, `${where} ${cell.address}`).toBe('left');
    });
  });
  // an empty table says so
  expect(ws.rowCount, where).toBeGreaterThan(1);
}

const issuedAt = new Date('2025-02-03T08:30:00.000Z');
const payouts: PayoutSection[] = [
  {
    currency: 'EUR',
    reference: 'PO-2025-01-SM-1',
    held: 0n,
    released: 0n,
    amountDue: 9_750n,
    payable: 9_750n,
    holds: [],
    paid: [{ bookingDate: '2025-01-05', reference: 'PO-2024-12-SM-1', currency: 'EUR', amount: 1_000n }],
  },
];

describe('print-ready workbooks', () => {
  for (const language of ['en', 'uk'] as const)
    it(`names the document, dates it with the run's issue time and prints every sheet whole (${language})`, async () => {
      const header: StatementHeader = {
        language,
        issuer: { name: 'ТОВ «Маркетплейс»', address: 'вул. Хрещатик, 1, Київ', taxId: '12345678' },
        recipient: { legalName: 'Alpha Shop LLC', taxId: '87654321', address: '1 Long Street, Kyiv' },
        number: '0007',
        issuedAt,
        contact: 'payouts@marketplace.test',
        dispute: 'Reply within 30 days of the issue date to dispute a figure.',
      };
      const file = path.join(dir, `statement-${language}.xlsx`);
      await writeStatementWorkbook(
        file,
        {
          figures: [f],
          lines: async function* () {},
          reserve: [{ heldOn: '2025-01-10', currency: 'EUR', held: 500n, releaseOn: '2025-03-10', released: 0n }],
          payouts,
        },
        meta,
        header,
      );
      const index = path.join(dir, `payouts-${language}.xlsx`);
      await writePayoutsWorkbook(index, [f], { ...meta, files: ['statement.xlsx'], issuedAt });
      for (const doc of [file, index]) {
        const wb = new ExcelJS.Workbook();
        await wb.xlsx.readFile(doc);
        // document properties: the real issue time, never 1970; the document's name
        expect(wb.created?.toISOString(), doc).toBe(issuedAt.toISOString());
        expect(wb.modified?.toISOString(), doc).toBe(issuedAt.toISOString());
        expect(wb.title, doc).toMatch(doc === file ? /0007, 2025-01 — Alpha Shop LLC/ : /^Payouts 2025-01/);
        for (const ws of wb.worksheets) {
          expectPrintReady(ws);
          expect(ws.headerFooter.oddHeader).toContain(wb.title);
          expect(ws.headerFooter.oddFooter).toContain(wb.title);
          expect(ws.headerFooter.oddFooter).toMatch(/&P (of|з) &N/);
        }
      }
    });

  it("prints each currency's payout reference on the Summary whole, beside the next currency's", async () => {
    const two = [f, { ...f, currency: 'UAH' }];
    // a sub-merchant id that is not a short upper-case code gives the longest reference
    const sections = two.map((g) => ({
      ...(payouts[0] as PayoutSection),
      currency: g.currency,
      reference: payoutReference('1edec17c-d853-4829-8642-24802b72c91e', '2025-01', g.currency, 2),
      paid: [],
    }));
    const file = path.join(dir, 'two-references.xlsx');
    await writeStatementWorkbook(
      file,
      { figures: two, lines: async function* () {}, reserve: [], payouts: sections },
      { ...meta, figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', two) },
    );
    const summary = (await sheetsOf(file)).find((s) => s.name === 'Summary');
    if (!summary) throw new Error('no Summary sheet');
    expectPrintReady(summary);
    const cells: string[] = [];
    summary.eachRow((row) => row.eachCell((cell) => cells.push(String(cell.value))));
    for (const s of sections) expect(cells).toContain(s.reference);
  });

  it('sets up every sheet of a statement and of the Payouts index for printing', async () => {
    const statement = path.join(dir, 'statement.xlsx');
    await writeStatementWorkbook(
      statement,
      {
        figures: [f],
        lines: async function* () {
          yield {
            at: new Date('2025-01-10T10:00:00Z'),
            orderId: 'order-1',
            paymentId: 'pay-1',
            method: 'purchase',
            status: 'success',
            share: 10_000n,
            fee: 250n,
            reserve: 0n,
            net: 9_750n,
            eventIds: ['e1'],
          };
        },
        reserve: [],
      },
      meta,
    );
    const payouts = path.join(dir, 'payouts.xlsx');
    await writePayoutsWorkbook(payouts, [f], { ...meta, files: ['statement.xlsx'] });
    const sheets = [...(await sheetsOf(statement)), ...(await sheetsOf(payouts))];
    expect(sheets.map((s) => s.name)).toEqual(expect.arrayContaining(['Summary', 'Operations', 'Payouts', 'Run']));
    for (const ws of sheets) expectPrintReady(ws);
    // table sheets repeat their header row and fit their headers
    for (const ws of sheets.filter((s) => s.name !== 'Summary')) {
      const header = ws.getRow(1);
      header.eachCell((cell, col) => {
        expect(ws.getColumn(col).width ?? 0, `${ws.name} ${String(cell.value)}`).toBeGreaterThanOrEqual(
          String(cell.value).length,
        );
      });
    }
  });
});
