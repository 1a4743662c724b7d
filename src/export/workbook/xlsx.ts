import { defuseFormula } from '../../formula-guard';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type ExcelJS from 'exceljs';
import { IANAZone } from 'luxon';
import { ExportError } from '../errors';
import { currencyDecimals } from '../../money';
import { ensureOutDir } from '../out-dir';

/**
 * Spreadsheet hygiene shared by every workbook recon writes: exact money display, real dates in the
 * business zone, text that can never run as a formula, frozen header + autofilter + widths, and a
 * temp-then-rename file commit so that no partial file ever looks complete.
 */

/** Significant digits a spreadsheet keeps of a number (Excel's documented precision; LibreOffice's display). */
const SPREADSHEET_DIGITS = 15;
const SPREADSHEET_LIMIT = 10n ** BigInt(SPREADSHEET_DIGITS);

/**
 * Minor units (hundredths) to the number Excel stores. A decimal of at most 15 significant digits is exact
 * through a double: dividing its integer by 100 gives the double nearest the decimal value, whose shortest text
 * is that decimal, the very number Excel holds had one typed it. A 16th digit is not: 2^53 − 1 minor units is
 * the double 90071992547409.906…, written `90071992547409.9`, and Excel and LibreOffice keep 15 digits of any
 * number. So an amount of more significant digits (trailing zeros aside) is refused instead of written as a
 * wrong figure. This is for display only: every sum is taken in bigint before converting.
 */
export function minorToMajor(minor: bigint): number {
  if (!spreadsheetHolds(minor)) {
    throw new ExportError(
      'EXPORT_AMOUNT_TOO_LARGE',
      `amount ${minor} minor units is beyond what a spreadsheet number holds exactly (${SPREADSHEET_DIGITS} significant digits)`,
    );
  }
  return Number(minor) / 100;
}

/** Whether a spreadsheet number holds `minor` minor units exactly (minorToMajor). */
export function spreadsheetHolds(minor: bigint): boolean {
  const abs = minor < 0n ? -minor : minor;
  let digits = abs;
  while (digits >= SPREADSHEET_LIMIT && digits % 10n === 0n) digits /= 10n;
  return digits < SPREADSHEET_LIMIT && abs <= BigInt(Number.MAX_SAFE_INTEGER);
}

/** The mark of an amount written as text (moneyOrExactText). */
export const BEYOND_DIGITS = '(text: more digits than a spreadsheet number keeps)';

/**
 * A money cell's value for a total a reader checks rather than computes with (the Payouts index, the nightly
 * report): the number, or, past what a spreadsheet number holds, the exact amount as marked text, so that one
 * such total leaves the rest of the document written rather than refusing it.
 */
export function moneyOrExactText(minor: bigint, currency?: string | null): number | string {
  if (spreadsheetHolds(minor)) return minorToMajor(minor);
  const abs = minor < 0n ? -minor : minor;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const exact = `${minor < 0n ? '-' : ''}${whole}.${(abs % 100n).toString().padStart(2, '0')}`;
  return `${exact}${currency ? ` ${currency}` : ''} ${BEYOND_DIGITS}`;
}

/** Decimals a currency is shown with: ISO 4217's (src/money.ts), never the ICU's of the Node the export runs on. */
export function currencyExponent(currency: string): number {
  return currencyDecimals(currency);
}

/**
 * Characters a money cell shows under moneyFormat: the grouped digits in the currency's decimals, a space and the
 * code. A column narrower than this (plus a margin) prints the number as `###`.
 */
export function moneyShownLength(major: number, currency: string): number {
  const e = currencyExponent(currency);
  const code = currency.replace(/[^A-Za-z0-9]/g, '').slice(0, 8);
  const digits = major.toLocaleString('en-US', { minimumFractionDigits: e, maximumFractionDigits: e });
  return digits.length + (code ? 1 + code.length : 0);
}

