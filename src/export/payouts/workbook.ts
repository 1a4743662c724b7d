import {
  addTableSheet,
  BOLD_FONT,
  closeTable,
  COUNT_FORMAT,
  DATE_FORMAT,
  excelDay,
  minorToMajor,
  moneyOrExactText,
  moneyFormat,
  openWorkbook,
  printSetup,
  safeText,
  type Sheet,
  widthsForMoney,
} from '../workbook/xlsx';
import { bySubMerchantAndCurrency } from '../../ledger/ledger-queries';
import type { PayoutSection } from './sheets';
import { periodText, plainHeader, sheetName, type StatementFigures, type StatementMeta } from '../statements/figures';

/**
 * Finance's Payouts index of a statement run: one row per sub-merchant and currency under the exact header
 * finance's import expects, then the run's facts (finance's own document, so the cut and the hash stay on it).
 */

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
  // appended: what the bank did with this row's payout reference at the cut (payout_status above says which)
  'payout_paid',
  'payout_paid_on',
  'payout_bank_reference',
  'payout_paid_to',
] as const;

/** The index's sheet of every payout asked for up to the month, with what the bank did with it. */
export const PAYOUT_STATUS_HEADER = [
  'payout_reference',
  'sub_merchant_id',
  'sub_merchant_name',
  'currency',
  'statement_month',
  'amount',
  'payout_status',
  'paid_out',
  'returned',
  'duplicated',
  'due_on',
  'paid_on',
  'bank_reference',
  'paid_to',
] as const;

type StatusLine = NonNullable<PayoutSection['statuses']>[number];

/** The status of a row's own reference: as matched at the cut, else `expected` (a reference this run issues). */
function rowStatus(p: PayoutSection | undefined): StatusLine | { status: 'expected' } | null {
  if (!p?.reference) return null;
  return p.statuses?.find((s) => s.reference === p.reference) ?? { status: 'expected' };
}

type PayoutOf = (subMerchantId: string, currency: string) => PayoutSection | undefined;
type IndexMeta = StatementMeta & { files?: readonly string[]; issuedAt?: Date };
interface CurrencyTotals {
  sums: bigint[];
  operations: number;
  due: bigint[];
  notStated: bigint;
}

/** Finance's index: sheet Payouts (exact header, one row per sub-merchant and currency), then Run. */
export async function writePayoutsWorkbook(
  file: string,
  figures: readonly StatementFigures[],
  meta: IndexMeta,
  payoutOf?: PayoutOf,
): Promise<void> {
  const rows = [...figures].sort(bySubMerchantAndCurrency);
  const title = `Payouts ${meta.month}${meta.provisional ? ' (provisional)' : ''}`;
  const pending = openWorkbook(file, {
    title,
    created: meta.issuedAt ?? plainHeader(meta).issuedAt,
  });
  try {
    writePayoutsSheet(pending.workbook, meta, title, rows, payoutOf);
    writeStatusSheet(pending.workbook, meta, title, rows, payoutOf);
    writeRunSheet(pending.workbook, meta, title, rows.length);
    await pending.commit();
  } catch (e) {
    await pending.abort();
    throw e;
  }
}

