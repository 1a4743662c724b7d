import { DateTime } from 'luxon';
import { sha256Hex, stableStringify } from '../canonical';
import type {
  AdjustmentEntry as LedgerAdjustment,
  StatementFigures as LedgerFigures,
  StatementLine as LedgerLine,
} from '../ledger/ledger-queries';
import {
  COUNT_FORMAT,
  DATE_FORMAT,
  DATE_TIME_FORMAT,
  addTableSheet,
  BOLD_FONT,
  printSetup,
  closeTable,
  createLocalTime,
  excelDay,
  drainSheet,
  minorToMajor,
  moneyFormat,
  openWorkbook,
  safeText,
  writeRow,
} from './xlsx';
import { type PayoutSection, writeHeldSheet, writePaidOutSheet } from './payout-sheets';
import { ExportError } from './errors';

/**
 * The writer layer of payout statements: plain rows in, workbooks out. It knows nothing of the
 * database, so it is tested and benchmarked on its own; src/export/statements.ts feeds it from the
 * ledger queries.
 */

/** One sub-merchant's figures for one month and currency (bigint minor units). */
/** The figures of one statement (sub-merchant and currency), as the ledger gives them. */
export type StatementFigures = Omit<LedgerFigures, 'known'> & {
  /** paid out to the sub-merchant in the month, returns deducted (src/export/paid-out.ts); absent: none */
  readonly paidOut?: bigint;
  /**
   * movements of months between the previous statement's and this one, never stated (their statements were
   * never issued): part of the opening difference, but not an adjustment (statement-controls.ts)
   */
  readonly notStated?: bigint;
  /** those months ("2026-11 to 2027-04") */
  readonly notStatedMonths?: string;
};

/** One operation line of a statement: what the workbook shows of the ledger's line. */
export type StatementLine = Pick<
  LedgerLine,
  'at' | 'orderId' | 'paymentId' | 'method' | 'status' | 'share' | 'fee' | 'reserve' | 'net' | 'eventIds'
>;
export type AdjustmentLine = Pick<
  LedgerAdjustment,
  'at' | 'kind' | 'orderId' | 'paymentId' | 'method' | 'status' | 'net' | 'eventIds'
> & {
  /** dated in a month never stated (see StatementFigures.notStated): listed apart, not as an adjustment */
  readonly notStated?: boolean;
};

export interface ReserveScheduleRow {
  readonly heldOn: string | Date;
  readonly currency: string;
  readonly held: bigint;
  readonly releaseOn: string | Date;
  readonly released: bigint;
}

/** What a statement was cut from: recorded in every workbook so a figure can be re-derived. */
export interface StatementMeta {
  readonly month: string;
  readonly timezone: string;
  /** event-store position ("commit/prepare") the figures were cut at */
  readonly position: string;
  readonly figuresSha256: string;
  /** a draft of a month not ended: every sheet and the file name say PROVISIONAL */
  readonly provisional?: boolean;
  /** the zone of the statements this run re-based from (--rebase-timezone) */
  readonly rebasedFrom?: string;
  /** the previous month's statement was never issued: said on the statement */
  readonly previousMonthNotIssued?: string;
}

/** A sheet's name, marked on a provisional statement. */
export const sheetName = (meta: Pick<StatementMeta, 'provisional'>, name: string) =>
  (meta.provisional ? `PROVISIONAL ${name}` : name).slice(0, 31);

export interface StatementSource {
  /** one row per currency, all of one sub-merchant */
  readonly figures: readonly StatementFigures[];
  lines(currency: string): AsyncIterable<StatementLine>;
  /** the entries behind a currency's adjustments (only asked for figures with a previous statement) */
  adjustments?(currency: string): AsyncIterable<AdjustmentLine>;
  readonly reserve: readonly ReserveScheduleRow[];
  /** per currency: holds, amount due, reference and what was paid out (absent: none computed) */
  readonly payouts?: readonly PayoutSection[];
}

