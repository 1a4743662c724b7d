import type { Sql } from '../../db/connect';
import {
  contentWidths,
  type CellKind,
  type NightlyCell,
  type NightlyColumn,
  nightlyMoney,
  openNightlySheet,
  spills,
  writeCells,
} from './table';
import { DATE_FORMAT, excelDay, moneyFormat, type Workbook } from '../workbook/xlsx';

/**
 * The nightly report's Cash sheet (docs/outputs.md): what the PSP owed against what reached the
 * settlement accounts, by settlement day and currency; the bank lines that pay nothing; and per account
 * the bridge auditors expect: the bank's opening balance plus what the journal booked into the account
 * plus the bank lines not (yet) in the journal equals the bank's closing balance. Read from the settlement
 * and journal views (recon.settlements_expected, settlement_matches, settlement_bank_lines,
 * settlement_statements, journal_lines).
 */

export interface CashDay {
  readonly dueOn: string;
  readonly currency: string;
  readonly activityFrom: string;
  readonly activityTo: string;
  readonly expected: bigint;
  readonly status: string;
  readonly receivedOn: string | null;
  readonly bankRef: string | null;
  /** the credit's amount, on the first due day it pays (a credit may pay several) */
  readonly received: bigint | null;
  /** on the same row: what the credit paid less than the days it pays (bank fee or shortfall) */
  readonly difference: bigint | null;
}

export interface UnmatchedBankLine {
  readonly accountId: string;
  readonly currency: string;
  readonly bookedOn: string;
  readonly direction: string;
  readonly amount: bigint;
  readonly bankRef: string | null;
  readonly counterparty: string | null;
  readonly remittance: string | null;
}

export interface AccountBridge {
  readonly accountId: string;
  readonly currency: string;
  readonly firstStatementOpening: bigint;
  readonly bookedInJournal: bigint;
  /** credits − debits on the bank's statements that the journal has not booked */
  readonly notInJournal: bigint;
  readonly closingDate: string;
  readonly bankClosing: bigint;
  /** opening + booked + not in journal − bank closing: 0 when the bridge holds */
  readonly difference: bigint;
}

export interface CashSheetData {
  readonly days: readonly CashDay[];
  readonly unmatched: readonly UnmatchedBankLine[];
  readonly bridges: readonly AccountBridge[];
  /** per currency: owed by the PSP and not received (in transit, missing, shortfalls) */
  readonly outstanding: ReadonlyArray<{ readonly currency: string; readonly amount: bigint }>;
}

const big = (v: unknown) => BigInt((v as string | bigint | null) ?? 0);

/**
 * null when the settlement projection has not been built (no Cash sheet then). Everything is as at the end
 * of `date`: the days due by then, and each account's bridge from the statements closed by then (the
 * journal and the bank lines up to the last closing day), so a past day's report shows that day's balances.
 * `timezone`: the business zone the journal books bank lines in (their booking day's midnight).
 */
