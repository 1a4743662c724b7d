import type { Sql } from '../../db/connect';
import { type NightlyCell, type NightlyColumn, nightlyMoney, writeNightlyTable } from './table';
import { moneyFormat, type Workbook } from '../workbook/xlsx';

/**
 * The nightly report's Sources sheet: per source, the money of the successful operations by method (sales in;
 * refunds and chargebacks out, negative; an authorisation moves no money and is apart), a net that ties to what
 * the journal booked for the same operations, and the differences between the sources and from the journal.
 */

export type Source = 'register' | 'period' | 'webhook';
export const SOURCES: readonly Source[] = ['register', 'period', 'webhook'];
export type Scope = 'day' | 'open window';

/**
 * Money by method of the successful operations, minor units, signed as the money moves: sales in, refunds and
 * chargebacks out (negative); an authorisation only holds money on the card, so it is apart and not in `net`.
 */
export interface SourceTotals {
  readonly scope: Scope;
  readonly source: Source;
  readonly currency: string;
  readonly operations: number;
  readonly successful: number;
  /** purchase, capture, recurrent */
  readonly sales: bigint;
  /** negative */
  readonly refunds: bigint;
  /** disputes, negative */
  readonly chargebacks: bigint;
  /** sales + refunds + chargebacks: what the journal books for the source's operations */
  readonly net: bigint;
  /** authorised, no money moved (not in net) */
  readonly authorised: bigint;
  /** merchant fees of the successful operations as the source states them */
  readonly fees: bigint;
}

/** What the journal booked through the PSP's clearing account in a scope: sales less refunds and chargebacks. */
export interface JournalTotals {
  readonly scope: Scope;
  readonly currency: string;
  readonly net: bigint;
}

const SALE = `('purchase', 'capture', 'recurrent')`;

/** The sources' totals of the operations whose time falls in [from, to). */
export async function sourceTotals(sql: Sql, scope: Scope, from: Date, to: Date): Promise<SourceTotals[]> {
  const rows = await sql.unsafe<
    {
      source: Source;
      currency: string | null;
      operations: number;
      successful: number;
      sales: bigint;
      refunds: bigint;
      chargebacks: bigint;
      authorised: bigint;
      fees: bigint;
    }[]
  >(
    `
    select source, currency, count(*)::int as operations, count(*) filter (where status = 'success')::int as successful,
      coalesce(sum(amount) filter (where status = 'success' and method in ${SALE}), 0)::int8 as sales,
      coalesce(-sum(amount) filter (where status = 'success' and method = 'refund'), 0)::int8 as refunds,
      coalesce(-sum(amount) filter (where status = 'success' and method = 'dispute'), 0)::int8 as chargebacks,
      coalesce(sum(amount) filter (where status = 'success' and method = 'auth'), 0)::int8 as authorised,
      coalesce(sum(fee) filter (where status = 'success'), 0)::int8 as fees
    from (
      select 'register' as source, method, register_currency as currency, register_status as status, register_amount as amount, register_merchant_fee as fee
        from recon.operations where register_present and occurred_at >= $1 and occurred_at < $2
      union all
      select 'period', method, period_currency, period_status, period_amount, period_merchant_fee
        from recon.operations where period_present and occurred_at >= $1 and occurred_at < $2
      union all
      select 'webhook', method, webhook_currency, webhook_status, webhook_amount, webhook_fee
        from recon.operations where webhook_present and occurred_at >= $1 and occurred_at < $2
    ) x group by source, currency order by array_position(array['register', 'period', 'webhook'], source), currency`,
    [from, to] as never[],
  );
  return rows.map((r) => ({
    scope,
    source: r.source,
    currency: r.currency ?? '',
    operations: r.operations,
    successful: r.successful,
    sales: r.sales,
    refunds: r.refunds,
    chargebacks: r.chargebacks,
    net: r.sales + r.refunds + r.chargebacks,
    authorised: r.authorised,
    fees: r.fees,
  }));
}

/**
 * What the journal booked through the PSP's clearing account for entries dated in [from, to) (sales less
 * refunds and chargebacks), or null when the journal is not built.
 */
export async function journalTotals(sql: Sql, scope: Scope, from: Date, to: Date): Promise<JournalTotals[] | null> {
  const [view] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.views where table_schema = 'recon' and table_name = 'journal_lines'`;
  if (!view?.n) return null;
  const rows = await sql<{ currency: string; net: bigint }[]>`
    select currency, coalesce(sum(amount), 0)::int8 as net from recon.journal_lines
    where account = 'psp_clearing' and booked_at >= ${from} and booked_at < ${to}
    group by currency order by currency`;
  return rows.map((r) => ({ scope, currency: r.currency, net: r.net }));
}

const COLUMNS: readonly NightlyColumn[] = [
  { header: 'scope' },
  { header: 'source' },
  { header: 'currency' },
  { header: 'operations', kind: 'count' },
  { header: 'successful', kind: 'count' },
  { header: 'sales', kind: 'money' },
  { header: 'refunds', kind: 'money' },
  { header: 'chargebacks', kind: 'money' },
  { header: 'net (sales + refunds + chargebacks)', kind: 'money' },
  { header: 'authorised (moves no money)', kind: 'money' },
  { header: 'merchant fees (successful)', kind: 'money' },
  { header: 'net − register net', kind: 'money' },
  { header: 'net − journal', kind: 'money' },
];

export function writeSourcesSheet(
  wb: Workbook,
  data: { readonly sources: readonly SourceTotals[]; readonly journal?: readonly JournalTotals[] | null },
  documentName = 'Nightly reconciliation report',
): void {
  const key = (scope: Scope, currency: string) => `${scope}\u0000${currency}`;
  const registerNet = new Map(
    data.sources.filter((s) => s.source === 'register').map((s) => [key(s.scope, s.currency), s.net]),
  );
  const journal = data.journal ? new Map(data.journal.map((j) => [key(j.scope, j.currency), j.net])) : null;
  const rows: NightlyCell[][] = [];
  for (const s of data.sources) {
    const money = (v: bigint): NightlyCell => nightlyMoney(v, s.currency);
    const minus = (a: bigint, b: bigint | undefined) => (b === undefined ? null : money(a - b));
    const fromJournal = journal ? minus(s.net, journal.get(key(s.scope, s.currency)) ?? 0n) : '(journal not built)';
    rows.push([
      s.scope,
      s.source,
      s.currency,
      s.operations,
      s.successful,
      ...[s.sales, s.refunds, s.chargebacks, s.net, s.authorised, s.fees].map(money),
      minus(s.net, registerNet.get(key(s.scope, s.currency))),
      fromJournal,
    ]);
  }
  for (const j of data.journal ?? [])
    rows.push([j.scope, 'journal', j.currency, null, null, null, null, null, nightlyMoney(j.net, j.currency)]);
  const totals = (['day', 'open window'] as const).map((scope): NightlyCell[] => {
    const xs = data.sources.filter((s) => s.scope === scope && s.source === 'register');
    return [
      `Total ${scope} (register)`,
      '',
      '',
      xs.reduce((a, s) => a + s.operations, 0),
      xs.reduce((a, s) => a + s.successful, 0),
    ];
  });
  writeNightlyTable(wb, documentName, 'Sources', COLUMNS, rows, { totals, moneyFormat });
}
