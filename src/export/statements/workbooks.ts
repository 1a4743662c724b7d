import { DateTime } from 'luxon';
import {
  entryWord,
  entryWordWidth,
  LABELS,
  type Labels,
  operationWord,
  operationWordWidths,
  XLSX_DATE,
} from '../i18n/labels';
import { documentText } from '../../input-rules';
import { paymentMethodWidth, paymentMethodWords } from '../i18n/payment-methods';
import { writeHeldSheet } from './held-sheet';
import { writePaidOutSheet, writePayoutStatusSheet } from '../payouts/sheets';
import { ExportError } from '../errors';
import {
  type AdjustmentLine,
  checkBridge,
  monthRange,
  plainHeader,
  type ReserveScheduleRow,
  sheetName,
  type StatementFigures,
  type StatementHeader,
  type StatementLine,
  type StatementMeta,
  type StatementSource,
} from './figures';
import { writeSummarySheet } from './summary';
import {
  addTableSheet,
  closeTable,
  createLocalTime,
  drainSheet,
  excelDay,
  minorToMajor,
  moneyFormat,
  moneyShownLength,
  openWorkbook,
  safeText,
  type TableSheet,
  writeAlignedRow,
} from '../workbook/xlsx';

export * from './figures';
export { PAYOUTS_HEADER, writePayoutsWorkbook } from '../payouts/workbook';

/**
 * The writer layer of payout statements: plain rows in, workbooks out. It knows nothing of the
 * database, so it is tested and benchmarked on its own; src/export/statements/issue.ts feeds it from the
 * ledger queries. Every sheet is the sub-merchant's, in its language: the workbook is e-mailed to it. Finance's
 * Audit sheet is a file of its own beside it (audit.ts).
 */

// Rows between two checks of the zip stream's backlog (see drainSheet).
const ROWS_PER_YIELD = 2000;

export interface WrittenStatement {
  readonly file: string;
  readonly subMerchantId: string;
  readonly lines: number;
}

/** The document's name, in its header and footer and its properties. */
export function statementTitle(figures: readonly StatementFigures[], meta: StatementMeta, header: StatementHeader) {
  const t = LABELS[header.language];
  // the PSP's receiver name reaches here unchecked when the directory does not know it: one line, bounded
  const name = documentText(header.recipient.legalName ?? figures[0]?.subMerchantName ?? '');
  const number = header.number ? ` ${header.language === 'uk' ? '№' : 'no.'} ${header.number}` : '';
  return `${t.title}${number}, ${meta.month} — ${name}${meta.provisional ? ' (PROVISIONAL)' : ''}`;
}

// A date is right-aligned by default and would print against the text of the column after it.
const DATE_ALIGNMENT = { horizontal: 'left' } as const;

/** A table row whose first cell is a date, handed to the zip stream at once as `writeRow` does. */
function writeDatedRow(t: TableSheet, values: readonly unknown[]): void {
  writeAlignedRow(t, values, { column: 1, alignment: DATE_ALIGNMENT });
}

/** Sums of an Operations sheet; a line without fee parts adds its whole fee to `notSplit`. */
export function addLine(
  sum: { share: bigint; fee: bigint; fixed: bigint; percent: bigint; notSplit: bigint; reserve: bigint; net: bigint },
  l: StatementLine,
): void {
  sum.share += l.share;
  sum.fee += l.fee;
  sum.reserve += l.reserve;
  sum.net += l.net;
  if (l.feeParts) {
    sum.fixed += l.feeParts.fixed;
    sum.percent += l.feeParts.percent;
  } else sum.notSplit += l.fee;
}

/** What every sheet of one statement is written with. */
interface SheetContext {
  readonly wb: ReturnType<typeof openWorkbook>['workbook'];
  readonly meta: StatementMeta;
  readonly header: StatementHeader;
  readonly t: Labels;
  readonly dates: (typeof XLSX_DATE)[keyof typeof XLSX_DATE];
  readonly named: (n: string) => string;
  readonly title: string;
  readonly localTime: (at: Date) => Date;
}

/**
 * One sub-merchant's statement: Summary, Operations (one sheet per currency), payouts, Reserve. The
 * sheets in their order inside one streaming workbook (each committed before the next is begun); each is a helper.
 */