/** Widths widened, column by column, to the money each shows (`money[i]`: [amount, currency] pairs). */
export function widthsForMoney(
  widths: readonly number[],
  money: ReadonlyArray<ReadonlyArray<readonly [number, string]>>,
): number[] {
  return widths.map((w, i) => {
    // a loop, not Math.max(...cells): a spread of many thousand arguments overflows the stack
    let widest = w;
    for (const [m, c] of money[i] ?? []) widest = Math.max(widest, moneyShownLength(m, c) + 2);
    return widest;
  });
}

/** Number format showing the currency code after the amount, in the currency's own decimals. */
export function moneyFormat(currency: string): string {
  const code = currency.replace(/[^A-Za-z0-9]/g, '').slice(0, 8);
  const e = currencyExponent(currency);
  const body = e > 0 ? `#,##0.${'0'.repeat(e)}` : '#,##0';
  return code ? `${body} "${code}";-${body} "${code}"` : `${body};-${body}`;
}

export const DATE_TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';
export const DATE_FORMAT = 'yyyy-mm-dd';
export const COUNT_FORMAT = '#,##0';

/**
 * Text for a cell. It is always written as a plain string cell (never a formula); text that would start
 * a formula when a user re-edits the cell or pastes it elsewhere gets a visible leading apostrophe
 * (exceljs 4.4 cannot write the quotePrefix style flag, so the apostrophe is part of the text).
 */
export function safeText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return defuseFormula(xmlChars(value));
}

// XML 1.0 has no U+FFFE or U+FFFF (exceljs drops the control characters XML lacks, not these): one in a cell
// made the sheet's XML invalid, and Excel offers to repair the workbook by deleting its content
const NOT_XML_CHARS = /[\uFFFE\uFFFF]/g;

/** A text as a workbook's XML can carry it: the noncharacters XML does not allow left out. */
export const xmlChars = (text: string): string => text.replace(NOT_XML_CHARS, '');

/**
 * Instant → the Date exceljs stores for the wall-clock time in `zone`. exceljs turns a Date into an Excel
 * serial from its UTC fields, and Excel date-times carry no zone, so we shift by the zone's offset.
 * Asking Intl for the offset of each of a million lines would cost more than writing them, so offsets are
 * cached per UTC day: when the offset at the day's start equals the one at its end, no change happens in
 * between (zones change offset at most once a day); a day with a change is asked line by line.
 */
export function createLocalTime(zone: string): (at: Date) => Date {
  const z = IANAZone.create(zone);
  const DAY = 86_400_000;
  // day number → offset in minutes, or NaN for a day with a change
  const cache = new Map<number, number>();
  return (at) => {
    const ms = at.getTime();
    const day = Math.floor(ms / DAY);
    let offset = cache.get(day);
    if (offset === undefined) {
      if (cache.size > 10_000) cache.clear();
      const start = z.offset(day * DAY);
      offset = start === z.offset(day * DAY + DAY - 1) ? start : Number.NaN;
      cache.set(day, offset);
    }
    if (Number.isNaN(offset)) offset = z.offset(ms);
    return new Date(ms + offset * 60_000);
  };
}

/** A local calendar day "YYYY-MM-DD" (or a Date already holding a day) as an Excel date. */
export function excelDay(day: string | Date): Date {
  if (day instanceof Date) return day;
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(day);
  if (!m) throw new RangeError(`not a day: ${JSON.stringify(day)}`);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
}

export interface ColumnSpec {
  readonly header: string;
  readonly width: number;
  readonly numFmt?: string;
}

export type Workbook = ExcelJS.stream.xlsx.WorkbookWriter;
export type Sheet = ExcelJS.Worksheet;

export interface TableSheet {
  readonly sheet: Sheet;
  /** rows written so far, header included */
  rows: number;
  readonly columns: readonly ColumnSpec[];
}

/** One font family throughout: a bold run without a name is drawn in the viewer's default font. */
export const FONT_NAME = 'Calibri';
export const BOLD_FONT = { name: FONT_NAME, size: 11, bold: true } as const;
const HEADER_FONT = BOLD_FONT;
const TOTAL_FONT = BOLD_FONT;

