import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/export/i18n/labels';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The Ukrainian reserve schedule headed two of its columns with one word: "Утримано" over the day the reserve was
 * held and over the amount held (with "Повернення" and "Повернуто" beside them), so a reader of the PDF or the
 * workbook could not tell a date column from an amount column by its header. Every column now has its own
 * header, the days' ones naming a date ("Дата утримання", "Дата повернення").
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-uk-reserve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Shop',
  currency: 'UAH',
  opening: 0n,
  gross: 10_000n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 0n,
  reserveHeld: 1_000n,
  reserveReleased: 0n,
  netPayable: 9_000n,
  operations: 0,
  closing: 9_000n,
};
const meta: StatementMeta = {
  month: '2024-03',
  timezone: 'UTC',
  position: '1/1',
  figuresSha256: figuresDigest('2024-03', 'UTC', [f]),
};
const source = {
  figures: [f],
  lines: async function* () {},
  reserve: [{ heldOn: '2024-03-05', currency: 'UAH', held: 1_000n, releaseOn: '2024-06-03', released: 0n }],
};
const header = { ...plainHeader(meta), language: 'uk' as const };
const t = LABELS.uk;
const reserveHeaders = [t.heldOn, t.currency, t.held, t.releaseOn, t.released];

describe('review15: the Ukrainian reserve schedule names each column apart', () => {
  it('has five distinct headers, those of days naming a date', () => {
    expect(new Set(reserveHeaders).size).toBe(reserveHeaders.length);
    for (const h of [t.heldOn, t.releaseOn]) expect(h).toMatch(/^Дата /);
  });

  it('prints them so in the PDF', async () => {
    const pdf = path.join(dir, 'statement.pdf');
    await writeStatementPdf(pdf, source, meta, header);
    const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.trim() === t.reserveSheet);
    expect(at).toBeGreaterThan(-1);
    const printed = lines[at + 1]!.trim().split(/\s{2,}/);
    expect(new Set(printed).size).toBe(5);
    expect(printed).toEqual(reserveHeaders);
  });

  it('writes them so in the workbook', async () => {
    const file = path.join(dir, 'statement.xlsx');
    await writeStatementWorkbook(file, source, meta, header);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const sheet = wb.worksheets.find((s) => s.name.includes(t.reserveSheet))!;
    const row = (sheet.getRow(1).values as unknown[]).slice(1).map(String);
    expect(new Set(row).size).toBe(5);
    expect(row).toEqual(reserveHeaders);
  });
});
