import {
  addTableSheet,
  closeTable,
  DATE_FORMAT,
  excelDay,
  minorToMajor,
  moneyFormat,
  safeText,
  type Workbook,
} from './xlsx';
import { LABELS, type Labels } from './i18n/labels';

/**
 * A statement's payout sheet (docs/bank.md, "Payouts and holds"): what was paid out in the month (the money
 * held pending investigation is src/export/held-sheet.ts).
 */

/** What a statement shows of its payout per currency (src/export/statement-payouts.ts builds it). */
export interface PayoutSection {
  readonly currency: string;
  readonly reference: string | null;
  readonly held: bigint;
  readonly released: bigint;
  readonly amountDue: bigint;
  readonly payable: bigint;
  readonly holds: ReadonlyArray<{ discrepancyId: string; reason: string; currency: string; amount: bigint }>;
  readonly paid: ReadonlyArray<{ bookingDate: string; reference: string; currency: string; amount: bigint }>;
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