/** Widths in characters above which a sheet is printed landscape. */
const PORTRAIT_MAX_WIDTH = 100;

/**
 * Print setup of every sheet: one page wide (as many tall as needed), landscape when wide, the header
 * rows repeated on every page, and the file, sheet and page numbers in the header and footer.
 */
export function printSetup(columnWidths: readonly number[], headerRows = 1, title?: string, pageOf = 'Page &P of &N') {
  // the document's name (a bare & starts a header code); without one, the file's name
  const name = title ? xmlChars(title).replace(/&/g, '&&') : '&F';
  const total = columnWidths.reduce((s, w) => s + w, 0);
  return {
    pageSetup: {
      paperSize: 9, // A4
      orientation: total > PORTRAIT_MAX_WIDTH ? ('landscape' as const) : ('portrait' as const),
      fitToPage: true,
      fitToWidth: 1,
      fitToHeight: 0,
      ...(headerRows > 0 ? { printTitlesRow: `1:${headerRows}` } : {}),
      margins: { left: 0.5, right: 0.5, top: 0.75, bottom: 0.75, header: 0.3, footer: 0.3 },
    },
    headerFooter: {
      oddHeader: `&L&"Calibri,Bold"${name}&R&A`,
      oddFooter: `&L${name}&R${pageOf}`,
    },
  };
}

/** A column wide enough for its header and its widest expected value, so nothing prints cut. */
export const columnWidth = (c: ColumnSpec): number => Math.max(c.width, c.header.length + 2);

/** A sheet with a frozen, bold header row; the autofilter is set over the data when it is closed. */
export function addTableSheet(
  workbook: Workbook,
  name: string,
  columns: readonly ColumnSpec[],
  opts: { tabColor?: string; title?: string; pageOf?: string } = {},
): TableSheet {
  const widths = columns.map(columnWidth);
  const sheet = workbook.addWorksheet(name, {
    views: [{ state: 'frozen', xSplit: 0, ySplit: 1 }],
    ...(opts.tabColor ? { properties: { tabColor: { argb: opts.tabColor } } } : {}),
    ...printSetup(widths, 1, opts.title, opts.pageOf),
  });
  sheet.columns = columns.map((c, i) => ({
    width: widths[i],
    ...(c.numFmt ? { style: { numFmt: c.numFmt } } : {}),
  }));
  const header = sheet.addRow(columns.map((c) => c.header));
  header.font = HEADER_FONT;
  header.commit();
  return { sheet, rows: 1, columns };
}

/** Writes one data row and hands it to the zip stream at once (bounded memory). */
export function writeRow(t: TableSheet, values: readonly unknown[]): void {
  t.sheet.addRow(values as unknown[]).commit();
  t.rows++;
}

/**
 * A data row as writeRow writes it, one column's cell aligned as given, every cell's style object shared with
 * the cells of its column and kind of value in the table's rows before. exceljs's writer finds a cell's style id
 * by serialising its style, unless it met that very object before; each cell has a style object of its own, so
 * a long table paid one serialisation a cell. The shared object is the first such cell's own, so the style ids
 * (and the bytes) are those of unshared rows. Only for rows whose cells take no other style.
 */
export function writeAlignedRow(
  t: TableSheet,
  values: readonly unknown[],
  aligned: { readonly column: number; readonly alignment: Partial<ExcelJS.Alignment> },
): void {
  const row = t.sheet.addRow(values as unknown[]);
  let styles = sharedStyles.get(t);
  if (!styles) sharedStyles.set(t, (styles = new Map()));
  const alignedCell = row.getCell(aligned.column);
  // the cells with a value, as the writer sees them; an empty aligned cell keeps a style of its own below
  row.eachCell((cell, column) => {
    // the writer picks a number format by the kind of value when the style names none
    const key = column * 64 + cell.type;
    const known = styles.get(key);
    if (known) cell.style = known;
    else {
      if (column === aligned.column) cell.alignment = aligned.alignment;
      styles.set(key, cell.style);
    }
  });
  if (alignedCell.type === exceljs().ValueType.Null) alignedCell.alignment = aligned.alignment;
  // the row's own (empty) style is resolved the same way, once a row
  const styled = row as unknown as { style: Partial<ExcelJS.Style> }; // exceljs's typings leave it out
  const rowStyle = styles.get(ROW_STYLE);
  if (rowStyle) styled.style = rowStyle;
  else styles.set(ROW_STYLE, styled.style);
  row.commit();
  t.rows++;
}

