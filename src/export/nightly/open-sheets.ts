import { DateTime } from 'luxon';
import { moneyText } from '../../reconciliation/discrepancy-summary';
import type { OpenItem, OpenOnDay } from './open';
import { type NightlyCell, nightlyMoney, writeNightlyTable } from './table';
import { moneyFormat, type Workbook } from '../workbook/xlsx';

/**
 * The auditors' sheets of the nightly report, all as at the end of its business day: Summary (the oldest
 * open item among them), Ageing, In doubt (per currency and sub-merchant) and Month to date. Money is per
 * currency on its own row, summed in bigint before it is shown.
 */

const money = (amount: bigint, currency: string): NightlyCell => (currency ? nightlyMoney(amount, currency) : null);

const NO_CURRENCY = '(no amount)';

function oldestText(o: OpenItem, zone: string): string {
  const at = DateTime.fromJSDate(o.since ?? o.detectedAt, { zone }).toFormat('yyyy-MM-dd HH:mm');
  const amount = o.amount !== null && o.currency ? `, ${moneyText(o.amount, o.currency)} in doubt` : '';
  return `${o.type}, since ${at}, ${o.ageDays} day${o.ageDays === 1 ? '' : 's'} open${amount}; id ${o.id}`;
}

const opts = { moneyFormat };

export function writeOpenOnDaySheets(wb: Workbook, documentName: string, v: OpenOnDay, issuedAt: Date): void {
  writeSummary(wb, documentName, v, issuedAt);
  writeAgeing(wb, documentName, v);
  writeInDoubt(wb, documentName, v);
  writeMonthToDate(wb, documentName, v);
}

function writeSummary(wb: Workbook, documentName: string, v: OpenOnDay, issuedAt: Date): void {
  const zone = v.timezone;
  const stamp = (d: Date) => DateTime.fromJSDate(d, { zone }).toFormat('yyyy-MM-dd HH:mm');
  const summary: NightlyCell[][] = [
    ['Business day', `${v.date} (${zone})`],
    ['Discrepancies stated as at', `${stamp(v.asAt)} (${zone})`],
    ['Issue time', `${stamp(issuedAt)} (${zone}), when this report was written`],
    ['Open discrepancies', String(v.open.length)],
    ['Oldest open discrepancy', v.oldest ? oldestText(v.oldest, zone) : 'none'],
    ['Month to date', `from ${stamp(v.monthFrom)} to ${stamp(v.asAt)} (${zone})`],
  ];
  writeNightlyTable(
    wb,
    documentName,
    'Summary',
    [{ header: 'fact' }, { header: 'value', maxWidth: 64 }],
    summary,
    opts,
  );
}

function writeAgeing(wb: Workbook, documentName: string, v: OpenOnDay): void {
  writeNightlyTable(
    wb,
    documentName,
    'Ageing',
    [
      { header: 'days open' },
      { header: 'currency' },
      { header: 'open discrepancies', kind: 'count' },
      { header: 'amount in doubt', kind: 'money' },
    ],
    v.ageing.map((r) => [r.bucket, r.currency || (r.count ? NO_CURRENCY : ''), r.count, money(r.amount, r.currency)]),
    opts,
  );
}

function writeInDoubt(wb: Workbook, documentName: string, v: OpenOnDay): void {
  // one sub-merchant a line: its name, and beside it its id
  const inDoubtRows = v.inDoubt.map((r): NightlyCell[] => [
    r.currency || NO_CURRENCY,
    r.subMerchantIds.length ? r.names.map((n) => n || '(not in the directory)').join('\n') : '(none)',
    r.subMerchantIds.join('\n'),
    r.count,
    money(r.amount, r.currency),
  ]);
  const perCurrency = new Map<string, { count: number; amount: bigint }>();
  for (const r of v.inDoubt) {
    const t = perCurrency.get(r.currency) ?? { count: 0, amount: 0n };
    perCurrency.set(r.currency, { count: t.count + r.count, amount: t.amount + r.amount });
  }
  writeNightlyTable(
    wb,
    documentName,
    'In doubt',
    [
      { header: 'currency' },
      { header: 'sub-merchant(s)', maxWidth: 40 },
      { header: 'sub-merchant id(s)', maxWidth: 40 },
      { header: 'open discrepancies', kind: 'count' },
      { header: 'amount in doubt', kind: 'money' },
    ],
    inDoubtRows,
    {
      ...opts,
      totals: [...perCurrency].map(([c, t]) => [`Total ${c || NO_CURRENCY}`, '', '', t.count, money(t.amount, c)]),
    },
  );
}

function writeMonthToDate(wb: Workbook, documentName: string, v: OpenOnDay): void {
  writeNightlyTable(
    wb,
    documentName,
    'Month to date',
    [
      { header: 'currency' },
      { header: 'detected', kind: 'count' },
      { header: 'amount detected', kind: 'money' },
      { header: 'resolved', kind: 'count' },
      { header: 'amount resolved', kind: 'money' },
      { header: 'accepted', kind: 'count' },
      { header: 'amount accepted', kind: 'money' },
      { header: 'open at the day’s end', kind: 'count' },
      { header: 'amount open', kind: 'money' },
    ],
    v.monthToDate.map((r) => [
      r.currency || NO_CURRENCY,
      r.detected,
      money(r.detectedAmount, r.currency),
      r.resolved,
      money(r.resolvedAmount, r.currency),
      r.accepted,
      money(r.acceptedAmount, r.currency),
      r.open,
      money(r.openAmount, r.currency),
    ]),
    opts,
  );
}
