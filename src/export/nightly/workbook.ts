import { DateTime } from 'luxon';
import { addCashSheet } from './cash-sheet';
import type { NightlyReportData, OpenDiscrepancy } from './types';
import { writeOpenOnDaySheets } from './open-sheets';
import { SOURCES, writeSourcesSheet } from './sources';
import { type NightlyCell, type NightlyColumn, nightlyMoney, writeNightlyTable } from './table';
import { writeOrdersSheets } from './orders-sheet';
import { writeDecisionsSheet } from './decisions-sheet';
import { counted } from '../i18n/labels';
import { DATE_TIME_FORMAT, createLocalTime, moneyFormat, openWorkbook, type Workbook } from '../workbook/xlsx';

/**
 * The nightly report's workbook: the auditors' sheets as at the day's end first (Summary, Ageing, In doubt,
 * Month to date), then the day's sources, matching, discrepancies, cash, job facts, windows and orders.
 */

/** The title every page of the report carries. */
export const nightlyDocumentName = (date: string, timezone: string) =>
  `Nightly reconciliation report ${date} (${timezone})`;

/**
 * The report's issue time: when it was written (`writtenAt`); the discrepancies are stated as at the end
 * of its business day, which the Summary gives apart. Data without a writing time (a test's) is dated at
 * that end.
 */
export const nightlyIssuedAt = (data: Pick<NightlyReportData, 'day' | 'writtenAt'>): Date =>
  data.writtenAt ?? data.day.to;

const moneyCell = (v: bigint | null | undefined, currency: string | null): NightlyCell =>
  v === null || v === undefined ? null : nightlyMoney(v, currency);

/**
 * The open discrepancies as a reader goes through them: what, which (its id, then the payment and order it
 * concerns, one a line), since when, whose, how much, what differs. The sources' own values are on the
 * Source values sheet, so that both print one page wide in a readable size.
 */