const ROW_STYLE = -1;
const sharedStyles = new WeakMap<TableSheet, Map<number, Partial<ExcelJS.Style>>>();

/** Closes a table: autofilter over header + data, then optional totals rows after a blank row. */
export function closeTable(
  t: TableSheet,
  totals: ReadonlyArray<{ values: readonly unknown[]; numFmts?: ReadonlyArray<string | undefined> }> = [],
): void {
  const last = String.fromCharCode(64 + t.columns.length);
  t.sheet.autoFilter = `A1:${last}${Math.max(1, t.rows)}`;
  if (totals.length > 0) {
    t.sheet.addRow([]).commit();
    for (const total of totals) {
      const row = t.sheet.addRow(total.values as unknown[]);
      row.font = TOTAL_FONT;
      total.numFmts?.forEach((f, i) => {
        if (f) row.getCell(i + 1).numFmt = f;
      });
      row.commit();
    }
  }
  t.sheet.commit();
}

/**
 * A workbook written to a hidden temporary name beside its final path and renamed only after the zip is
 * complete: readers (and finance) never see a half-written .xlsx under the final name.
 */
export interface PendingWorkbook {
  readonly workbook: Workbook;
  readonly finalPath: string;
  readonly tempPath: string;
  commit(): Promise<void>;
  /** the temporary file removed once its stream is closed */
  abort(): Promise<void>;
}

/** A temporary file older than this is the leftover of a killed run, not one being written. */
export const STALE_PARTIAL_MS = 60 * 60 * 1000;

/** Removes the temporary files that killed runs left for this workbook (hidden, but they take space). */
function removeStalePartials(finalPath: string, now = Date.now()): void {
  const dir = path.dirname(finalPath);
  const prefix = `.${path.basename(finalPath)}.`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.partial')) continue;
    const file = path.join(dir, name);
    try {
      if (now - statSync(file).mtimeMs > STALE_PARTIAL_MS) rmSync(file, { force: true });
    } catch {
      /* gone already */
    }
  }
}

interface ZipOf {
  zip: { append(source: unknown, data: { name: string; date?: Date }): unknown };
  created: Date;
  addThemes(): Promise<void>;
}

/** exceljs, loaded at first use: a second or more of every command's start otherwise, and most write no workbook. */
let loaded: typeof ExcelJS | undefined;
export function exceljs(): typeof ExcelJS {
  loaded ??= createRequire(import.meta.url)('exceljs') as typeof ExcelJS;
  return loaded;
}

type WriterOptions = ConstructorParameters<typeof ExcelJS.stream.xlsx.WorkbookWriter>[0];
let datedWriter: (new (options: WriterOptions) => ZipOf) | undefined;

/**
 * The streaming writer with every zip entry dated with the document (the zip dates each with the time it is
 * written), so that a statement written again is the same bytes (docs/outputs.md, "Issuing a month again").
 * The writer appends its first entries in its constructor, through addThemes (exceljs 4): dated from there.
 * A class made at first use, since its base is exceljs's.
 */
function datedWorkbookWriter(): new (options: WriterOptions) => ZipOf {
  datedWriter ??= class extends (
    (exceljs().stream.xlsx.WorkbookWriter as unknown as new (
      options: WriterOptions,
    ) => ZipOf)
  ) {
    override addThemes(): Promise<void> {
      const append = this.zip.append.bind(this.zip);
      this.zip.append = (source, data) => append(source, { date: this.created, ...data });
      return super.addThemes();
    }
  };
  return datedWriter;
}

