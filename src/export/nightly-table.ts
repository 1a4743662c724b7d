import {
  BOLD_FONT,
  COUNT_FORMAT,
  FONT_NAME,
  addTableSheet,
  closeTable,
  currencyExponent,
  safeText,
  type TableSheet,
  type Workbook,
} from './xlsx';

/**
 * A table sheet of the nightly report whose rows are known before it is written, so that its column widths
 * come from what the cells show (nothing printed cut), its header and footer name the document, and an empty
 * table says "none" instead of printing a bare header.
 */

export type CellKind = 'text' | 'count' | 'money' | 'date' | 'datetime';

export interface NightlyColumn {
  readonly header: string;
  readonly kind?: CellKind;
  readonly numFmt?: string;
  /** widest the column grows; longer text wraps within it */
  readonly maxWidth?: number;
}

/** A cell and, for money, the currency it is shown in (its number format names the currency). */
export type NightlyCell = string | number | Date | null | { readonly money: number; readonly currency: string };

const DEFAULT_MAX_WIDTH = 60;

const grouped = (n: number, decimals: number) =>
  n.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });

/** The characters a cell shows, as the number formats of xlsx.ts draw it. */
export function shownLength(cell: NightlyCell, kind: CellKind = 'text'): number {
  if (cell === null) return 0;
  if (cell instanceof Date) return kind === 'date' ? 10 : 19;
  if (typeof cell === 'object')
    return grouped(cell.money, currencyExponent(cell.currency)).length + 1 + cell.currency.length;
  if (typeof cell === 'number') return grouped(cell, kind === 'count' ? 0 : 2).length;
  return Math.max(0, ...cell.split('\n').map((l) => l.length));
}

/** Widths in characters: the widest of the header and the cells, plus a margin, at most `maxWidth`. */
export function contentWidths(
  columns: readonly NightlyColumn[],
  rows: ReadonlyArray<readonly NightlyCell[]>,
): number[] {
  return columns.map((c, i) => {
    const widest = Math.max(c.header.length, ...rows.map((r) => shownLength(r[i] ?? null, c.kind)));
    return Math.min(widest + 2, Math.max(c.maxWidth ?? DEFAULT_MAX_WIDTH, c.header.length + 2));
  });
}

/** `&` starts a code in a header or footer: a literal one is doubled. */
const headerText = (s: string) => s.replace(/&/g, '&&');

/** The document's name on the left of every page's header, the sheet on the right, page numbers below. */
export function nameThePages(t: TableSheet, documentName: string): void {
  t.sheet.headerFooter.oddHeader = `&L&"${FONT_NAME},Bold"${headerText(documentName)}&R&A`;
  t.sheet.headerFooter.oddFooter = `&L${headerText(documentName)}&RPage &P of &N`;
}

const cellValue = (cell: NightlyCell) =>
  cell !== null && typeof cell === 'object' && !(cell instanceof Date)
    ? cell.money
    : typeof cell === 'string'
      ? safeText(cell)
      : cell;

/**
 * Writes a whole table sheet: widths from the content, money cells formatted in their own currency, text
 * wider than its column wrapped, "none" when there are no rows, optional totals below.
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
  const widths = contentWidths(columns, [...rows, ...(opts.totals ?? [])]);
  const t = addTableSheet(
    wb,
    name,
    columns.map((c, i) => ({
      header: c.header,
      width: widths[i]!,
      ...(c.numFmt ? { numFmt: c.numFmt } : c.kind === 'count' ? { numFmt: COUNT_FORMAT } : {}),
    })),
  );
  nameThePages(t, documentName);
  const write = (cells: readonly NightlyCell[], bold: boolean) => {
    const row = t.sheet.addRow(cells.map(cellValue));
    cells.forEach((cell, i) => {
      const c = row.getCell(i + 1);
      if (cell !== null && typeof cell === 'object' && !(cell instanceof Date))
        c.numFmt = opts.moneyFormat(cell.currency);
      if (typeof cell === 'string' && shownLength(cell) + 2 > widths[i]!)
        c.alignment = { wrapText: true, vertical: 'top' };
      if (bold) c.font = BOLD_FONT;
    });
    row.commit();
  };
  if (rows.length === 0) write(['none'], false);
  for (const r of rows) write(r, false);
  t.rows += Math.max(1, rows.length);
  if (opts.totals?.length) {
    closeTableWithBoldRows(t, opts.totals, write);
    return;
  }
  closeTable(t);
}

/** closeTable with totals whose money cells keep their own currency's format. */
function closeTableWithBoldRows(
  t: TableSheet,
  totals: ReadonlyArray<readonly NightlyCell[]>,
  write: (cells: readonly NightlyCell[], bold: boolean) => void,
): void {
  const last = String.fromCharCode(64 + t.columns.length);
  t.sheet.autoFilter = `A1:${last}${Math.max(1, t.rows)}`;
  t.sheet.addRow([]).commit();
  for (const r of totals) write(r, true);
  t.sheet.commit();
}
