import {
  addTableSheet,
  BOLD_FONT,
  closeTable,
  COUNT_FORMAT,
  minorToMajor,
  moneyFormat,
  openWorkbook,
  printSetup,
  safeText,
} from './xlsx';
import { bySubMerchantAndCurrency } from '../ledger/ledger-queries';
import type { PayoutSection } from './payout-sheets';
import { periodText, plainHeader, sheetName, type StatementFigures, type StatementMeta } from './statement-figures';

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
] as const;

/** Finance's index: sheet Payouts (exact header, one row per sub-merchant and currency), then Run. */
export async function writePayoutsWorkbook(
  file: string,
  figures: readonly StatementFigures[],
  meta: StatementMeta & { files?: readonly string[]; issuedAt?: Date },
  payoutOf?: (subMerchantId: string, currency: string) => PayoutSection | undefined,
): Promise<void> {
  const rows = [...figures].sort(bySubMerchantAndCurrency);
  const title = `Payouts ${meta.month}${meta.provisional ? ' (provisional)' : ''}`;
  const pending = openWorkbook(file, {
    title,
    created: meta.issuedAt ?? plainHeader(meta).issuedAt,
  });
  try {
    const widths = [38, 32, 9, 16, 16, 16, 16, 16, 16, 16, 11, 16, 16, 16, 16, 36, 14, 18];
    const t = addTableSheet(
      pending.workbook,
      sheetName(meta, 'Payouts'),
      PAYOUTS_HEADER.map((h, i) => ({ header: h, width: widths[i]! })),
      { title },
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
      ['Rows (sub-merchant × currency)', rows.length],
      ...(meta.files ?? []).map((f, i): [string, string] => [i === 0 ? 'Statement files' : '', safeText(f)]),
    ];
    // widths from the content, so that nothing prints cut
    const runWidths = [0, 1].map((c) =>
      Math.min(100, Math.max(c === 0 ? 30 : 70, ...facts.map((f) => String(f[c]).length + 2))),
    );
    const run = pending.workbook.addWorksheet(sheetName(meta, 'Run'), {
      views: [{ state: 'frozen', ySplit: 1 }],
      ...printSetup(runWidths, 1, title),
    });
    run.columns = runWidths.map((width) => ({ width }));
    const head = run.addRow(['Field', 'Value']);
    head.font = BOLD_FONT;
    head.commit();
    for (const fact of facts) run.addRow(fact).commit();
    run.commit();
    await pending.commit();
  } catch (e) {
    pending.abort();
    throw e;
  }
}
