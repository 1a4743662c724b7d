import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';

/**
 * What a workbook says, as one hash: every sheet's name and every cell's value and number format. Two runs
 * writing the same statement give the same digest; their bytes differ only by the zip entries' timestamps
 * (exceljs stamps some entries with the time of writing).
 */
export async function workbookDigest(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const hash = createHash('sha256');
  wb.eachSheet((ws) => {
    hash.update(`sheet ${ws.name}\n`);
    ws.eachRow({ includeEmpty: true }, (row, n) => {
      const cells: unknown[] = [];
      row.eachCell({ includeEmpty: true }, (cell) =>
        cells.push([cell.value instanceof Date ? cell.value.toISOString() : cell.value, cell.numFmt ?? null]),
      );
      hash.update(`${n} ${JSON.stringify(cells)}\n`);
    });
  });
  return hash.digest('hex');
}

export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Files of a directory split into final names and hidden temporary ones (`.name.xlsx.<random>.partial`). */
export function listOutput(dir: string): { finals: string[]; partials: string[]; other: string[] } {
  const names = readdirSync(dir).sort();
  return {
    finals: names.filter((n) => !n.startsWith('.') && n.endsWith('.xlsx')),
    partials: names.filter((n) => /^\..+\.xlsx\.[0-9a-f]+\.partial$/.test(n)),
    other: names.filter(
      (n) => !(!n.startsWith('.') && n.endsWith('.xlsx')) && !/^\..+\.xlsx\.[0-9a-f]+\.partial$/.test(n),
    ),
  };
}
