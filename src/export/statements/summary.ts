import { DateTime } from 'luxon';
import { LABELS, type Labels, writtenDay, XLSX_DATE } from '../i18n/labels';
import { documentText } from '../../input-rules';
import {
  bridgeLabel,
  bridgeOf,
  monthRange,
  sheetName,
  type StatementFigures,
  type StatementPayoutSection,
  type StatementHeader,
  type StatementMeta,
} from './figures';
import {
  BOLD_FONT,
  COUNT_FORMAT,
  excelDay,
  minorToMajor,
  moneyFormat,
  printSetup,
  safeText,
  type Workbook,
} from '../workbook/xlsx';

/**
 * A statement's first sheet: who issues it to whom, its number, date and period, then the bridge with one
 * column per currency and the one live formula that must show zero. Words a sub-merchant reads only.
 */

/** The header block's rows: [label, text or date]; empty values left out. */
export function headerRows(
  figures: readonly StatementFigures[],
  meta: StatementMeta,
  header: StatementHeader,
): Array<[string, string | Date]> {
  const t = LABELS[header.language];
  const first = figures[0]!;
  const { from, to } = monthRange(meta.month, meta.timezone);
  const day = (d: DateTime) => d.setLocale(header.language === 'uk' ? 'uk' : 'en-GB').toFormat('d MMMM yyyy');
  const issuer = [header.issuer.name, header.issuer.address, header.issuer.taxId && `${t.taxId} ${header.issuer.taxId}`]
    .filter(Boolean)
    .join(', ');
  const rows: Array<[string, string | Date | undefined]> = [
    ...(meta.provisional ? ([[t.draft, t.draft]] as Array<[string, string]>) : []),
    [t.title, header.number ? `${t.statementNo} ${header.number}` : t.draft],
    [t.issuedOn, DateTime.fromJSDate(header.issuedAt, { zone: meta.timezone }).toISODate()!],
    [
      t.corrects,
      header.corrects &&
        t.correctsText(
          header.corrects.number,
          // in a sentence, the day as the document's language writes dates (the PDF's issue date is 27.11.2026 in uk)
          writtenDay(
            DateTime.fromJSDate(header.corrects.issuedAt, { zone: meta.timezone }).toISODate()!,
            header.language,
          ),
        ),
    ],
    [t.period, `${day(from)} – ${day(to.minus({ days: 1 }))} (${t.timeZone} ${meta.timezone})`],
    [t.issuer, issuer || '—'],
    [t.recipient, safeText(documentText(header.recipient.legalName ?? first.subMerchantName))],
    // a receiver the directory does not know has recon's stand-in id, which is no account of the sub-merchant's
    [t.accountId, first.subMerchantId.startsWith('receiver:') ? t.notRegistered : safeText(first.subMerchantId)],
    [t.taxId, header.recipient.taxId && safeText(header.recipient.taxId)],
    [t.address, header.recipient.address && safeText(header.recipient.address)],
    [t.contact, header.contact && safeText(header.contact)],
    [t.disputes, header.dispute && safeText(header.dispute)],
    [t.amountsNote, ''],
    [
      t.openingFrom,
      // `previousStatement` is finance's "YYYY-MM at <cut position>": the document names the month only
      (first.previousStatement ? t.openingPrevious(first.previousStatement.replace(/ at .*$/, '')) : t.openingNone) +
        (meta.previousMonthNotIssued ? `; ${t.neverIssued(meta.previousMonthNotIssued)}` : ''),
    ],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== null);
}

type PayoutOfFigures = (f: StatementFigures) => StatementPayoutSection | undefined;

export function writeSummarySheet(
  wb: Workbook,
  figures: readonly StatementFigures[],
  meta: StatementMeta,
  header: StatementHeader,
  payoutOf: PayoutOfFigures,
  title: string,
): void {
  const t = LABELS[header.language];
  const bridge = bridgeOf(
    figures,
    figures.flatMap((f) => payoutOf(f) ?? []),
  );
  const info = headerRows(figures, meta, header);
  const labels = [
    ...info.map(([l]) => l),
    ...bridge.map((l) => bridgeLabel(l, header.language)),
    checkLabel(t, figures),
  ];
  // the first column as wide as its longest label, the others as their amounts or their payout reference (its
  // neighbour holds the next currency's, so a wider one would print cut)
  const summaryWidths = [
    Math.min(100, Math.max(...labels.map((l) => l.length)) + 2),
    ...figures.map((f) => Math.max(20, (payoutOf(f)?.reference ?? '').length + 2)),
  ];
  const textWidth = Math.max(...info.map(([, v]) => String(v).length));
  if (figures.length === 1) summaryWidths[1] = Math.max(20, Math.min(70, textWidth + 2));
  const summary = wb.addWorksheet(sheetName(meta, t.summary), {
    views: [{ state: 'frozen', xSplit: 1, ySplit: info.length + 2 }],
    ...printSetup(summaryWidths, 0, title, t.pageOf),
  });
  summary.columns = summaryWidths.map((width) => ({ width }));
  writeHeaderRows(summary, info, t, header.language);
  writeBridgeRows(summary, figures, bridge, payoutOf, header.language, info.length + 3);
  summary.commit();
}