/** The Payouts index header, exactly as finance's import expects it. */
export const PAYOUTS_HEADER = [
  'sub_merchant_id',
  'sub_merchant_name',
  'currency',
  'gross',
  'refunds',
  'chargebacks',
  'fees',
  'reserve_held',
  'reserve_released',
  'net_payable',
  'operations',
  // appended (columns before them unchanged): changes to months already stated, and what is due in all
  'adjustments',
  'amount_due',
  // appended: what is held pending investigation (not in amount_due), paid out in the month, the statement number
  'held',
  'paid_out',
  'payout_reference',
  'payout_status',
  // movements of months whose statements were never issued (in amount_due, not in adjustments)
  'not_stated_before',
] as const;

const SAFE_FILE_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * A statement's file name: the sub-merchant id as it is when it is safe on every file system, else its
 * safe characters and the first 8 hex digits of its sha-256, so that ids differing only in other
 * characters (two Cyrillic names of one length, both `receiver:____`) never share a file.
 */
export function statementFileName(subMerchantId: string, month: string, provisional = false): string {
  const tail = provisional ? `${month}-PROVISIONAL` : month;
  if (SAFE_FILE_NAME.test(subMerchantId)) return `${subMerchantId}-${tail}.xlsx`;
  return `${subMerchantId.replace(/[^A-Za-z0-9._-]/g, '_')}-${sha256Hex(subMerchantId).slice(0, 8)}-${tail}.xlsx`;
}

/** Refuses a run in which two sub-merchants would write one file (also on a case-insensitive file system). */
export function checkStatementFileNames(subMerchantIds: Iterable<string>, month: string): void {
  const seen = new Map<string, string>();
  for (const id of subMerchantIds) {
    const name = statementFileName(id, month).toLowerCase();
    const other = seen.get(name);
    if (other !== undefined) {
      throw new ExportError(
        'EXPORT_FILE_NAME_COLLISION',
        `sub-merchants ${JSON.stringify(other)} and ${JSON.stringify(id)} would write the same statement file ${statementFileName(id, month)}; nothing was written`,
      );
    }
    seen.set(name, id);
  }
}
export const payoutsFileName = (month: string, provisional = false) =>
  `payouts-${month}${provisional ? '-PROVISIONAL' : ''}.xlsx`;

/** The net payable the bridge implies; statements refuse figures that do not add up. */
export function bridgeNet(f: StatementFigures): bigint {
  return f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased;
}

export function checkBridge(f: StatementFigures): void {
  const net = bridgeNet(f);
  const adjustments = f.adjustments ?? 0n;
  const paidOut = f.paidOut ?? 0n;
  const notStated = f.notStated ?? 0n;
  if (net !== f.netPayable || f.opening + adjustments + notStated + f.netPayable - paidOut !== f.closing) {
    throw new ExportError(
      'EXPORT_BRIDGE_MISMATCH',
      `figures of ${f.subMerchantId} ${f.currency} do not add up: movements give net ${net}, stated ${f.netPayable}; opening ${f.opening} + adjustments ${adjustments} + not stated before ${notStated} + net − paid out ${paidOut} ≠ closing ${f.closing}`,
    );
  }
}

/** sha-256 of the figures in a canonical order: equal figures give an equal hash, whatever the row order. */
export function figuresDigest(month: string, timezone: string, figures: readonly StatementFigures[]): string {
  const sorted = [...figures].sort((a, b) =>
    a.subMerchantId + '\u0000' + a.currency < b.subMerchantId + '\u0000' + b.currency ? -1 : 1,
  );
  return sha256Hex(stableStringify({ month, timezone, figures: sorted }));
}

export function monthRange(month: string, timezone: string): { from: DateTime; to: DateTime } {
  const from = DateTime.fromFormat(month, 'yyyy-MM', { zone: timezone });
  if (!from.isValid) throw new RangeError(`not a month: ${JSON.stringify(month)} (expected YYYY-MM)`);
  return { from, to: from.plus({ months: 1 }) };
}

