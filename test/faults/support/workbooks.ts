import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';

/**
 * What a workbook says, as one hash: every sheet's name and every cell's value and number format. Two runs
 * writing the same statement give the same digest; their bytes differ only by the zip entries' timestamps
 * (exceljs stamps some entries with the time of writing).
 */
export async function workbookDigest(file: string): Promise<string> {
  // a statement's PDF carries no time of writing: the same statement is the same bytes
  if (file.endsWith('.pdf')) return sha256File(file);
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

/** Files of a directory split into final names and hidden temporary ones (`.name.xlsx.<random>.partial`, .pdf too). */
export function listOutput(dir: string): { finals: string[]; partials: string[]; other: string[] } {
  const names = readdirSync(dir).sort();
  const final = (n: string) => !n.startsWith('.') && /\.(xlsx|pdf)$/.test(n);
  const partial = (n: string) => /^\..+\.(xlsx|pdf)\.[0-9a-f]+\.partial$/.test(n);
  return {
    finals: names.filter(final),
    partials: names.filter(partial),
    other: names.filter((n) => !final(n) && !partial(n)),
  };
}