/** Sheet "Payouts": a row per sub-merchant and currency, then the totals per currency. */
function writePayoutsSheet(
  wb: Parameters<typeof addTableSheet>[0],
  meta: StatementMeta,
  title: string,
  rows: readonly StatementFigures[],
  payoutOf?: PayoutOf,
): void {
  const totals = new Map<string, CurrencyTotals>();
  const built = rows.map((f) => {
    const row = payoutsRow(f, payoutOf?.(f.subMerchantId, f.currency));
    addToTotals(totals, f, row);
    return { currency: f.currency, values: row.values };
  });
  // Totals per currency (adding euros to dollars means nothing), after a blank row outside the filter.
  const totalRows = [...totals.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, tot]) => ({ currency, ...totalsRow(currency, tot) }));
  // sized for the money shown, totals included (a total of millions printed as ### in a column of 16)
  const money: Array<Array<[number, string]>> = PAYOUTS_HEADER.map(() => []);
  for (const r of [...built, ...totalRows])
    for (const c of MONEY_COLUMNS)
      if (typeof r.values[c - 1] === 'number') money[c - 1]!.push([r.values[c - 1] as number, r.currency]);
  const widths = widthsForMoney(
    [38, 32, 9, 16, 16, 16, 16, 16, 16, 16, 11, 16, 16, 16, 16, 36, 14, 18, 16, 12, 24, 34],
    money,
  );
  const t = addTableSheet(
    wb,
    sheetName(meta, 'Payouts'),
    PAYOUTS_HEADER.map((h, i) => ({ header: h, width: widths[i]!, ...dateColumn(i + 1 === PAID_ON_COLUMN) })),
    { title },
  );
  for (const row of built) {
    const r = t.sheet.addRow(row.values);
    const fmt = moneyFormat(row.currency);
    for (const c of MONEY_COLUMNS) r.getCell(c).numFmt = fmt;
    r.getCell(11).numFmt = COUNT_FORMAT;
    centred(r, [PAID_ON_COLUMN]);
    r.commit();
    t.rows++;
  }
  closeTable(
    t,
    totalRows.map(({ values, numFmts }) => ({ values, numFmts })),
  );
}

/** The Payouts sheet's money columns (1-based). */
const MONEY_COLUMNS = [4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 18, 19];
const PAID_ON_COLUMN = PAYOUTS_HEADER.indexOf('payout_paid_on') + 1;

/** A day column is a real date (finance sorts and filters it as one), formatted as the statements write days. */
const dateColumn = (isDate: boolean) => (isDate ? { numFmt: DATE_FORMAT } : {});
const dayCell = (day: string | null | undefined) => (day ? excelDay(day) : '');

/** A date, right-aligned by default, would print against the text after it; left-aligned, against an amount before. */
function centred(row: ReturnType<Sheet['addRow']>, columns: readonly number[]) {
  for (const c of columns) row.getCell(c).alignment = { horizontal: 'center' };
}

/** One index row's cells and the amounts its currency's totals add up. */
function payoutsRow(f: StatementFigures, p: PayoutSection | undefined) {
  const amounts = [f.gross, f.refunds, f.chargebacks, f.fees, f.reserveHeld, f.reserveReleased, f.netPayable];
  const adjustments = f.adjustments ?? 0n;
  const notStated = f.notStated ?? 0n;
  const amountDue = p ? p.amountDue : adjustments + notStated + f.netPayable;
  const due = [adjustments, amountDue, p?.held ?? 0n, f.paidOut ?? 0n];
  const st = rowStatus(p);
  const bank = st && 'reference' in st ? st : null;
  const values = [
    safeText(f.subMerchantId),
    safeText(f.subMerchantName),
    safeText(f.currency),
    ...amounts.map(minorToMajor),
    f.operations,
    ...due.map(minorToMajor),
    safeText(p?.reference ?? ''),
    st?.status ?? '',
    minorToMajor(notStated),
    bank ? minorToMajor(bank.paidOut) : '',
    dayCell(bank?.paidOn),
    safeText(bank?.bankRef ?? ''),
    safeText(bank?.paidTo ?? ''),
  ];
  return { values, amounts, due, notStated };
}

function addToTotals(
  totals: Map<string, CurrencyTotals>,
  f: StatementFigures,
  row: { amounts: bigint[]; due: bigint[]; notStated: bigint },
): void {
  const tot = totals.get(f.currency) ?? {
    sums: row.amounts.map(() => 0n),
    operations: 0,
    due: row.due.map(() => 0n),
    notStated: 0n,
  };
  tot.notStated += row.notStated;
  row.amounts.forEach((a, i) => {
    tot.sums[i]! += a;
  });
  row.due.forEach((a, i) => {
    tot.due[i]! += a;
  });
  tot.operations += f.operations;
  totals.set(f.currency, tot);
}

