import ExcelJS from 'exceljs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkbook, safeText } from '../../src/export/workbook/xlsx';
import { csvCell } from '../../src/reconciliation/discrepancy-listing';

/**
 * Review 14: the CSV and workbook writers defused a text starting with = + - @ (a leading apostrophe) but not one
 * with blanks before it: LibreOffice's CSV import with "Trim spaces" on, or a person pasting the cell, trims them
 * and evaluates `=HYPERLINK(...)`. A receiver or sub-merchant name is the PSP's data, kept as written. Blank-led
 * formulas are now defused as the bare ones are.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-formula-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const attacks = [' =HYPERLINK("http://evil.example","x")', "  +cmd|' /C calc'!A0", '\u00a0-2+3', ' \t@SUM(A1:A9)'];

describe('review14: a formula behind blanks is defused in CSV and workbook cells', () => {
  it('csv: each comes out with a leading apostrophe, so no trimming makes it a formula', () => {
    for (const a of attacks) {
      const cell = csvCell(a);
      const unquoted = cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell;
      expect(unquoted).toBe(`'${a}`);
      expect(unquoted.trim()).not.toMatch(/^[=+\-@]/);
    }
    // what was defused before is as it was, and plain text is untouched
    expect(csvCell('=1+2')).toBe(`"'=1+2"`);
    expect(csvCell(' plain')).toBe('" plain"');
    expect(csvCell('-')).toBe(`"'-"`);
  });

  it('workbook: the cells written hold the defused text', async () => {
    const file = path.join(dir, 'names.xlsx');
    const wb = openWorkbook(file, { title: 'names' });
    const ws = wb.workbook.addWorksheet('Names');
    for (const a of attacks) ws.addRow([safeText(a)]).commit();
    await wb.commit();
    const read = new ExcelJS.Workbook();
    await read.xlsx.readFile(file);
    const cells = read
      .getWorksheet('Names')!
      .getColumn(1)
      .values.filter((v) => v !== undefined);
    expect(cells).toEqual(attacks.map((a) => `'${a}`));
  });
});