type SummarySheet = ReturnType<Workbook['addWorksheet']>;

/** Who issues the statement to whom, when, for which period: a label and its value a row. */
function writeHeaderRows(
  summary: SummarySheet,
  info: ReadonlyArray<readonly [string, unknown]>,
  t: Labels,
  language: StatementHeader['language'],
): void {
  for (const [label, value] of info) {
    // the issue date a real date, shown in the language's custom
    const date = label === t.issuedOn ? excelDay(String(value)) : undefined;
    const r = summary.addRow([label, date ?? value]);
    r.getCell(1).font = BOLD_FONT;
    if (date) {
      r.getCell(2).numFmt = XLSX_DATE[language].day;
      r.getCell(2).alignment = { horizontal: 'left' };
    }
    r.commit();
  }
  summary.addRow([]).commit();
}

/** The bridge from opening to closing, a column per currency, its check formula, operations and reference. */
function writeBridgeRows(
  summary: SummarySheet,
  figures: readonly StatementFigures[],
  bridge: ReturnType<typeof bridgeOf>,
  payoutOf: PayoutOfFigures,
  language: StatementHeader['language'],
  firstBridgeRow: number,
): void {
  const t = LABELS[language];
  const head = summary.addRow([t.bridge, ...figures.map((f) => f.currency)]);
  head.font = BOLD_FONT;
  // over their amounts
  figures.forEach((_f, i) => {
    head.getCell(i + 2).alignment = { horizontal: 'right' };
  });
  head.commit();
  for (const line of bridge) {
    const r = summary.addRow([
      bridgeLabel(line, language),
      ...figures.map((f) => minorToMajor(line.value(f, payoutOf(f)))),
    ]);
    figures.forEach((f, i) => {
      r.getCell(i + 2).numFmt = moneyFormat(f.currency);
    });
    if (line.key === 'net' || line.key.startsWith('due') || line.key.startsWith('closing')) r.font = BOLD_FONT;
    r.commit();
  }
  writeCheckRow(summary, checkLabel(t, figures), figures, bridge, firstBridgeRow);
  const ops = summary.addRow([t.operations, ...figures.map((f) => f.operations)]);
  figures.forEach((_f, i) => {
    ops.getCell(i + 2).numFmt = COUNT_FORMAT;
  });
  ops.commit();
  summary.addRow([t.payoutReference, ...figures.map((f) => payoutOf(f)?.reference ?? '—')]).commit();
}

/** The check's words name what its formula adds: the months never stated too, when the statement has some. */
const checkLabel = (t: Labels, figures: readonly StatementFigures[]) =>
  figures.some((f) => f.notStated !== undefined) ? t.checkGap : t.check;

/** The one live formula: Excel recomputes opening + adjustments + net payable − paid out − closing: zero. */
function writeCheckRow(
  summary: SummarySheet,
  label: string,
  figures: readonly StatementFigures[],
  bridge: ReturnType<typeof bridgeOf>,
  firstBridgeRow: number,
): void {
  const gap = figures.some((f) => f.notStated !== undefined);
  const rowOf = (key: string) => firstBridgeRow + bridge.findIndex((l) => l.key.startsWith(key));
  const notStatedRow = gap ? rowOf('notStated') : undefined;
  const check = summary.addRow([
    label,
    ...figures.map((f, i) => {
      const col = String.fromCharCode(66 + i);
      const notStated = notStatedRow === undefined ? '' : `+${col}${notStatedRow}`;
      return {
        formula: `${col}${rowOf('opening')}+${col}${rowOf('adjustments')}${notStated}+${col}${rowOf('net')}+${col}${rowOf('paidOut')}-${col}${rowOf('closing')}`,
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
}