export async function cashSheetData(
  sql: Sql,
  opts: { date: string; timezone?: string },
): Promise<CashSheetData | null> {
  const zone = opts.timezone ?? 'UTC';
  const [v] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.views where table_schema = 'recon'
      and table_name in ('settlements_expected', 'settlement_matches', 'settlement_bank_lines', 'settlement_statements', 'journal_lines')`;
  if ((v?.n ?? 0) < 5) return null;
  // due up to the report's day: the last 31 days, and anything older still not settled in full
  const days = await sql<Record<string, unknown>[]>`
    select e.due_on, e.currency, e.activity_from, e.activity_to, e.amount, e.status, e.received_on, m.bank_ref,
      case when e.due_on = m.due_on[1] then m.received end as received,
      case when e.due_on = m.due_on[1] then m.expected - m.received end as difference
    from recon.settlements_expected e left join recon.settlement_matches m on m.credit_event_id = e.credit_event_id
    where e.due_on <= ${opts.date}
      and (e.due_on > (${opts.date}::date - 31)::text or e.status in ('missing', 'short', 'in_transit'))
    order by e.currency, e.due_on`;
  // text by code unit (collate "C"), whatever the server's collation: the rows' order, and which of two statements
  // of a day gives the bridge's opening or closing balance
  const unmatched = await sql<Record<string, unknown>[]>`
    select account_id, currency, booking_date, direction, amount, bank_ref, counterparty_name, remittance
    from recon.settlement_bank_lines where not matched and booking_date <= ${opts.date}
    order by account_id collate "C", booking_date, event_id`;
  const bridges = await sql<Record<string, unknown>[]>`
    with s as (select account_id, currency, min(opening_date) as first_on, max(closing_date) as last_on
               from recon.settlement_statements where closing_date <= ${opts.date} group by account_id, currency)
    select s.account_id, s.currency, s.last_on,
      (select opening_balance from recon.settlement_statements x where x.account_id = s.account_id and x.opening_date = s.first_on
        order by statement_id collate "C" limit 1) as opening,
      (select closing_balance from recon.settlement_statements x where x.account_id = s.account_id and x.closing_date = s.last_on
        order by statement_id collate "C" desc limit 1) as closing,
      coalesce((select sum(amount) from recon.journal_lines l where l.account = 'bank:' || s.account_id
        and l.booked_at < ((s.last_on::date + 1)::timestamp at time zone ${zone})), 0) as booked,
      coalesce((select sum(case when direction = 'credit' then amount else -amount end) from recon.settlement_bank_lines b
        where b.account_id = s.account_id and not b.matched and b.booking_date <= s.last_on), 0) as not_booked
    from s order by s.account_id collate "C"`;
  // each part on its own: a currency with a shortfall and nothing missing or in transit still owes the shortfall
  const outstanding = await sql<{ currency: string; amount: string }[]>`
    select e.currency, (coalesce(sum(e.amount) filter (where e.status in ('missing', 'in_transit') and e.due_on <= ${opts.date}), 0)
      + coalesce((select sum(m.shortfall) from recon.settlement_matches m
          where m.currency = e.currency and m.due_on[1] <= ${opts.date}), 0))::text as amount
    from recon.settlements_expected e group by e.currency order by e.currency`;
  return {
    days: days.map(cashDay),
    unmatched: unmatched.map(unmatchedLine),
    bridges: [...bridges, ...(await payoutBridges(sql, opts.date, zone))].map(accountBridge),
    outstanding: outstanding.map((o) => ({ currency: o.currency, amount: BigInt(o.amount ?? '0') })),
  };
}

function cashDay(r: Record<string, unknown>): CashDay {
  return {
    dueOn: r['due_on'] as string,
    currency: r['currency'] as string,
    activityFrom: r['activity_from'] as string,
    activityTo: r['activity_to'] as string,
    expected: big(r['amount']),
    status: r['status'] as string,
    receivedOn: (r['received_on'] as string | null) ?? null,
    bankRef: (r['bank_ref'] as string | null) ?? null,
    received: r['received'] === null ? null : big(r['received']),
    difference: r['difference'] === null ? null : big(r['difference']),
  };
}

function unmatchedLine(r: Record<string, unknown>): UnmatchedBankLine {
  return {
    accountId: r['account_id'] as string,
    currency: r['currency'] as string,
    bookedOn: r['booking_date'] as string,
    direction: r['direction'] as string,
    amount: big(r['amount']),
    bankRef: (r['bank_ref'] as string | null) ?? null,
    counterparty: (r['counterparty_name'] as string | null) ?? null,
    remittance: (r['remittance'] as string | null) ?? null,
  };
}

function accountBridge(r: Record<string, unknown>): AccountBridge {
  const opening = big(r['opening']);
  const booked = big(r['booked']);
  const notBooked = big(r['not_booked']);
  const closing = big(r['closing']);
  return {
    accountId: r['account_id'] as string,
    currency: r['currency'] as string,
    firstStatementOpening: opening,
    bookedInJournal: booked,
    notInJournal: notBooked,
    closingDate: r['last_on'] as string,
    bankClosing: closing,
    difference: opening + booked + notBooked - closing,
  };
}

/**
 * The payouts accounts' bridges: the journal books the lines the payout matching tied to a statement
 * (src/ledger/payout-bookings.ts); a debit that pays no statement and a return of no known payout are not in it.
 */
async function payoutBridges(sql: Sql, date: string, zone: string): Promise<Record<string, unknown>[]> {
  const [v] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.views where table_schema = 'recon'
      and table_name in ('bank_statements', 'payout_lines')`;
  if ((v?.n ?? 0) < 2) return [];
  return sql<Record<string, unknown>[]>`
    with s as (select b.account_id, b.currency, min(b.opening_date) as first_on, max(b.closing_date) as last_on
               from recon.bank_statements b where b.account_id in (select account_id from recon.payout_lines)
                 and b.closing_date <= ${date}
               group by b.account_id, b.currency)
    select s.account_id, s.currency, s.last_on,
      (select opening_balance from recon.bank_statements x where x.account_id = s.account_id and x.opening_date = s.first_on
        order by statement_id collate "C" limit 1) as opening,
      (select closing_balance from recon.bank_statements x where x.account_id = s.account_id and x.closing_date = s.last_on
        order by statement_id collate "C" desc limit 1) as closing,
      coalesce((select sum(amount) from recon.journal_lines l where l.account = 'bank:' || s.account_id
        and l.booked_at < ((s.last_on::date + 1)::timestamp at time zone ${zone})), 0) as booked,
      coalesce((select sum(case when direction = 'credit' then amount else -amount end) from recon.payout_lines p
        where p.account_id = s.account_id and p.booking_date <= s.last_on
          and (p.role is null or p.role = 'unexpected' or p.reference is null)), 0) as not_booked
    from s order by s.account_id collate "C"`;
}