const periodText = (meta: StatementMeta) => {
  const { from, to } = monthRange(meta.month, meta.timezone);
  return `${meta.month} (${from.toISODate()} to ${to.minus({ days: 1 }).toISODate()}, ${meta.timezone})`;
};

// Rows between two checks of the zip stream's backlog (see drainSheet).
const ROWS_PER_YIELD = 2000;

// `gap`: a line only a statement with months never stated shows (true), or only one without (false)
export const BRIDGE: ReadonlyArray<{
  label: string;
  value: (f: StatementFigures, p?: PayoutSection) => bigint;
  gap?: boolean;
}> = [
  { label: "Opening balance (the previous statement's closing)", value: (f) => f.opening },
  { label: '± Adjustments to earlier months (sheet Adjustments)', value: (f) => f.adjustments ?? 0n },
  { label: '± Months never stated before (sheet Not stated before)', value: (f) => f.notStated ?? 0n, gap: true },
  { label: '+ Gross sales (shares)', value: (f) => f.gross },
  { label: '− Refunds', value: (f) => -f.refunds },
  { label: '− Chargebacks', value: (f) => -f.chargebacks },
  { label: '− Fees', value: (f) => -f.fees },
  { label: '− Reserve held', value: (f) => -f.reserveHeld },
  { label: '+ Reserve released', value: (f) => f.reserveReleased },
  { label: '= Net payable (sum of the six movements above)', value: (f) => f.netPayable },
  { label: '− Held pending investigation (sheet Held pending investigation)', value: (_f, p) => -(p?.held ?? 0n) },
  { label: '+ Released from hold (held on the previous statement)', value: (_f, p) => p?.released ?? 0n },
  {
    label: '= Amount due (adjustments + net payable − held + released)',
    value: (f, p) => p?.amountDue ?? (f.adjustments ?? 0n) + f.netPayable,
    gap: false,
  },
  {
    label: '= Amount due (adjustments + months never stated + net payable − held + released)',
    value: (f, p) => p?.amountDue ?? (f.adjustments ?? 0n) + (f.notStated ?? 0n) + f.netPayable,
    gap: true,
  },
  { label: '− Paid out (sheet Paid out: dates and payout references)', value: (f) => -(f.paidOut ?? 0n) },
  {
    label: 'Closing balance (opening + adjustments + net payable − paid out)',
    value: (f) => f.closing,
    gap: false,
  },
  {
    label: 'Closing balance (opening + adjustments + months never stated + net payable − paid out)',
    value: (f) => f.closing,
    gap: true,
  },
];

/** The bridge lines a statement of these figures shows (those of months never stated only when it has some). */
export function bridgeOf(figures: readonly StatementFigures[]): typeof BRIDGE {
  const gap = figures.some((f) => f.notStated !== undefined);
  return BRIDGE.filter((l) => l.gap === undefined || l.gap === gap);
}

export interface WrittenStatement {
  readonly file: string;
  readonly subMerchantId: string;
  readonly lines: number;
}

