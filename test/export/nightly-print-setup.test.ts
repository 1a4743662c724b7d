import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import {
  type NightlyReportData,
  reportPeriods,
  writeNightlyReport,
  writeNightlyReportFor,
} from '../../src/export/nightly/report';
import { FONT_NAME } from '../../src/export/workbook/xlsx';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Every sheet of the nightly report, read back from the file, is ready to print: one page wide (as many tall
 * as needed), landscape exactly when wide, its header row repeated, the document's name in the header and
 * footer with page numbers, no cell shown cut (text wider than its column wraps, in a row tall enough), one
 * font family, and the workbook's properties carry the issue time (when it was written). A table
 * with nothing in it says "none".
 */

const TZ = 'Europe/Kyiv';
let db: TestDatabase;
const out = mkdtempSync(path.join(tmpdir(), 'recon-nightly-print-'));
const files: string[] = [];
/** when the reports are written: their issue time */
const WRITTEN = new Date('2025-03-01T08:00:00.000Z');

beforeAll(async () => {
  db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  const scenario = scenarioFor({ seed: 77, payments: 200, month: '2025-01', timezone: TZ, subMerchants: 5 });
  for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48 });
  // a day in the month, and the day the month's discrepancies were found (the report with the most in it)
  const [last] = await db.sql<{ d: Date }[]>`select max(detected_at) as d from recon.discrepancies`;
  for (const date of ['2025-01-15', DateTime.fromJSDate(last!.d, { zone: TZ }).toISODate()!]) {
    const { file } = await writeNightlyReportFor(
      { sql: db.sql, store },
      { date, timezone: TZ, graceHours: 48, outDir: out, facts: [['Job: healing requests', 3]], now: WRITTEN },
    );
    files.push(file);
  }
}, 120_000);

afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

async function open(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb;
}

/** What a cell shows, in characters, read from its value and its number format (not from the writer's code). */
function shown(cell: ExcelJS.Cell): number {
  const v = cell.value;
  if (v === null || v === undefined) return 0;
  if (v instanceof Date) return String(cell.numFmt ?? 'yyyy-mm-dd').replace(/"/g, '').length;
  if (typeof v === 'number') {
    const fmt = String(cell.numFmt ?? '').split(';')[0]!;
    const decimals = /\.(0+)/.exec(fmt)?.[1]?.length ?? 0;
    const code = /"([^"]*)"/.exec(fmt)?.[1];
    const text = v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    return text.length + (code ? code.length + 1 : 0);
  }
  return Math.max(
    ...String(v)
      .split('\n')
      .map((l) => l.length),
  );
}

const isEmpty = (c: ExcelJS.Cell | undefined) =>
  c === undefined || c.value === null || c.value === '' || c.value === undefined;

function expectPrintReady(ws: ExcelJS.Worksheet, documentName: string): void {
  const where = `sheet ${ws.name}`;
  expect(ws.pageSetup.fitToPage, where).toBe(true);
  expect(ws.pageSetup.fitToWidth, where).toBe(1);
  expect(ws.pageSetup.fitToHeight, where).toBe(0);
  expect(ws.pageSetup.printTitlesRow, where).toBe('1:1');
  expect(ws.headerFooter.oddHeader, where).toContain(documentName);
  expect(ws.headerFooter.oddFooter, where).toContain(documentName);
  expect(ws.headerFooter.oddFooter, where).toContain('&P of &N');
  const widths = (ws.columns ?? []).map((c) => c.width ?? 0);
  const total = widths.reduce((s, w) => s + w, 0);
  expect(ws.pageSetup.orientation, where).toBe(total > 100 ? 'landscape' : 'portrait');
  ws.eachRow((row, r) => {
    let tallest = 1;
    row.eachCell((cell, col) => {
      const at = `${where} ${cell.address} ${JSON.stringify(cell.value)}`;
      const width = ws.getColumn(col).width ?? 8.43;
      if (cell.font) expect(cell.font.name, at).toBe(FONT_NAME);
      if (cell.alignment?.wrapText) {
        // wrapped: every word fits, and the row is given a height for its lines
        const words = String(cell.value).split(/[\s\n]+/);
        for (const w of words) expect(w.length, at).toBeLessThanOrEqual(width);
        tallest = Math.max(tallest, String(cell.value).split('\n').length);
      } else if (typeof cell.value === 'string' && col < widths.length && isEmpty(row.getCell(col + 1))) {
        // a label beside empty cells of the table runs over them (the last column has none)
      } else expect(shown(cell), at).toBeLessThanOrEqual(width);
    });
    if (tallest > 1) expect(row.height, `${where} row ${r}`).toBeGreaterThanOrEqual(tallest * 12);
  });
  // the header row is bold and names every column
  const header = ws.getRow(1);
  header.eachCell((cell) => expect(cell.font?.bold, `${where} header`).toBe(true));
}

describe('print-ready nightly report', () => {
  it('sets up every sheet of the report for printing, with nothing cut', async () => {
    for (const file of files) {
      const wb = await open(file);
      const date = path.basename(file).slice('nightly-'.length, -'.xlsx'.length);
      const name = `Nightly reconciliation report ${date} (${TZ})`;
      expect(wb.worksheets.length).toBeGreaterThan(5);
      for (const ws of wb.worksheets) expectPrintReady(ws, name);
    }
  });

  it('carries the issue time (when it was written) and the title in the workbook properties', async () => {
    for (const file of files) {
      const wb = await open(file);
      const date = path.basename(file).slice('nightly-'.length, -'.xlsx'.length);
      const end = DateTime.fromISO(date, { zone: TZ }).plus({ days: 1 }).toJSDate();
      expect(wb.created?.toISOString()).toBe(WRITTEN.toISOString());
      expect(wb.modified?.toISOString()).toBe(WRITTEN.toISOString());
      expect(end < WRITTEN).toBe(true);
      expect(wb.title).toBe(`Nightly reconciliation report ${date} (${TZ})`);
    }
  });

  it('says "none" on a table with nothing in it', async () => {
    const data: NightlyReportData = {
      date: '2025-03-30',
      timezone: TZ,
      ...reportPeriods('2025-03-30', TZ, 48),
      sources: [],
      matching: [],
      discrepancies: [],
      open: [],
      windows: [],
      facts: [],
    };
    const file = path.join(out, 'empty.xlsx');
    await writeNightlyReport(file, data);
    const wb = await open(file);
    for (const ws of wb.worksheets) {
      expectPrintReady(ws, 'Nightly reconciliation report 2025-03-30 (Europe/Kyiv)');
      if (ws.name !== 'Job') expect(ws.getCell('A2').value, ws.name).toBe('none');
    }
  });
});
