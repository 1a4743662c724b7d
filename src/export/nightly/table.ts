import {
  BOLD_FONT,
  FONT_NAME,
  currencyExponent,
  moneyOrExactText,
  printSetup,
  safeText,
  type Sheet,
  type Workbook,
} from '../workbook/xlsx';

/**
 * The nightly report's table sheets, written with their rows known beforehand so that a printed page reads
 * well: column widths from what the cells show (nothing printed cut), headers and long text wrapped onto as
 * many lines as they need (rows made tall enough), numbers right-aligned under right-aligned headers, the
 * document's name and page numbers on every page, and "none" where a table has no rows.
 */

export type CellKind = 'text' | 'count' | 'money' | 'date' | 'datetime';

export interface NightlyColumn {
  readonly header: string;
  readonly kind?: CellKind;
  readonly numFmt?: string;
  /** widest the column grows; longer text wraps within it */
  readonly maxWidth?: number;
  /** written for the file's reader (an import), not shown */
  readonly hidden?: boolean;
}

/** A cell and, for money, the currency it is shown in (its number format names the currency). */
export type NightlyCell = string | number | Date | null | { readonly money: number; readonly currency: string };

/** An amount as a nightly cell: a number in its currency's format, or its exact value as marked text (moneyOrExactText). */
export function nightlyMoney(minor: bigint, currency: string | null): NightlyCell {
  const v = moneyOrExactText(minor, currency);
  return typeof v === 'number' && currency ? { money: v, currency } : v;
}

const DEFAULT_MAX_WIDTH = 60;
/** A header is wrapped onto lines no narrower than this, so that a narrow column of numbers keeps a readable head. */
const MIN_HEADER_WIDTH = 9;
const MIN_COLUMN_WIDTH = 10;
/** Points per line of 11-point text. */
const LINE_HEIGHT = 15;

const grouped = (n: number, decimals: number) =>
  n.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });

const isMoney = (cell: NightlyCell): cell is { readonly money: number; readonly currency: string } =>
  cell !== null && typeof cell === 'object' && !(cell instanceof Date);

/** The characters a cell shows, as the number formats of xlsx.ts draw it (the widest line of text). */
export function shownLength(cell: NightlyCell, kind: CellKind = 'text'): number {
  if (cell === null) return 0;
  if (cell instanceof Date) return kind === 'date' ? 10 : 19;
  if (isMoney(cell)) return grouped(cell.money, currencyExponent(cell.currency)).length + 1 + cell.currency.length;
  if (typeof cell === 'number') return grouped(cell, kind === 'count' ? 0 : 2).length;
  return Math.max(0, ...cell.split('\n').map((l) => l.length));
}

/** Lines a text takes in a column of `width` characters, wrapped at spaces (a longer word breaks). */
export function linesIn(text: string, width: number): number {
  const room = Math.max(1, width - 1);
  let lines = 0;
  for (const paragraph of text.split('\n')) {
    let line = 0;
    lines++;
    for (const word of paragraph.split(' ')) {
      const need = line === 0 ? word.length : line + 1 + word.length;
      if (need <= room) line = need;
      else {
        lines += line === 0 ? 0 : 1;
        lines += Math.max(0, Math.ceil(word.length / room) - 1);
        line = word.length % room || room;
      }
    }
  }
  return lines;
}

/**
 * Text followed by an empty cell of the table runs over it, as a label of a totals row does: it needs no width
 * of its own. The last column has nothing to run over.
 */
export const spills = (cells: readonly NightlyCell[], i: number, columns: number): boolean =>
  typeof cells[i] === 'string' &&
  i + 1 < columns &&
  (cells[i + 1] === undefined || cells[i + 1] === null || cells[i + 1] === '');

const longestWord = (s: string) => Math.max(0, ...s.split(/[\s\n]+/).map((w) => w.length));

/**
 * Widths in characters: the widest cell plus a margin, at most `maxWidth` (longer text wraps). A header
 * longer than its column wraps onto lines, but the column keeps its longest word and a readable minimum.
 */
export function contentWidths(
  columns: readonly NightlyColumn[],
  rows: ReadonlyArray<readonly NightlyCell[]>,
): number[] {
  return columns.map((c, i) => {
    // a loop, not Math.max(...rows): a spread of a few hundred thousand arguments overflows the stack
    let widest = 0;
    for (const r of rows) widest = Math.max(widest, shownLength(r[i] ?? null, c.kind));
    const head = Math.min(c.header.length, Math.max(longestWord(c.header), MIN_HEADER_WIDTH, widest));
    const width = Math.min(
      Math.max(widest, head) + 2,
      Math.max(c.maxWidth ?? DEFAULT_MAX_WIDTH, longestWord(c.header) + 2),
    );
    // exceljs leaves out a width of 9 (its default), and the file's reader then uses its own narrower one
    return Math.max(width, MIN_COLUMN_WIDTH);
  });
}

/** `&` starts a code in a header or footer: a literal one is doubled. */
const headerText = (s: string) => s.replace(/&/g, '&&');

/** The document's name on the left of every page's header, the sheet on the right, page numbers below. */
export function nameThePages(t: { readonly sheet: Sheet }, documentName: string): void {
  t.sheet.headerFooter.oddHeader = `&L&"${FONT_NAME},Bold"${headerText(documentName)}&R&A`;
  t.sheet.headerFooter.oddFooter = `&L${headerText(documentName)}&RPage &P of &N`;
}

const rightAligned = (kind: CellKind | undefined) => kind !== undefined && kind !== 'text';