/** One sub-merchant's statement: Summary, Operations (one sheet per currency), Reserve schedule. */
export async function writeStatementWorkbook(
  file: string,
  src: StatementSource,
  meta: StatementMeta,
): Promise<WrittenStatement> {
  const figures = [...src.figures].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const first = figures[0];
  if (!first) throw new RangeError('a statement needs figures for at least one currency');
  for (const f of figures) checkBridge(f);
  const pending = openWorkbook(file);
  const wb = pending.workbook;
  let lineCount = 0;
  try {
    // Summary: who, which period, cut where; then the bridge, one column per currency.
    const payoutOf = (f: StatementFigures) => src.payouts?.find((p) => p.currency === f.currency);
    const gap = figures.some((f) => f.notStated !== undefined);
    const bridge = bridgeOf(figures);
    const info: Array<[string, string]> = [
      ...(meta.provisional
        ? ([
            [
              'PROVISIONAL',
              'the month has not ended: these figures will change; not a statement to pay from, not recorded as issued',
            ],
          ] as Array<[string, string]>)
        : []),
      ['Sub-merchant', safeText(first.subMerchantName)],
      ['Sub-merchant id', safeText(first.subMerchantId)],
      ['Period', periodText(meta)],
      ['Cut at event-store position', meta.position],
      ['Figures sha-256', meta.figuresSha256],
      ['Amounts', 'in major units of each currency; every total computed exactly in minor units'],
      [
        'Opening from',
        (first.previousStatement
          ? `the statement of ${first.previousStatement}`
          : 'the ledger (no statement issued before)') + statementNotes(figures, meta),
      ],
    ];
    // the labels of a statement with months never stated are longer
    const summaryWidths = [gap ? 84 : 70, ...figures.map(() => 20)];
    const summary = wb.addWorksheet(sheetName(meta, 'Summary'), {
      views: [{ state: 'frozen', xSplit: 1, ySplit: info.length + 2 }],
      ...printSetup(summaryWidths, 0),
    });
    summary.columns = summaryWidths.map((width) => ({ width }));
    for (const [label, value] of info) {
      const r = summary.addRow([label, value]);
      r.getCell(1).font = BOLD_FONT;
      r.commit();
    }
    summary.addRow([]).commit();
    const head = summary.addRow(['Payout bridge', ...figures.map((f) => f.currency)]);
    head.font = BOLD_FONT;
    head.commit();
    const firstBridgeRow = info.length + 3;
    for (const line of bridge) {
      const r = summary.addRow([line.label, ...figures.map((f) => minorToMajor(line.value(f, payoutOf(f))))]);
      figures.forEach((f, i) => {
        r.getCell(i + 2).numFmt = moneyFormat(f.currency);
      });
      if (line.label.startsWith('=') || line.label.startsWith('Closing')) r.font = BOLD_FONT;
      r.commit();
    }
    // The one live formula: Excel recomputes opening + adjustments + net payable − closing, which must show zero.
    const rowOf = (prefix: string) => firstBridgeRow + bridge.findIndex((l) => l.label.startsWith(prefix));
    const openingRow = rowOf('Opening');
    const adjustmentsRow = rowOf('± Adjustments');
    const notStatedRow = gap ? rowOf('± Months never stated') : undefined;
    const netRow = rowOf('= Net payable');
    const closingRow = rowOf('Closing');
    const paidRow = rowOf('− Paid out');
    const check = summary.addRow([
      `Check: opening + adjustments${gap ? ' + months never stated' : ''} + net payable − paid out − closing (must be 0)`,
      ...figures.map((f, i) => {
        const col = String.fromCharCode(66 + i);
        const notStated = notStatedRow === undefined ? '' : `+${col}${notStatedRow}`;
        return {
          formula: `${col}${openingRow}+${col}${adjustmentsRow}${notStated}+${col}${netRow}+${col}${paidRow}-${col}${closingRow}`,
          result: minorToMajor(
            f.opening + (f.adjustments ?? 0n) + (f.notStated ?? 0n) + f.netPayable - (f.paidOut ?? 0n) - f.closing,
          ),
        };
      }),
    ]);
    figures.forEach((f, i) => {
      check.getCell(i + 2).numFmt = moneyFormat(f.currency);
    });
    check.commit();
    const ops = summary.addRow(['Operations', ...figures.map((f) => f.operations)]);
    figures.forEach((_f, i) => {
      ops.getCell(i + 2).numFmt = COUNT_FORMAT;
    });
    ops.commit();
    const refs = summary.addRow([
      'Payout reference (write it in the transfer)',
      ...figures.map((f) => payoutOf(f)?.reference ?? '—'),
    ]);
    refs.commit();
    summary.commit();

    // Operations: every line, one sheet per currency so that each column has one currency format.
    const localTime = createLocalTime(meta.timezone);
    for (const f of figures) {
      const money = moneyFormat(f.currency);
      const t = addTableSheet(wb, sheetName(meta, figures.length === 1 ? 'Operations' : `Operations ${f.currency}`), [
        { header: `Date and time (${meta.timezone})`, width: 20, numFmt: DATE_TIME_FORMAT },
        { header: 'Order', width: 24 },
        { header: 'Payment', width: 24 },
        { header: 'Method', width: 11 },
        { header: 'Status', width: 10 },
        { header: 'Share', width: 16, numFmt: money },
        { header: 'Fee', width: 14, numFmt: money },
        { header: 'Reserve', width: 14, numFmt: money },
        { header: 'Net', width: 16, numFmt: money },
        { header: 'Event ids', width: 40 },
      ]);
      let share = 0n,
        fee = 0n,
        reserve = 0n,
        net = 0n,
        n = 0;
      for await (const l of src.lines(f.currency)) {
        share += l.share;
        fee += l.fee;
        reserve += l.reserve;
        net += l.net;
        writeRow(t, [
          localTime(l.at),
          safeText(l.orderId),
          safeText(l.paymentId),
          safeText(l.method),
          safeText(l.status),
          minorToMajor(l.share),
          minorToMajor(l.fee),
          minorToMajor(l.reserve),
          minorToMajor(l.net),
          l.eventIds.join(' '),
        ]);
        if (++n % ROWS_PER_YIELD === 0) await drainSheet(t.sheet);
      }
      lineCount += n;
      closeTable(t, [
        {
          values: [
            `Total (${n} lines)`,
            '',
            '',
            '',
            '',
            minorToMajor(share),
            minorToMajor(fee),
            minorToMajor(reserve),
            minorToMajor(net),
            '',
          ],
          numFmts: [undefined, undefined, undefined, undefined, undefined, money, money, money, money],
        },
      ]);
    }

    // Adjustments: the entries dated before the month that the previous statement did not include; those dated
    // in months never stated are listed apart (they were never stated, so they adjust nothing).
    if (src.adjustments && figures.some((f) => f.previousStatement !== undefined)) {
      const entries = src.adjustments;
      const sheet = (name: string, notStated: boolean, expected: (f: StatementFigures) => bigint) =>
        writeEntriesSheet(wb, sheetName(meta, name), {
          figures: figures.filter(
            (f) => f.previousStatement !== undefined && (!notStated || f.notStated !== undefined),
          ),
          entries: async function* (currency) {
            for await (const a of entries(currency)) if (Boolean(a.notStated) === notStated) yield a;
          },
          expected,
          what: notStated ? 'months never stated' : 'adjustments',
          localTime,
          timezone: meta.timezone,
        });
      await sheet('Adjustments', false, (f) => f.adjustments ?? 0n);
      if (gap) await sheet('Not stated before', true, (f) => f.notStated ?? 0n);
    }

    if (src.payouts) {
      writeHeldSheet(wb, src.payouts, (n) => sheetName(meta, n));
      writePaidOutSheet(wb, src.payouts, (n) => sheetName(meta, n));
    }

    // Reserve schedule: what was held, when it is released, what was released.
    const reserve = addTableSheet(wb, sheetName(meta, 'Reserve schedule'), [
      { header: 'Held on', width: 12, numFmt: DATE_FORMAT },
      { header: 'Currency', width: 10 },
      { header: 'Held', width: 16 },
      { header: 'Release on', width: 12, numFmt: DATE_FORMAT },
      { header: 'Released', width: 16 },
    ]);
    // The schedule lists what was held in the month and what was released in it (held earlier); its totals
    // are the month's, as in the bridge: held in the month, released in the month (the
    // held total added the earlier holds released this month, and disagreed with the bridge).
    const heldThisMonth = (r: ReserveScheduleRow) => excelDay(r.heldOn).toISOString().slice(0, 7) === meta.month;
    const totals = new Map<string, { held: bigint; released: bigint }>();
    for (const r of src.reserve) {
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
      row.commit();
      reserve.rows++;
      const t = totals.get(r.currency) ?? { held: 0n, released: 0n };
      if (heldThisMonth(r)) t.held += r.held;
      t.released += r.released;
      totals.set(r.currency, t);
    }
    closeTable(
      reserve,
      [...totals.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([currency, t]) => ({
          values: [
            'Total of the month (held in it, released in it)',
            safeText(currency),
            minorToMajor(t.held),
            '',
            minorToMajor(t.released),
          ],
          numFmts: [undefined, undefined, moneyFormat(currency), undefined, moneyFormat(currency)],
        })),
    );
    await pending.commit();
  } catch (e) {
    pending.abort();
    throw e;
  }
  return { file, subMerchantId: first.subMerchantId, lines: lineCount };
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
  },
): Promise<void> {
  const t = addTableSheet(wb, name, [
    { header: `Dated (${o.timezone})`, width: 20, numFmt: DATE_TIME_FORMAT },
    { header: 'Currency', width: 10 },
    { header: 'Entry', width: 16 },
    { header: 'Order', width: 24 },
    { header: 'Payment', width: 24 },
    { header: 'Method', width: 11 },
    { header: 'Status', width: 10 },
    { header: 'Net', width: 16 },
    { header: 'Event ids', width: 40 },
  ]);
  const totals = new Map<string, bigint>();
  for (const f of o.figures) {
    totals.set(f.currency, 0n); // a total per currency, 0 when nothing changed
    let n = 0;
    for await (const a of o.entries(f.currency)) {
      const row = t.sheet.addRow([
        o.localTime(a.at),
        safeText(f.currency),
        safeText(a.kind),
        safeText(a.orderId),
        safeText(a.paymentId),
        safeText(a.method),
        safeText(a.status),
        minorToMajor(a.net),
        a.eventIds.join(' '),
      ]);
      row.getCell(8).numFmt = moneyFormat(f.currency);
      row.commit();
      t.rows++;
      totals.set(f.currency, (totals.get(f.currency) ?? 0n) + a.net);
      if (++n % ROWS_PER_YIELD === 0) await drainSheet(t.sheet);
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
    t,
    [...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, total]) => ({
        values: ['Total', safeText(currency), '', '', '', '', '', minorToMajor(total), ''],
        numFmts: [undefined, undefined, undefined, undefined, undefined, undefined, undefined, moneyFormat(currency)],
      })),
  );
}

