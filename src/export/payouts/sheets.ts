import {
  addTableSheet,
  closeTable,
  DATE_FORMAT,
  excelDay,
  minorToMajor,
  moneyFormat,
  safeText,
  type Workbook,
} from '../workbook/xlsx';
import { LABELS, type Labels } from '../i18n/labels';
import type { PayoutStatusLine } from './paid-out';

/**
 * A statement's payout sheet (docs/bank.md, "Payouts and holds"): what was paid out in the month (the money
 * held pending investigation is src/export/statements/held-sheet.ts).
 */

/** What a statement shows of its payout per currency (src/export/statements/payouts.ts builds it). */
export interface PayoutSection {
  readonly currency: string;
  readonly reference: string | null;
  readonly held: bigint;
  readonly released: bigint;
  readonly amountDue: bigint;
  readonly payable: bigint;
  /** owed back by the sub-merchant on the statement built on, taken off the amount due (absent: none) */
  readonly broughtForward?: bigint;
  /** owed back after this statement, carried to the next (absent: none) */
  readonly owedBack?: bigint;
  readonly holds: ReadonlyArray<{ discrepancyId: string; reason: string; currency: string; amount: bigint }>;
  readonly paid: ReadonlyArray<{ bookingDate: string; reference: string; currency: string; amount: bigint }>;
  /** what the bank did with each payout asked for up to this statement, at its cut (paid-out.ts payoutStatusesAt) */
  readonly statuses?: readonly PayoutStatusLine[];
}

const byCurrency = <T extends { currency: string }>(xs: readonly T[]) =>
  [...xs].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));

function totalRows(totals: Map<string, bigint>, width: number, amountAt: number, labels: Labels, rows: number) {
  // a sheet with no line says so, rather than printing an empty table
  const none = rows <= 1 ? [{ values: [labels.none], numFmts: [] }] : [];
  return [
    ...none,
    ...[...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, total]) => {
        const values: (string | number)[] = Array.from({ length: width }, () => '');
        values[0] = labels.total;
        values[amountAt - 1] = safeText(currency);
        values[amountAt] = minorToMajor(total);
        const numFmts: (string | undefined)[] = Array.from({ length: width }, () => undefined);
        numFmts[amountAt] = moneyFormat(currency);
        return { values, numFmts };
      }),
  ];
}

export function writePaidOutSheet(
  wb: Workbook,
  payouts: readonly PayoutSection[],
  sheetName: (name: string) => string = (n) => n,
  labels: Labels = LABELS.en,
  title?: string,
  dayFormat: string = DATE_FORMAT,
): void {
  const t = addTableSheet(
    wb,
    sheetName(labels.paidOutSheet),
    [
      { header: labels.bookedOn, width: 12, numFmt: dayFormat },
      { header: labels.reference, width: 36 },
      { header: labels.currency, width: 10 },
      { header: labels.amountPaid, width: 20 },
    ],
    title ? { title, pageOf: labels.pageOf } : {},
  );
  const totals = new Map<string, bigint>();
  for (const p of byCurrency(payouts)) {
    totals.set(
      p.currency,
      p.paid.reduce((s, l) => s + l.amount, 0n),
    );
    for (const l of p.paid) {
      const row = t.sheet.addRow([
        excelDay(l.bookingDate),
        safeText(l.reference),
        safeText(l.currency),
        minorToMajor(l.amount),
      ]);
      row.getCell(4).numFmt = moneyFormat(l.currency);
      // a date is right-aligned by default and would print against the reference beside it
      row.getCell(1).alignment = { horizontal: 'left' };
      row.commit();
      t.rows++;
    }
  }
  closeTable(t, totalRows(totals, 4, 3, labels, t.rows));
}

/** A payout's status in the statement's words. */
export function payoutStatusText(status: PayoutStatusLine['status'], labels: Labels = LABELS.en): string {
  const words: Record<PayoutStatusLine['status'], string> = {
    expected: labels.statusExpected,
    paid: labels.statusPaid,
    partial: labels.statusPartial,
    missing: labels.statusMissing,
    returned: labels.statusReturned,
    duplicated: labels.statusDuplicated,
  };
  return words[status];
}

/**
 * What the bank did with each payout asked for up to the statement (docs/bank.md, "What the bank did"): one row
 * per payout reference, with the amount asked, its status, what was paid, when, the bank's reference and the
 * account it was paid to, as the bank statements imported at the statement's cut show them.
 */
export function writePayoutStatusSheet(
  wb: Workbook,
  lines: readonly PayoutStatusLine[],
  sheetName: (name: string) => string = (n) => n,
  labels: Labels = LABELS.en,
  title?: string,
  dayFormat: string = DATE_FORMAT,
): void {
  const t = addTableSheet(
    wb,
    sheetName(labels.payoutStatusSheet),
    [
      { header: labels.reference, width: 32 },
      { header: labels.statementMonth, width: 12 },
      { header: labels.currency, width: 10 },
      { header: labels.amountAsked, width: 16 },
      { header: labels.payoutStatus, width: 24 },
      { header: labels.paidAmount, width: 18 },
      { header: labels.bookedOn, width: 12, numFmt: dayFormat },
      { header: labels.bankReference, width: 24 },
      { header: labels.paidTo, width: 34 },
      { header: labels.dueBy, width: 12, numFmt: dayFormat },
    ],
    title ? { title, pageOf: labels.pageOf } : {},
  );
  const ordered = [...lines].sort((a, b) =>
    a.currency !== b.currency ? (a.currency < b.currency ? -1 : 1) : a.reference < b.reference ? -1 : 1,
  );
  for (const l of ordered) {
    const row = t.sheet.addRow([
      safeText(l.reference),
      safeText(l.month),
      safeText(l.currency),
      minorToMajor(l.amount),
      safeText(payoutStatusText(l.status, labels)),
      minorToMajor(l.paidOut),
      l.paidOn ? excelDay(l.paidOn) : '',
      safeText(l.bankRef ?? ''),
      safeText(l.paidTo ?? ''),
      excelDay(l.dueOn),
    ]);
    row.getCell(4).numFmt = moneyFormat(l.currency);
    row.getCell(6).numFmt = moneyFormat(l.currency);
    for (const c of [7, 10]) row.getCell(c).alignment = { horizontal: 'left' };
    row.commit();
    t.rows++;
  }
  closeTable(t, rows(t.rows, labels));
}

const rows = (n: number, labels: Labels) => (n <= 1 ? [{ values: [labels.none], numFmts: [] }] : []);