/** Each open workbook's failure to write its file, when it failed (openWorkbook). */
const FAILURES = new WeakMap<object, () => Error | undefined>();

/**
 * `created`: the document's real issue time (a recorded run's), shown in its properties; without one the
 * workbook carries a fixed date so that it is the same from one run to the next.
 */
export function openWorkbook(finalPath: string, props: { title?: string; created?: Date } = {}): PendingWorkbook {
  ensureOutDir(path.dirname(finalPath));
  removeStalePartials(finalPath);
  const tempPath = path.join(
    path.dirname(finalPath),
    `.${path.basename(finalPath)}.${randomBytes(4).toString('hex')}.partial`,
  );
  const DatedWorkbookWriter = datedWorkbookWriter();
  // the file's stream is recon's, so that a file that fails (at its open: a name too long, a directory gone; or
  // later: the disk full) is seen: exceljs listens for its error only once committing, and the sheets' wait for
  // the zip to drain (drainSheet) waited for ever
  const out = createWriteStream(tempPath);
  let failure: Error | undefined;
  const failed = new Promise<never>((_, reject) =>
    out.on('error', (e) => {
      failure ??= new ExportError('EXPORT_WRITE_FAILED', `cannot write ${finalPath}: ${e.message}`);
      reject(failure);
    }),
  );
  failed.catch(() => undefined);
  const workbook = new DatedWorkbookWriter({
    stream: out,
    useStyles: true,
    useSharedStrings: false,
    // A fixed creation date keeps the workbook's own properties the same from one run to the next.
    created: props.created ?? new Date(0),
    modified: props.created ?? new Date(0),
    creator: 'recon',
    lastModifiedBy: 'recon',
  } as WriterOptions) as unknown as Workbook;
  if (props.title) workbook.title = xmlChars(props.title);
  FAILURES.set(workbook, () => failure);
  let done = false;
  return {
    workbook,
    finalPath,
    tempPath,
    async commit() {
      try {
        await Promise.race([workbook.commit(), failed]);
      } catch (e) {
        rmSync(tempPath, { force: true });
        if (e instanceof ExportError) throw e;
        throw new ExportError('EXPORT_WRITE_FAILED', `cannot write ${finalPath}: ${(e as Error).message}`);
      }
      renameSync(tempPath, finalPath);
      done = true;
    },
    async abort() {
      if (done) return;
      // the stream opens its file asynchronously: removed before that, the opening would create it again
      if (!out.closed) await new Promise<void>((resolve) => out.destroy().once('close', resolve));
      rmSync(tempPath, { force: true });
    },
  };
}

/** Lets the zip stream drain: rows are committed synchronously, compression happens between turns. */
export const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// Sheet XML waiting for the zip (compression) before the writer produces more rows.
const MAX_PENDING_BYTES = 1 << 20;

interface StreamState {
  readonly _writableState?: { length?: number };
  readonly _readableState?: { length?: number };
}

/** Bytes of a streaming sheet not yet taken by the zip (exceljs internals; 0 when they cannot be seen). */
function pendingBytes(sheet: Sheet): number {
  const pipe = (sheet as unknown as { stream?: { pipes?: StreamState[] } }).stream?.pipes?.[0];
  return (pipe?._writableState?.length ?? 0) + (pipe?._readableState?.length ?? 0);
}

/**
 * Backpressure for the streaming writer: exceljs's sheet stream ignores it and would buffer a whole sheet in
 * memory when rows come faster than they are compressed. Yields a turn, then waits while more than 1 MB is
 * pending, so memory stays flat however many lines a statement has.
 */
export async function drainSheet(sheet: Sheet): Promise<void> {
  await yieldToIo();
  const failure = FAILURES.get((sheet as unknown as { _workbook?: object })._workbook ?? sheet);
  while (pendingBytes(sheet) > MAX_PENDING_BYTES) {
    // a file that failed takes nothing more: the wait would never end
    const e = failure?.();
    if (e) throw e;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const e = failure?.();
  if (e) throw e;
}