const STATUS_TEXT: Record<string, string> = {
  paid: 'received',
  paid_late: 'received late',
  short: 'received short',
  missing: 'missing',
  in_transit: 'in transit',
};

const money = (v: bigint | null, currency: string): NightlyCell => (v === null ? null : nightlyMoney(v, currency));

/** A row of the tables below the first; `head`: a header row, with the kinds of its own table's columns. */
interface BelowRow {
  readonly cells: NightlyCell[];
  readonly head?: ReadonlyArray<CellKind | undefined>;
}

/** The tables below the first: a title (runs over the empty cells beside it), a bold header row, the rows. */
function tablesBelow(data: CashSheetData): BelowRow[] {
  const below: BelowRow[] = [];
  for (const o of data.outstanding)
    below.push({
      cells: [`Owed by the PSP, not received (${o.currency})`, null, null, null, money(o.amount, o.currency)],
    });
  below.push({ cells: [] }, { cells: ['Bank lines that pay no settlement'] });
  below.push({
    cells: ['booked on', 'currency', 'account', 'direction', 'amount', 'bank reference', 'counterparty', 'remittance'],
    head: ['date', 'text', 'text', 'text', 'money', 'text', 'text', 'text'],
  });
  for (const u of data.unmatched)
    below.push({
      cells: [
        excelDay(u.bookedOn),
        u.currency,
        u.accountId,
        u.direction,
        money(u.amount, u.currency),
        u.bankRef,
        u.counterparty,
        u.remittance,
      ],
    });
  if (data.unmatched.length === 0) below.push({ cells: ['(none)'] });
  below.push({ cells: [] }, { cells: ['Bank bridge per account'] });
  below.push({
    cells: [
      'account',
      'currency',
      'opening balance (first statement)',
      'booked in the journal (+)',
      'bank lines not in the journal (+)',
      'computed (=)',
      'bank closing balance',
      'on',
      'difference',
    ],
    head: ['text', 'text', 'money', 'money', 'money', 'money', 'money', 'date', 'money'],
  });
  for (const b of data.bridges)
    below.push({
      cells: [
        b.accountId,
        b.currency,
        money(b.firstStatementOpening, b.currency),
        money(b.bookedInJournal, b.currency),
        money(b.notInJournal, b.currency),
        money(b.firstStatementOpening + b.bookedInJournal + b.notInJournal, b.currency),
        money(b.bankClosing, b.currency),
        excelDay(b.closingDate),
        money(b.difference, b.currency),
      ],
    });
  if (data.bridges.length === 0) below.push({ cells: ['(no statement of a settlement or payouts account imported)'] });
  // widths from every table's cells; the headers below wrap into them, titles run over empty cells
  return below;
}

/** Writes the Cash sheet: three tables one under the other, each with its own header row. */
export function addCashSheet(wb: Workbook, data: CashSheetData, documentName = 'Nightly reconciliation report'): void {
  const columns: NightlyColumn[] = [
    { header: 'due on', kind: 'date', numFmt: DATE_FORMAT },
    { header: 'currency' },
    { header: 'for activity from', kind: 'date' },
    { header: 'to', kind: 'date' },
    { header: 'expected', kind: 'money' },
    { header: 'status' },
    { header: 'received on', kind: 'date' },
    { header: 'bank reference' },
    { header: 'received', kind: 'money' },
    { header: 'expected − received', kind: 'money' },
  ];
  const days: NightlyCell[][] = data.days.map((d) => [
    excelDay(d.dueOn),
    d.currency,
    excelDay(d.activityFrom),
    excelDay(d.activityTo),
    money(d.expected, d.currency),
    STATUS_TEXT[d.status] ?? d.status,
    d.receivedOn ? excelDay(d.receivedOn) : null,
    d.bankRef,
    money(d.received, d.currency),
    money(d.difference, d.currency),
  ]);
  const below = tablesBelow(data);
  // a header row below wraps at its words: each column keeps room for the longest
  const longestWord = (c: NightlyCell) => (typeof c === 'string' ? Math.max(...c.split(' ').map((w) => w.length)) : 0);
  const sized = [
    ...days,
    ...below.map((r) =>
      r.head
        ? r.cells.map((c) => 'x'.repeat(longestWord(c)))
        : r.cells.map((c, i) => (spills(r.cells, i, columns.length) ? null : c)),
    ),
  ];
  const t = openNightlySheet(wb, documentName, 'Cash', columns, contentWidths(columns, sized));
  const opts = { moneyFormat, dateFormat: DATE_FORMAT };
  if (days.length === 0) writeCells(t, ['none']);
  for (const r of days) writeCells(t, r, opts);
  const last = String.fromCharCode(64 + columns.length);
  t.sheet.autoFilter = `A1:${last}${Math.max(1, t.rows)}`;
  t.sheet.addRow([]).commit();
  for (const r of below)
    writeCells(t, r.cells, { ...opts, ...(r.head ? { bold: true, wrap: true, kinds: r.head } : {}) });
  t.sheet.commit();
}