export async function writeStatementWorkbook(
  file: string,
  src: StatementSource,
  meta: StatementMeta,
  header: StatementHeader = plainHeader(meta),
): Promise<WrittenStatement> {
  const figures = [...src.figures].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const first = figures[0];
  if (!first) throw new RangeError('a statement needs figures for at least one currency');
  for (const f of figures) checkBridge(f);
  const title = statementTitle(figures, meta, header);
  const pending = openWorkbook(file, { title, created: header.issuedAt });
  const t = LABELS[header.language];
  const ctx: SheetContext = {
    wb: pending.workbook,
    meta,
    header,
    t,
    dates: XLSX_DATE[header.language],
    named: (n: string) => sheetName(meta, n),
    title,
    localTime: createLocalTime(meta.timezone),
  };
  let lineCount = 0;
  try {
    const payoutOf = (f: StatementFigures) => src.payouts?.find((p) => p.currency === f.currency);
    writeSummarySheet(ctx.wb, figures, meta, header, payoutOf, title);
    // Operations: every line, one sheet per currency so that each column has one currency format.
    for (const f of figures) lineCount += await writeOperationsSheet(ctx, f, figures.length, src.lines(f.currency));
    await writeAdjustmentSheets(ctx, figures, src.adjustments);
    if (src.payouts) writePayoutSheets(ctx, src.payouts);
    writeReserveSheet(ctx.wb, src.reserve, meta, ctx.named(t.reserveSheet), t, title, ctx.dates.day);
    await pending.commit();
  } catch (e) {
    await pending.abort();
    throw e;
  }
  return { file, subMerchantId: first.subMerchantId, lines: lineCount };
}

/** One currency's Operations sheet: a row per line, then the totals and the fee no part was stated for. */
async function writeOperationsSheet(
  { wb, meta, header, t, dates, named, title, localTime }: SheetContext,
  f: StatementFigures,
  currencies: number,
  lines: AsyncIterable<StatementLine>,
): Promise<number> {
  const money = moneyFormat(f.currency);
  const words = operationWordWidths(header.language);
  // the lines are streamed, so the money columns are sized before them for the largest amount the figures allow:
  // no line or total exceeds the month's movements added up (a total of millions printed as ### in 16)
  const bound = [f.gross, f.refunds, f.chargebacks, f.fees, f.reserveHeld, f.reserveReleased, f.netPayable].reduce(
    (s, a) => s + (a < 0n ? -a : a),
    0n,
  );
  // a width, not a figure written: the bound's float is near enough, and a bound past a spreadsheet number's
  // 15 digits (two amounts of 9,999,999,999,999.99) refused a statement none of whose figures is that large
  const m = (width: number) => Math.max(width, moneyShownLength(-Number(bound) / 100, f.currency) + 2);
  const sheet = addTableSheet(
    wb,
    named(currencies === 1 ? t.operations : t.operationsIn(f.currency)),
    [
      { header: `${t.date} (${meta.timezone})`, width: 20, numFmt: dates.time },
      { header: t.order, width: 38 },
      { header: t.payment, width: 38 },
      // sized for the words in the statement's language, which a neighbour's value would print over
      { header: t.method, width: Math.max(11, words.type + 2) },
      { header: t.status, width: Math.max(12, words.status + 2) },
      { header: t.paidWith, width: paymentMethodWidth(header.language) + 2 },
      { header: t.share, width: m(16), numFmt: money },
      { header: t.fee, width: m(14), numFmt: money },
      { header: t.fixedFee, width: m(16), numFmt: money },
      { header: t.percentFee, width: m(16), numFmt: money },
      { header: t.reserve, width: m(14), numFmt: money },
      { header: t.net, width: m(16), numFmt: money },
    ],
    { title, pageOf: t.pageOf },
  );
  const sum = { share: 0n, fee: 0n, fixed: 0n, percent: 0n, notSplit: 0n, reserve: 0n, net: 0n };
  let n = 0;
  for await (const l of lines) {
    addLine(sum, l);
    writeDatedRow(sheet, [
      localTime(l.at),
      safeText(l.orderId),
      safeText(l.paymentId),
      safeText(operationWord(l.method, header.language)),
      safeText(operationWord(l.status, header.language)),
      safeText(paymentMethodWords(l.paidWith, header.language)),
      minorToMajor(l.share),
      minorToMajor(l.fee),
      l.feeParts ? minorToMajor(l.feeParts.fixed) : '',
      l.feeParts ? minorToMajor(l.feeParts.percent) : '',
      minorToMajor(l.reserve),
      minorToMajor(l.net),
    ]);
    if (++n % ROWS_PER_YIELD === 0) await drainSheet(sheet.sheet);
  }
  const blank = ['', '', '', '', ''];
  const formats = [...blank.map(() => undefined), undefined, money, money, money, money, money, money];
  closeTable(sheet, [
    {
      values: [
        t.totalLines(n),
        ...blank,
        ...[sum.share, sum.fee, sum.fixed, sum.percent, sum.reserve, sum.net].map(minorToMajor),
      ],
      numFmts: formats,
    },
    // the fee no part was stated for, so that fixed + percentage + this = the fee column's total
    {
      values: [t.feeNotSplit, ...blank, '', minorToMajor(sum.notSplit), '', '', '', ''],
      numFmts: formats,
    },
  ]);
  return n;
}

