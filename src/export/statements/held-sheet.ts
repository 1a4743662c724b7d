import { DateTime } from 'luxon';
import { holdReason, LABELS, type Labels } from '../i18n/labels';
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

/**
 * A statement's "Held pending investigation" section (workbook sheet and PDF table): each item named as the
 * sub-merchant knows it, by order, payment, the payment's date, the amount and the reason in words (docs/
 * outputs.md, "Held pending investigation"); the discrepancy ids are the Audit sheet's.
 */

/** A held item as the statement shows it (src/export/payouts/holds.ts HeldItem). */
export interface HeldLine {
  readonly discrepancyId: string;
  readonly reason: string;
  readonly currency: string;
  readonly amount: bigint;
  readonly orderId?: string | null;
  readonly paymentId?: string | null;
  readonly occurredAt?: Date | null;
}

export interface HeldByCurrency {
  readonly currency: string;
  readonly held: bigint;
  readonly holds: readonly HeldLine[];
}

/** The payment's day in the statement's time zone (yyyy-mm-dd), or null when the item names no payment. */
export function heldDay(h: HeldLine, timezone: string): string | null {
  return h.occurredAt ? DateTime.fromJSDate(h.occurredAt, { zone: timezone }).toISODate() : null;
}

const byCurrency = <T extends { currency: string }>(xs: readonly T[]) =>
  [...xs].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));

// by code unit, never `localeCompare`: the process's locale (LANG) collates ("aa" after "z" in Danish), and a
// statement issued again on another machine must list the same lines
const byText = (a: string | null | undefined, b: string | null | undefined) => {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The section's lines in statement order: by currency, then date, order and payment. */
export function heldLines(payouts: readonly HeldByCurrency[], timezone: string) {
  return byCurrency(payouts).flatMap((p) =>
    [...p.holds]
      .map((h) => ({ ...h, day: heldDay(h, timezone) }))
      .sort((a, b) => byText(a.day, b.day) || byText(a.orderId, b.orderId) || byText(a.paymentId, b.paymentId)),
  );
}

export function writeHeldSheet(
  wb: Workbook,
  payouts: readonly HeldByCurrency[],
  opts: {
    readonly timezone: string;
    readonly sheetName?: (name: string) => string;
    readonly labels?: Labels;
    readonly title?: string;
    readonly dayFormat?: string;
  },
): void {
  const labels = opts.labels ?? LABELS.en;
  const lang = labels === LABELS.uk ? 'uk' : 'en';
  const lines = heldLines(payouts, opts.timezone).map((h) => ({ ...h, words: safeText(holdReason(h.reason, lang)) }));
  // the items are all known before the sheet is begun: the reason column as wide as its longest reason, which
  // would print cut against the currency beside it (Excel's widest column is 255)
  const reasonWidth = Math.min(255, Math.max(20, ...lines.map((h) => h.words.length + 2)));
  const t = addTableSheet(
    wb,
    (opts.sheetName ?? ((n) => n))(labels.heldSheet),
    [
      { header: labels.order, width: 24 },
      { header: labels.payment, width: 38 },
      { header: labels.day, width: 12, numFmt: opts.dayFormat ?? DATE_FORMAT },
      { header: labels.reason, width: reasonWidth },
      { header: labels.currency, width: 10 },
      { header: labels.amountHeld, width: 16 },
    ],
    opts.title ? { title: opts.title, pageOf: labels.pageOf } : {},
  );
  for (const h of lines) {
    const row = t.sheet.addRow([
      safeText(h.orderId ?? '—'),
      safeText(h.paymentId ?? '—'),
      h.day ? excelDay(h.day) : '—',
      h.words,
      safeText(h.currency),
      minorToMajor(h.amount),
    ]);
    row.getCell(6).numFmt = moneyFormat(h.currency);
    // a date is right-aligned by default and would print against the reason beside it
    row.getCell(3).alignment = { horizontal: 'left' };
    row.commit();
    t.rows++;
  }
  const none = t.rows <= 1 ? [{ values: [labels.none], numFmts: [] }] : [];
  const totals = byCurrency(payouts).map((p) => ({
    values: [labels.total, '', '', '', safeText(p.currency), minorToMajor(p.held)],
    numFmts: [undefined, undefined, undefined, undefined, undefined, moneyFormat(p.currency)],
  }));
  closeTable(t, [...none, ...totals]);
}