function openDiscrepancySheets(wb: Workbook, name: string, data: NightlyReportData, local: (d: Date) => Date): void {
  const zone = data.timezone;
  const names = data.asOfDay?.names ?? new Map<string, string>();
  const opts = { moneyFormat };
  const subs = (d: OpenDiscrepancy) =>
    (d.subMerchantIds?.length ? d.subMerchantIds : d.subMerchantId ? [d.subMerchantId] : [])
      .map((id) => names.get(id) ?? id)
      .join('\n') || '(none)';
  const totals: NightlyCell[][] = data.open.length ? [[`Total: ${data.open.length} open at the day’s end`]] : [];
  writeNightlyTable(
    wb,
    name,
    'Open discrepancies',
    [
      { header: 'type' },
      { header: 'discrepancy id, payment, order' },
      { header: `detected (${zone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT },
      { header: 'days open', kind: 'count' },
      { header: 'sub-merchant(s)', maxWidth: 30 },
      { header: 'amount in doubt', kind: 'money' },
      { header: 'what differs', maxWidth: 45 },
    ],
    data.open.map((d) => [
      d.type,
      [d.id, d.paymentId ?? '–', d.orderId ?? '–'].join('\n'),
      d.detectedAt ? local(d.detectedAt) : null,
      d.ageDays ?? null,
      subs(d),
      moneyCell(d.amountInDoubt, d.currency),
      d.whatDiffers ?? '',
    ]),
    { ...opts, totals },
  );
  writeNightlyTable(
    wb,
    name,
    'Source values',
    [
      { header: 'type' },
      { header: 'discrepancy id' },
      { header: `operation time (${zone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT },
      { header: 'method' },
      { header: 'receiver', maxWidth: 30 },
      ...SOURCES.flatMap((s): NightlyColumn[] => [{ header: `${s} status` }, { header: `${s} amount`, kind: 'money' }]),
      { header: 'evidence events', kind: 'count' },
      { header: 'difference', kind: 'money' },
    ],
    data.open.map((d): NightlyCell[] => [
      d.type,
      d.id,
      d.occurredAt ? local(d.occurredAt) : null,
      d.method,
      d.receiverName,
      ...SOURCES.flatMap((s): NightlyCell[] => {
        const v = d.values[s];
        return v ? [v.status, moneyCell(v.amount, v.currency ?? d.currency)] : ['(absent)', null];
      }),
      d.evidence,
      moneyCell(d.difference, d.currency),
    ]),
    opts,
  );
}

function writeDaySheets(wb: Workbook, name: string, data: NightlyReportData, local: (d: Date) => Date): void {
  const opts = { moneyFormat };
  const count = (header: string): NightlyColumn => ({ header, kind: 'count' });
  writeNightlyTable(
    wb,
    name,
    'Matching',
    [
      { header: 'scope' },
      ...[
        'operations',
        'matched',
        'unmatched',
        'in all three sources',
        'not in register',
        'not in period',
        'no webhook',
        'with open discrepancy',
      ].map(count),
    ],
    data.matching.map((m) => [
      m.scope,
      m.operations,
      m.matched,
      m.unmatched,
      m.inAllThree,
      m.noRegister,
      m.noPeriod,
      m.noWebhook,
      m.withOpenDiscrepancy,
    ]),
    opts,
  );
  const sum = (k: 'opened' | 'resolved' | 'accepted' | 'open') => data.discrepancies.reduce((a, d) => a + d[k], 0);
  writeNightlyTable(
    wb,
    name,
    'Discrepancies',
    [
      { header: 'type' },
      { header: 'sub-merchant(s)', maxWidth: 40 },
      count('opened (day)'),
      count('resolved (day)'),
      count('accepted (day)'),
      count('open at the day’s end'),
    ],
    data.discrepancies.map((d) => [d.type, d.subMerchantId ?? '(none)', d.opened, d.resolved, d.accepted, d.open]),
    {
      ...opts,
      totals: data.discrepancies.length
        ? [['Total', '', sum('opened'), sum('resolved'), sum('accepted'), sum('open')]]
        : [],
    },
  );
  openDiscrepancySheets(wb, name, data, local);
}

const windowCount = counted('en-GB', { one: 'window', other: 'windows' });

function writeJobSheets(wb: Workbook, name: string, data: NightlyReportData, local: (d: Date) => Date): void {
  const opts = { moneyFormat };
  const at = (d: Date) => DateTime.fromJSDate(d, { zone: data.timezone }).toFormat('yyyy-MM-dd HH:mm');
  const facts: Array<readonly [string, string | number]> = [
    ['Business day', `${data.date} (${data.timezone})`],
    ['Open window', `${at(data.openWindow.from)} to ${at(data.openWindow.to)} (inside the grace period)`],
    ...data.facts,
  ];
  writeNightlyTable(
    wb,
    name,
    'Job',
    [
      { header: 'fact', maxWidth: 60 },
      { header: 'value', maxWidth: 70 },
    ],
    facts.map(([k, v]) => [k, v]),
    opts,
  );
  writeNightlyTable(
    wb,
    name,
    'Windows synced',
    [
      { header: 'pos_id' },
      { header: `from (${data.timezone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT },
      { header: `to (${data.timezone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT },
      { header: `completed (${data.timezone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT },
      { header: 'report_id' },
    ],
    data.windows.map((w) => [w.posId, local(w.from), local(w.to), local(w.completedAt), w.reportId]),
    { ...opts, totals: data.windows.length ? [[`Total: ${windowCount(data.windows.length)}`]] : [] },
  );
}

export async function writeNightlyReport(file: string, data: NightlyReportData): Promise<void> {
  const pending = openWorkbook(file);
  const local = createLocalTime(data.timezone);
  const name = nightlyDocumentName(data.date, data.timezone);
  try {
    const wb = pending.workbook;
    const issuedAt = nightlyIssuedAt(data);
    Object.assign(wb, {
      created: issuedAt,
      modified: issuedAt,
      title: name,
      subject: `Reconciliation of ${data.date}: sources, matching, discrepancies open at the day's end`,
    });
    if (data.asOfDay) writeOpenOnDaySheets(wb, name, data.asOfDay, issuedAt);
    writeSourcesSheet(wb, data, name);
    writeDaySheets(wb, name, data, local);
    if (data.cash) addCashSheet(wb, data.cash, name);
    writeJobSheets(wb, name, data, local);
    if (data.orders) writeOrdersSheets(wb, data.orders, name);
    if (data.decisions) writeDecisionsSheet(wb, name, data.decisions, data.timezone, local);
    await pending.commit();
  } catch (e) {
    await pending.abort();
    throw e;
  }
}