/**
 * Adjustments: the entries dated before the month that the previous statement did not include; those dated
 * in months never stated are listed apart (they were never stated, so they adjust nothing).
 */
async function writeAdjustmentSheets(
  ctx: SheetContext,
  figures: readonly StatementFigures[],
  entries: StatementSource['adjustments'],
): Promise<void> {
  if (!entries || !figures.some((f) => f.previousStatement !== undefined)) return;
  const { t, meta } = ctx;
  const gap = figures.some((f) => f.notStated !== undefined);
  const sheet = (name: string, notStated: boolean, expected: (f: StatementFigures) => bigint) =>
    writeEntriesSheet(ctx.wb, ctx.named(name), {
      figures: figures.filter((f) => f.previousStatement !== undefined && (!notStated || f.notStated !== undefined)),
      entries: async function* (currency) {
        for await (const a of entries(currency)) if (Boolean(a.notStated) === notStated) yield a;
      },
      expected,
      what: notStated ? 'months never stated' : 'adjustments',
      localTime: ctx.localTime,
      timezone: meta.timezone,
      labels: t,
      language: ctx.header.language,
      dateFormat: ctx.dates.time,
      title: ctx.title,
    });
  await sheet(t.adjustments, false, (f) => f.adjustments ?? 0n);
  if (gap) await sheet(t.notStated, true, (f) => f.notStated ?? 0n);
}

/** Held, Paid out and Payout status: what the month's payouts did. */
function writePayoutSheets(ctx: SheetContext, payouts: NonNullable<StatementSource['payouts']>): void {
  const { wb, t, title, dates, named, meta } = ctx;
  writeHeldSheet(wb, payouts, { timezone: meta.timezone, sheetName: named, labels: t, title, dayFormat: dates.day });
  writePaidOutSheet(wb, payouts, named, t, title, dates.day);
  const statuses = payouts.flatMap((p) => p.statuses ?? []);
  writePayoutStatusSheet(wb, statuses, named, t, title, dates.day);
}

/** What stays in reserve after the period, and when it is released: the rows whose release is still to come. */
export function releasesToCome(
  reserve: readonly ReserveScheduleRow[],
  meta: Pick<StatementMeta, 'month' | 'timezone'>,
): Array<{ releaseOn: Date; currency: string; amount: bigint }> {
  const end = monthRange(meta.month, meta.timezone).to.toISODate()!;
  return reserve
    .filter((r) => excelDay(r.releaseOn).toISOString().slice(0, 10) >= end && r.held > r.released)
    .map((r) => ({ releaseOn: excelDay(r.releaseOn), currency: r.currency, amount: r.held - r.released }))
    .sort((a, b) => a.releaseOn.getTime() - b.releaseOn.getTime() || (a.currency < b.currency ? -1 : 1));
}