function totalsRow(currency: string, tot: CurrencyTotals) {
  return {
    values: [
      'Total',
      '',
      safeText(currency),
      ...tot.sums.map((v) => moneyOrExactText(v, currency)),
      tot.operations,
      ...tot.due.map((v) => moneyOrExactText(v, currency)),
      '',
      '',
      moneyOrExactText(tot.notStated, currency),
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
  };
}

/** Sheet "Run": what the index was cut at and issued with, and the statement files of the run. */
function writeRunSheet(wb: Parameters<typeof addTableSheet>[0], meta: IndexMeta, title: string, rows: number): void {
  const facts: Array<[string, string | number]> = [
    ...(meta.provisional
      ? ([['PROVISIONAL', 'the month has not ended: not recorded as issued, not to pay from']] as Array<
          [string, string]
        >)
      : []),
    ['Period', periodText(meta)],
    ['Cut at event-store position', meta.position],
    ['Figures sha-256', meta.figuresSha256],
    ['Issued at (UTC)', (meta.issuedAt ?? plainHeader(meta).issuedAt).toISOString()],
    ['Rows (sub-merchant × currency)', rows],
    ...(meta.files ?? []).map((f, i): [string, string] => [i === 0 ? 'Statement files' : '', safeText(f)]),
  ];
  // widths from the content, so that nothing prints cut
  const runWidths = [0, 1].map((c) =>
    Math.min(100, Math.max(c === 0 ? 30 : 70, ...facts.map((f) => String(f[c]).length + 2))),
  );
  const run = wb.addWorksheet(sheetName(meta, 'Run'), {
    views: [{ state: 'frozen', ySplit: 1 }],
    ...printSetup(runWidths, 1, title),
  });
  run.columns = runWidths.map((width) => ({ width }));
  const head = run.addRow(['Field', 'Value']);
  head.font = BOLD_FONT;
  head.commit();
  for (const fact of facts) run.addRow(fact).commit();
  run.commit();
}

/** Sheet "Payout status": one row per payout reference of the index's rows, with what the bank did at the cut. */
function writeStatusSheet(
  wb: Parameters<typeof addTableSheet>[0],
  meta: StatementMeta,
  title: string,
  rows: readonly StatementFigures[],
  payoutOf?: (subMerchantId: string, currency: string) => PayoutSection | undefined,
): void {
  const lines: StatusLine[] = [];
  for (const f of rows) {
    const p = payoutOf?.(f.subMerchantId, f.currency);
    const mine = (p?.statuses ?? []).map((l) => ({ ...l, payeeName: f.subMerchantName }));
    lines.push(...mine);
    // the reference this run issues is not matched yet: expected, nothing paid
    if (p?.reference && !mine.some((l) => l.reference === p.reference))
      lines.push({
        reference: p.reference,
        subMerchantId: f.subMerchantId,
        payeeName: f.subMerchantName,
        currency: f.currency,
        month: meta.month,
        amount: p.payable,
        status: 'expected',
        paidOut: 0n,
        returned: 0n,
        duplicated: 0n,
        dueOn: '',
        paidOn: null,
        bankRef: null,
        paidTo: null,
      });
  }
  statusTable(wb, sheetName(meta, 'Payout status'), title, lines);
}

/** Payout status's day columns (1-based): due_on, paid_on. */
const STATUS_DAYS = [PAYOUT_STATUS_HEADER.indexOf('due_on') + 1, PAYOUT_STATUS_HEADER.indexOf('paid_on') + 1];

/** One row per payout reference (the first of equal ones), by reference. */
function statusTable(
  wb: Parameters<typeof addTableSheet>[0],
  name: string,
  title: string,
  lines: readonly StatusLine[],
) {
  const money: Array<Array<[number, string]>> = PAYOUT_STATUS_HEADER.map(() => []);
  for (const l of lines)
    for (const [c, v] of [
      [5, l.amount],
      [7, l.paidOut],
      [8, l.returned],
      [9, l.duplicated],
    ] as const)
      money[c]!.push([minorToMajor(v), l.currency]);
  const widths = widthsForMoney([36, 38, 32, 9, 10, 16, 12, 16, 16, 16, 12, 12, 24, 34], money);
  const t = addTableSheet(
    wb,
    name,
    PAYOUT_STATUS_HEADER.map((h, i) => ({ header: h, width: widths[i]!, ...dateColumn(STATUS_DAYS.includes(i + 1)) })),
    { title },
  );
  const seen = new Set<string>();
  for (const l of [...lines].sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0))) {
    if (seen.has(l.reference)) continue;
    seen.add(l.reference);
    const row = t.sheet.addRow([
      safeText(l.reference),
      safeText(l.subMerchantId),
      safeText(l.payeeName),
      safeText(l.currency),
      safeText(l.month),
      minorToMajor(l.amount),
      l.status,
      minorToMajor(l.paidOut),
      minorToMajor(l.returned),
      minorToMajor(l.duplicated),
      dayCell(l.dueOn),
      dayCell(l.paidOn),
      safeText(l.bankRef ?? ''),
      safeText(l.paidTo ?? ''),
    ]);
    for (const c of [6, 8, 9, 10]) row.getCell(c).numFmt = moneyFormat(l.currency);
    centred(row, STATUS_DAYS);
    row.commit();
    t.rows++;
  }
  // an empty table says so
  closeTable(t, t.rows <= 1 ? [{ values: ['(none)'] }] : []);
}