/** What the opening builds on, said further: a previous month never issued, a re-based time zone. */
function statementNotes(figures: readonly StatementFigures[], meta: StatementMeta): string {
  let notes = '';
  if (meta.previousMonthNotIssued) {
    const months = figures.find((f) => f.notStatedMonths)?.notStatedMonths;
    notes += `; the statement of ${meta.previousMonthNotIssued} was never issued${months ? ` (the movements of ${months} are under "Months never stated before", not adjustments)` : ''}`;
  }
  if (meta.rebasedFrom)
    notes += `; re-based from ${meta.rebasedFrom} to ${meta.timezone} (what moved between the two zones' month boundaries is an adjustment)`;
  return notes;
}

/** Finance's index: sheet Payouts (exact header, one row per sub-merchant and currency), then Run. */
export async function writePayoutsWorkbook(
  file: string,
  figures: readonly StatementFigures[],
  meta: StatementMeta & { files?: readonly string[] },
  payoutOf?: (subMerchantId: string, currency: string) => PayoutSection | undefined,
): Promise<void> {
  const rows = [...figures].sort((a, b) =>
    a.subMerchantId < b.subMerchantId
      ? -1
      : a.subMerchantId > b.subMerchantId
        ? 1
        : a.currency < b.currency
          ? -1
          : a.currency > b.currency
            ? 1
            : 0,
  );
  const pending = openWorkbook(file);
  try {
    const widths = [38, 32, 9, 16, 16, 16, 16, 16, 16, 16, 11, 16, 16, 16, 16, 36, 14, 18];
    const t = addTableSheet(
      pending.workbook,
      sheetName(meta, 'Payouts'),
      PAYOUTS_HEADER.map((h, i) => ({ header: h, width: widths[i]! })),
    );
    const totals = new Map<string, { sums: bigint[]; operations: number; due: bigint[]; notStated: bigint }>();
    for (const f of rows) {
      const amounts = [f.gross, f.refunds, f.chargebacks, f.fees, f.reserveHeld, f.reserveReleased, f.netPayable];
      const adjustments = f.adjustments ?? 0n;
      const p = payoutOf?.(f.subMerchantId, f.currency);
      const notStated = f.notStated ?? 0n;
      const amountDue = p ? p.amountDue : adjustments + notStated + f.netPayable;
      const due = [adjustments, amountDue, p?.held ?? 0n, f.paidOut ?? 0n];
      const fmt = moneyFormat(f.currency);
      const row = t.sheet.addRow([
        safeText(f.subMerchantId),
        safeText(f.subMerchantName),
        safeText(f.currency),
        ...amounts.map(minorToMajor),
        f.operations,
        ...due.map(minorToMajor),
        safeText(p?.reference ?? ''),
        p?.reference ? 'expected' : '',
        minorToMajor(notStated),
      ]);
      for (const c of [4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 18]) row.getCell(c).numFmt = fmt;
      row.getCell(11).numFmt = COUNT_FORMAT;
      row.commit();
      t.rows++;
      const tot = totals.get(f.currency) ?? {
        sums: amounts.map(() => 0n),
        operations: 0,
        due: due.map(() => 0n),
        notStated: 0n,
      };
      tot.notStated += notStated;
      amounts.forEach((a, i) => {
        tot.sums[i]! += a;
      });
      due.forEach((a, i) => {
        tot.due[i]! += a;
      });
      tot.operations += f.operations;
      totals.set(f.currency, tot);
    }
    // Totals per currency (adding euros to dollars means nothing), after a blank row outside the filter.
    closeTable(
      t,
      [...totals.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([currency, tot]) => ({
          values: [
            'Total',
            '',
            safeText(currency),
            ...tot.sums.map(minorToMajor),
            tot.operations,
            ...tot.due.map(minorToMajor),
            '',
            '',
            minorToMajor(tot.notStated),
          ],
          numFmts: [
            undefined,
            undefined,
            undefined,
            ...tot.sums.map(() => moneyFormat(currency)),
            COUNT_FORMAT,
            ...tot.due.map(() => moneyFormat(currency)),
            undefined,
            undefined,
            moneyFormat(currency),
          ],
        })),
    );
    const run = pending.workbook.addWorksheet(sheetName(meta, 'Run'), {
      views: [{ state: 'frozen', ySplit: 1 }],
      ...printSetup([30, 70]),
    });
    run.columns = [{ width: 30 }, { width: 70 }];
    const head = run.addRow(['Field', 'Value']);
    head.font = BOLD_FONT;
    head.commit();
    const facts: Array<[string, string | number]> = [
      ...(meta.provisional
        ? ([['PROVISIONAL', 'the month has not ended: not recorded as issued, not to pay from']] as Array<
            [string, string]
          >)
        : []),
      ['Period', periodText(meta)],
      ['Cut at event-store position', meta.position],
      ['Figures sha-256', meta.figuresSha256],
      ['Rows (sub-merchant × currency)', rows.length],
      ...(meta.files ?? []).map((f, i): [string, string] => [i === 0 ? 'Statement files' : '', safeText(f)]),
    ];
    for (const fact of facts) run.addRow(fact).commit();
    run.commit();
    await pending.commit();
  } catch (e) {
    pending.abort();
    throw e;
  }
}