/** Reserve schedule: what was held and released in the month, then the balance left and its releases to come. */
function writeReserveSheet(
  wb: ReturnType<typeof openWorkbook>['workbook'],
  rows: readonly ReserveScheduleRow[],
  meta: StatementMeta,
  name: string,
  t: Labels,
  title: string,
  dayFormat: string,
): void {
  const reserve = addTableSheet(
    wb,
    name,
    [
      // wide enough for the totals' labels below the table, which share its first column
      {
        header: t.heldOn,
        width: Math.max(12, ...[t.monthTotal, t.reserveBalance, t.releasesToCome].map((l) => l.length + 2)),
        numFmt: dayFormat,
      },
      { header: t.currency, width: 10 },
      { header: t.held, width: 16 },
      { header: t.releaseOn, width: 12, numFmt: dayFormat },
      { header: t.released, width: 16 },
    ],
    { title, pageOf: t.pageOf },
  );
  // The totals are the month's, as in the bridge: held in the month, released in the month.
  const heldThisMonth = (r: ReserveScheduleRow) => excelDay(r.heldOn).toISOString().slice(0, 7) === meta.month;
  const totals = new Map<string, { held: bigint; released: bigint; balance: bigint }>();
  for (const r of rows) {
    const fmt = moneyFormat(r.currency);
    const row = reserve.sheet.addRow([
      excelDay(r.heldOn),
      safeText(r.currency),
      minorToMajor(r.held),
      excelDay(r.releaseOn),
      minorToMajor(r.released),
    ]);
    row.getCell(3).numFmt = fmt;
    row.getCell(5).numFmt = fmt;
    row.getCell(1).alignment = DATE_ALIGNMENT;
    row.commit();
    reserve.rows++;
    const tot = totals.get(r.currency) ?? { held: 0n, released: 0n, balance: 0n };
    if (heldThisMonth(r)) tot.held += r.held;
    tot.released += r.released;
    totals.set(r.currency, tot);
  }
  const coming = releasesToCome(rows, meta);
  for (const c of coming) totals.get(c.currency)!.balance += c.amount;
  const byCurrency = [...totals.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const money = (c: string) => [undefined, undefined, moneyFormat(c), undefined, moneyFormat(c)];
  closeTable(reserve, [
    ...(rows.length === 0 ? [{ values: [t.none] }] : []),
    ...byCurrency.map(([currency, tot]) => ({
      values: [t.monthTotal, safeText(currency), minorToMajor(tot.held), '', minorToMajor(tot.released)],
      numFmts: money(currency),
    })),
    ...byCurrency.map(([currency, tot]) => ({
      values: [t.reserveBalance, safeText(currency), minorToMajor(tot.balance)],
      numFmts: money(currency),
    })),
    ...coming.map((c) => ({
      values: [t.releasesToCome, safeText(c.currency), minorToMajor(c.amount), c.releaseOn],
      numFmts: [undefined, undefined, moneyFormat(c.currency), dayFormat],
    })),
  ]);
}

/** A table of journal entries per currency whose total must equal a bridge line (`expected`), else refused. */
async function writeEntriesSheet(
  wb: ReturnType<typeof openWorkbook>['workbook'],
  name: string,
  o: {
    figures: readonly StatementFigures[];
    entries(currency: string): AsyncIterable<AdjustmentLine>;
    expected(f: StatementFigures): bigint;
    what: string;
    localTime: (at: Date) => Date;
    timezone: string;
    labels: Labels;
    language: StatementHeader['language'];
    dateFormat: string;
    title: string;
  },
): Promise<void> {
  const t = o.labels;
  const words = operationWordWidths(o.language);
  const table = addTableSheet(
    wb,
    name,
    [
      { header: `${t.date} (${o.timezone})`, width: 20, numFmt: o.dateFormat },
      { header: t.currency, width: 10 },
      { header: t.entry, width: Math.max(16, entryWordWidth(o.language) + 2) },
      { header: t.order, width: 38 },
      { header: t.payment, width: 38 },
      { header: t.method, width: Math.max(11, words.type + 2) },
      { header: t.status, width: Math.max(10, words.status + 2) },
      { header: t.net, width: 16 },
    ],
    { title: o.title, pageOf: t.pageOf },
  );
  const totals = new Map<string, bigint>();
  for (const f of o.figures) {
    totals.set(f.currency, 0n); // a total per currency, 0 when nothing changed
    let n = 0;
    for await (const a of o.entries(f.currency)) {
      const row = table.sheet.addRow([
        o.localTime(a.at),
        safeText(f.currency),
        safeText(entryWord(a.kind, o.language)),
        safeText(a.orderId),
        safeText(a.paymentId),
        safeText(operationWord(a.method, o.language)),
        safeText(operationWord(a.status, o.language)),
        minorToMajor(a.net),
      ]);
      row.getCell(8).numFmt = moneyFormat(f.currency);
      row.getCell(1).alignment = DATE_ALIGNMENT;
      row.commit();
      table.rows++;
      totals.set(f.currency, (totals.get(f.currency) ?? 0n) + a.net);
      if (++n % ROWS_PER_YIELD === 0) await drainSheet(table.sheet);
    }
    // the entries are the bridge line: a statement whose detail does not add up is not written
    if ((totals.get(f.currency) ?? 0n) !== o.expected(f)) {
      throw new ExportError(
        'EXPORT_BRIDGE_MISMATCH',
        `${o.what} of ${f.subMerchantId} ${f.currency}: entries add up to ${totals.get(f.currency) ?? 0n}, figures say ${o.expected(f)}`,
      );
    }
  }
  closeTable(
    table,
    [...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, total]) => ({
        values: [t.total, safeText(currency), '', '', '', '', '', minorToMajor(total)],
        numFmts: [undefined, undefined, undefined, undefined, undefined, undefined, undefined, moneyFormat(currency)],
      })),
  );
}

export const issueDay = (header: StatementHeader, zone: string) =>
  DateTime.fromJSDate(header.issuedAt, { zone }).toISODate()!;