/** `payout-status-YYYY-MM.xlsx`: the payouts a month's statements asked for, and what the bank did with them. */
export const payoutStatusFileName = (month: string) => `payout-status-${month}.xlsx`;

/**
 * Finance's view of the payouts of a month after the bank paid them (not a statement run: nothing is recorded):
 * every payout reference with its status, what was paid, when, the bank's reference and the account paid to,
 * as matched at `position` (paid-out.ts payoutStatusesAt), then the facts of the reading.
 */
export async function writePayoutStatusWorkbook(
  file: string,
  lines: readonly StatusLine[],
  meta: { month: string; position: string; writtenAt: Date },
): Promise<void> {
  const title = `Payout status ${meta.month}`;
  const pending = openWorkbook(file, { title, created: meta.writtenAt });
  try {
    statusTable(pending.workbook, 'Payout status', title, lines);
    const facts: Array<[string, string | number]> = [
      ['Statement month', meta.month],
      ['Bank statements read up to event-store position', meta.position],
      ['Written at (UTC)', meta.writtenAt.toISOString()],
      ...PAYOUT_STATUSES_TEXT.map(([s, text]): [string, string | number] => [
        `${s}: ${text}`,
        lines.filter((l) => l.status === s).length,
      ]),
    ];
    const run = pending.workbook.addWorksheet('Reading', { views: [{ state: 'frozen', ySplit: 1 }] });
    run.columns = [{ width: 70 }, { width: 40 }];
    const head = run.addRow(['Field', 'Value']);
    head.font = BOLD_FONT;
    head.commit();
    for (const fact of facts) run.addRow(fact).commit();
    run.commit();
    await pending.commit();
  } catch (e) {
    await pending.abort();
    throw e;
  }
}

const PAYOUT_STATUSES_TEXT: ReadonlyArray<readonly [StatusLine['status'], string]> = [
  ['expected', 'nothing paid yet, not due'],
  ['paid', 'paid in full'],
  ['partial', 'a part paid'],
  ['missing', 'nothing paid by the due day'],
  ['returned', 'paid, and returned by the bank'],
  ['duplicated', 'paid in full, and paid again'],
];