export interface NightlySheet {
  readonly sheet: Sheet;
  readonly columns: readonly NightlyColumn[];
  readonly widths: readonly number[];
  /** rows written so far, header included */
  rows: number;
}

/** A sheet with its bold header row (wrapped, repeated on every page, frozen), print setup and page names. */
export function openNightlySheet(
  wb: Workbook,
  documentName: string,
  name: string,
  columns: readonly NightlyColumn[],
  widths: readonly number[],
): NightlySheet {
  const sheet = wb.addWorksheet(name, {
    views: [{ state: 'frozen', xSplit: 0, ySplit: 1 }],
    ...printSetup(widths),
  });
  sheet.columns = columns.map((c, i) => ({
    width: widths[i],
    ...(c.numFmt ? { style: { numFmt: c.numFmt } } : {}),
    ...(c.hidden ? { hidden: true } : {}),
  }));
  const t: NightlySheet = { sheet, columns, widths, rows: 0 };
  nameThePages(t, documentName);
  writeCells(
    t,
    columns.map((c) => c.header),
    { bold: true, wrap: true },
  );
  return t;
}

/**
 * Writes one row: money in its currency's format, text wider than its column (or every text cell, with
 * `wrap`) wrapped, the row as tall as its tallest cell.
 */
export function writeCells(
  t: NightlySheet,
  cells: readonly NightlyCell[],
  opts: {
    bold?: boolean;
    wrap?: boolean;
    moneyFormat?: (currency: string) => string;
    dateFormat?: string;
    /** the kinds of a table's own columns, for a header row of a second table on the sheet */
    kinds?: ReadonlyArray<CellKind | undefined>;
  } = {},
): void {
  const row = t.sheet.addRow(
    cells.map((cell) => (isMoney(cell) ? cell.money : typeof cell === 'string' ? safeText(cell) : cell)),
  );
  const wraps = cells.map(
    (cell, i) =>
      typeof cell === 'string' &&
      (opts.wrap ||
        cell.includes('\n') ||
        (shownLength(cell) + 2 > (t.widths[i] ?? 10) && !spills(cells, i, t.columns.length))),
  );
  const lines = Math.max(1, ...cells.map((cell, i) => (wraps[i] ? linesIn(String(cell), t.widths[i] ?? 10) : 1)));
  // a header sits on the data below it; a tall data row reads from its top line
  const vertical = opts.wrap ? ('bottom' as const) : ('top' as const);
  cells.forEach((cell, i) => {
    const c = row.getCell(i + 1);
    const column = t.columns[i];
    if (isMoney(cell) && opts.moneyFormat) c.numFmt = opts.moneyFormat(cell.currency);
    if (cell instanceof Date && opts.dateFormat && !column?.numFmt) c.numFmt = opts.dateFormat;
    const kind = (j: number) => (opts.kinds ? opts.kinds[j] : t.columns[j]?.kind);
    const right = rightAligned(kind(i)) && typeof cell === 'string' && opts.bold;
    // text right after a right-aligned number keeps a space from it
    const indent = typeof cell === 'string' && !right && i > 0 && rightAligned(kind(i - 1));
    // a number in a column of text (a fact's value) reads beside its label, like the text above and below it
    const left = typeof cell === 'number' && !rightAligned(kind(i));
    if (wraps[i] || lines > 1 || indent || left)
      c.alignment = {
        vertical,
        ...(wraps[i] ? { wrapText: true } : {}),
        ...(right ? { horizontal: 'right' as const, indent: 1 } : {}),
        ...(indent ? { horizontal: 'left' as const, indent: 1 } : {}),
        ...(left ? { horizontal: 'left' as const } : {}),
      };
    if (opts.bold) c.font = BOLD_FONT;
  });
  if (lines > 1) row.height = lines * LINE_HEIGHT;
  row.commit();
  t.rows++;
}

/** Autofilter over the header and the data, then the totals (bold) after a blank row. */
export function closeNightlySheet(
  t: NightlySheet,
  totals: ReadonlyArray<readonly NightlyCell[]> = [],
  moneyFormat?: (currency: string) => string,
): void {
  const last = String.fromCharCode(64 + t.columns.length);
  t.sheet.autoFilter = `A1:${last}${Math.max(1, t.rows)}`;
  if (totals.length) {
    t.sheet.addRow([]).commit();
    for (const r of totals) writeCells(t, r, { bold: true, ...(moneyFormat ? { moneyFormat } : {}) });
  }
  t.sheet.commit();
}

/**
 * Writes a whole table sheet: widths from the content, money cells in their own currency's format, long
 * text wrapped, "none" when there are no rows, optional totals below.
 */
export function writeNightlyTable(
  wb: Workbook,
  documentName: string,
  name: string,
  columns: readonly NightlyColumn[],
  rows: ReadonlyArray<readonly NightlyCell[]>,
  opts: {
    totals?: ReadonlyArray<readonly NightlyCell[]>;
    moneyFormat: (currency: string) => string;
  },
): void {
  const labels = (opts.totals ?? []).map((r) => r.map((c, i) => (spills(r, i, columns.length) ? null : c)));
  const widths = contentWidths(columns, [...rows, ...labels]);
  const t = openNightlySheet(wb, documentName, name, columns, widths);
  if (rows.length === 0) writeCells(t, ['none']);
  for (const r of rows) writeCells(t, r, { moneyFormat: opts.moneyFormat });
  closeNightlySheet(t, opts.totals, opts.moneyFormat);
}
