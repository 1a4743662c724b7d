import path from 'node:path';
import { DateTime } from 'luxon';
import type { ExceptionPolicy } from '../../exceptions/severity';
import { decisionRows } from './decisions-sheet';
import type { Sql } from '../../db/connect';
import { allDiscrepancies, subMerchantsOf } from '../../reconciliation/discrepancy-queries';
import { amountInDoubt, moneyDifference, whatDiffers } from '../../reconciliation/discrepancy-summary';
import type { EventStore } from '../../store/types';
import { cashSheetData } from './cash-sheet';
import { ExportError } from '../errors';
import { acceptedAsOfSql, aroseWithinSql, openAtSql, openOnDayFrom, resolvedAsOfSql } from './open';
import { journalTotals, type JournalTotals, type Scope, sourceTotals, type SourceTotals } from './sources';
import type { MatchingTotals, NightlyReportData, OpenDiscrepancy, SourceValue, SyncedWindow } from './types';
import { quarantineFacts } from './quarantine';
import { writeNightlyReport } from './workbook';
import { ordersReportData } from './orders-sheet';

/**
 * The nightly reconciliation report: one workbook per business day, read from the reconciliation views
 * (recon.operations, recon.discrepancies, recon.sync_windows) and the event store. Like statements, a plain
 * data layer (`NightlyReportData`) sits between the queries and the writer.
 */

export { writeNightlyReport } from './workbook';
export type {
  DiscrepancyCount,
  MatchingTotals,
  NightlyReportData,
  OpenDiscrepancy,
  SourceValue,
  SyncedWindow,
} from './types';
export { SOURCES, type JournalTotals, type Scope, type Source, type SourceTotals } from './sources';

export const nightlyReportFileName = (date: string) => `nightly-${date}.xlsx`;

/** The business day [from, to) and the open window: operations still inside the grace period at the day's end. */
export function reportPeriods(
  date: string,
  timezone: string,
  graceHours: number,
): Pick<NightlyReportData, 'day' | 'openWindow'> {
  const start = DateTime.fromISO(date, { zone: timezone });
  if (!start.isValid || !/^\d{4}-\d{2}-\d{2}$/.test(date))
    throw new RangeError(`not a day: ${JSON.stringify(date)} (expected YYYY-MM-DD)`);
  const to = start.plus({ days: 1 }).toJSDate();
  return {
    day: { from: start.toJSDate(), to },
    openWindow: { from: new Date(to.getTime() - graceHours * 3_600_000), to },
  };
}

const n = (v: unknown) => Number(v ?? 0);

type Periods = ReturnType<typeof reportPeriods>;

/** The report reads the reconciliation views: refused, with what to run, before they are built. */
async function checkViewsBuilt(sql: Sql): Promise<void> {
  const [views] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.views where table_schema = 'recon' and table_name in ('operations', 'discrepancies', 'sync_windows')`;
  if ((views?.n ?? 0) < 3)
    throw new ExportError(
      'EXPORT_NO_POSITION',
      'the reconciliation views are not built yet: run `recon project` first',
    );
}

/** How the operations of one scope matched across the three sources. */
async function matchingTotals(
  sql: Sql,
  scope: Scope,
  { from, to }: { from: Date; to: Date },
  dayEnd: Date,
): Promise<MatchingTotals> {
  const [m] = await sql<Record<string, number>[]>`
      select count(*)::int as operations,
        count(*) filter (where all3 and not disputed)::int as matched,
        count(*) filter (where all3)::int as in_all_three,
        count(*) filter (where not coalesce(register_present, false))::int as no_register,
        count(*) filter (where not coalesce(period_present, false))::int as no_period,
        count(*) filter (where not coalesce(webhook_present, false))::int as no_webhook,
        count(*) filter (where disputed)::int as with_open
      from (
        select o.*, coalesce(o.register_present and o.period_present and o.webhook_present, false) as all3,
          exists (select 1 from recon.discrepancies d where d.operation_key = o.operation_key
            and ${openAtSql(sql, dayEnd)}) as disputed
        from recon.operations o where o.occurred_at >= ${from} and o.occurred_at < ${to}
      ) x`;
  return {
    scope,
    operations: n(m?.operations),
    matched: n(m?.matched),
    unmatched: n(m?.operations) - n(m?.matched),
    inAllThree: n(m?.in_all_three),
    noRegister: n(m?.no_register),
    noPeriod: n(m?.no_period),
    noWebhook: n(m?.no_webhook),
    withOpenDiscrepancy: n(m?.with_open),
  };
}

/** The Sources, Journal and Matching sheets' figures, for the day and for the open window. */
async function scopeTotals(sql: Sql, periods: Periods) {
  const scopes: Array<[Scope, { from: Date; to: Date }]> = [
    ['day', periods.day],
    ['open window', periods.openWindow],
  ];
  const sources: SourceTotals[] = [];
  const journal: JournalTotals[] = [];
  let journalBuilt = true;
  const matching: MatchingTotals[] = [];
  for (const [scope, { from, to }] of scopes) {
    sources.push(...(await sourceTotals(sql, scope, from, to)));
    const booked = await journalTotals(sql, scope, from, to);
    if (booked) journal.push(...booked);
    else journalBuilt = false;
    matching.push(await matchingTotals(sql, scope, { from, to }, periods.day.to));
  }
  return { sources, journal: journalBuilt ? journal : null, matching };
}

/** Discrepancies by type and sub-merchant: opened, resolved and accepted during the day, open at its end. */
async function discrepancyCounts(sql: Sql, { from, to }: { from: Date; to: Date }) {
  // open at the day's end from the times, not the status now: a past day shows what was open then, from
  // when each difference arose (nightly-open.ts)
  const openAtEnd = openAtSql(sql, to);
  const opened = aroseWithinSql(sql, from, to);
  // resolved and accepted as they stood at the day's end: one found again or revoked since still counts on the day
  const resolved = resolvedAsOfSql(sql, to);
  const resolvedWithin = sql`(${resolved}) >= ${from} and (${resolved}) < ${to}`;
  const accepted = acceptedAsOfSql(sql, to);
  const acceptedWithin = sql`(${accepted}) >= ${from} and (${accepted}) < ${to}`;
  return (
    await sql<
      {
        type: string;
        sub_merchant_id: string | null;
        opened: number;
        resolved: number;
        accepted: number;
        open: number;
      }[]
    >`
    -- by code unit, whatever the server's collation (a server given by DATABASE_URL usually has a locale's)
    select type collate "C" as type,
      coalesce(nullif(array_to_string(sub_merchant_ids, ', '), ''), sub_merchant_id) collate "C" as sub_merchant_id,
      count(*) filter (where ${opened})::int as opened,
      count(*) filter (where ${resolvedWithin})::int as resolved,
      count(*) filter (where ${acceptedWithin})::int as accepted,
      count(*) filter (where ${openAtEnd})::int as open
    from ${sql.unsafe(await allDiscrepancies(sql))} group by 1, 2
    having count(*) filter (where ${openAtEnd} or (${opened}) or (${resolvedWithin})
      or (${acceptedWithin})) > 0
    order by 1, 2 nulls first`
  ).map((r) => ({
    type: r.type,
    subMerchantId: r.sub_merchant_id,
    opened: r.opened,
    resolved: r.resolved,
    accepted: r.accepted,
    open: r.open,
  }));
}

interface OpenRow {
  id: string;
  type: string;
  detected_at: Date | null;
  occurred_at: Date | null;
  pos_id: string | null;
  order_id: string | null;
  payment_id: string | null;
  method: string | null;
  sub_merchant_id: string | null;
  sub_merchant_ids: string[] | null;
  receiver_name: string | null;
  currency: string | null;
  values: Record<string, unknown> | null;
  evidence: string[] | null;
}

const sourceValue = (v: unknown): SourceValue | null => {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const amount = typeof o.amount === 'string' && /^-?\d+$/.test(o.amount) ? BigInt(o.amount) : null;
  return {
    status: typeof o.status === 'string' ? o.status : null,
    amount,
    currency: typeof o.currency === 'string' ? o.currency : null,
  };
};

function openDiscrepancy(r: OpenRow, ages: ReadonlyMap<string, number | null>): OpenDiscrepancy {
  return {
    id: r.id,
    type: r.type,
    detectedAt: r.detected_at,
    occurredAt: r.occurred_at,
    posId: r.pos_id,
    orderId: r.order_id,
    paymentId: r.payment_id,
    method: r.method,
    subMerchantId: r.sub_merchant_id,
    subMerchantIds: subMerchantsOf({
      sub_merchant_id: r.sub_merchant_id,
      sub_merchant_ids: r.sub_merchant_ids ?? [],
    }),
    receiverName: r.receiver_name,
    currency: r.currency,
    values: {
      register: sourceValue(r.values?.register),
      period: sourceValue(r.values?.period),
      webhook: sourceValue(r.values?.webhook),
    },
    evidence: r.evidence?.length ?? 0,
    whatDiffers: whatDiffers({ ...r, values: r.values ?? {} }),
    difference: moneyDifference({ ...r, values: r.values ?? {} }),
    amountInDoubt: amountInDoubt({ ...r, values: r.values ?? {} }),
    ageDays: ages.get(r.id) ?? null,
  };
}

/** Every discrepancy open at the day's end, with its age as the day saw it. */
async function openDiscrepancies(
  sql: Sql,
  dayEnd: Date,
  ages: ReadonlyMap<string, number | null>,
): Promise<OpenDiscrepancy[]> {
  const openAtEnd = openAtSql(sql, dayEnd);
  const openRows = await sql<OpenRow[]>`
    select id, type, detected_at, occurred_at, pos_id, order_id, payment_id, method, sub_merchant_id, sub_merchant_ids, receiver_name, currency, "values", evidence
    from ${sql.unsafe(await allDiscrepancies(sql))} where ${openAtEnd} order by type collate "C", occurred_at nulls first, id`;
  return openRows.map((r) => openDiscrepancy(r, ages));
}

/** Windows synced for the day: completed during it or during the night after it (the nightly run). */
async function syncedWindows(sql: Sql, { from, to }: { from: Date; to: Date }): Promise<SyncedWindow[]> {
  const windowsTo = new Date(to.getTime() + 86_400_000);
  return (
    await sql<{ pos_id: string; window_from: Date; window_to: Date; completed_at: Date; report_id: string }[]>`
    select pos_id, window_from, window_to, completed_at, report_id from recon.sync_windows
    where completed_at >= ${from} and completed_at < ${windowsTo} order by completed_at, pos_id collate "C"`
  ).map((w) => ({
    posId: w.pos_id,
    from: w.window_from,
    to: w.window_to,
    completedAt: w.completed_at,
    reportId: w.report_id,
  }));
}

/** The Facts sheet: what was received and rejected during the day, the windows synced, quarantine. */
async function reportFacts(
  deps: { sql: Sql; store: EventStore },
  { from, to }: { from: Date; to: Date },
  windows: readonly SyncedWindow[],
): Promise<Array<readonly [string, string | number]>> {
  const { sql } = deps;
  const facts: Array<readonly [string, string | number]> = [];
  if (deps.store.backend === 'postgres') {
    // Counted where they are stored. Webhooks refused before parsing (bad signature, 413, allow-list)
    // are never stored: the receiver's metrics count those.
    const [c] = await sql<
      { webhooks: number; rejected_webhook: number; rejected_register: number; rejected_period: number }[]
    >`
      select count(*) filter (where type = 'WebhookReceived')::int as webhooks,
        count(*) filter (where type = 'SourceRecordRejected' and data->>'source' = 'webhook')::int as rejected_webhook,
        count(*) filter (where type = 'SourceRecordRejected' and data->>'source' = 'register')::int as rejected_register,
        count(*) filter (where type = 'SourceRecordRejected' and data->>'source' = 'period')::int as rejected_period
      from es_events where recorded_at >= ${from} and recorded_at < ${to} and type in ('WebhookReceived', 'SourceRecordRejected')`;
    facts.push(
      ['Webhooks received (stored) during the day', n(c?.webhooks)],
      ['Webhooks rejected after a valid signature (invalid payload)', n(c?.rejected_webhook)],
      ['Register records rejected', n(c?.rejected_register)],
      ['Period records rejected', n(c?.rejected_period)],
    );
  } else {
    facts.push(['Webhooks received / rejected', 'n/a with the EventStoreDB backend (see the receiver metrics)']);
  }
  facts.push(
    ['Windows synced', windows.length],
    ['Register report ids', [...new Set(windows.map((w) => w.reportId))].join(', ') || '(none)'],
  );
  facts.push(...(await quarantineFacts(sql)));
  return facts;
}

/** Reads the report's data. Needs the reconciliation projection (recon.* views) to be built. */
export async function nightlyReportData(
  deps: { sql: Sql; store: EventStore },
  opts: {
    date: string;
    timezone: string;
    graceHours: number;
    facts?: ReadonlyArray<readonly [string, string | number]>;
    windows?: readonly SyncedWindow[];
    /** the writing time, the report's issue time (default: now) */
    now?: Date;
    /** severity and due dates of the Decisions sheet (RECON_CONFIG's `exceptions`; default: the defaults) */
    policy?: ExceptionPolicy;
  },
): Promise<NightlyReportData> {
  const { sql } = deps;
  const periods = reportPeriods(opts.date, opts.timezone, opts.graceHours);
  await checkViewsBuilt(sql);
  const totals = await scopeTotals(sql, periods);
  const discrepancies = await discrepancyCounts(sql, periods.day);
  const asOfDay = await openOnDayFrom(sql, opts.date, opts.timezone);
  const open = await openDiscrepancies(sql, periods.day.to, new Map(asOfDay.open.map((o) => [o.id, o.ageDays])));
  const windows = opts.windows ?? (await syncedWindows(sql, periods.day));
  const facts = [...(await reportFacts(deps, periods.day, windows)), ...(opts.facts ?? [])];
  return {
    date: opts.date,
    timezone: opts.timezone,
    writtenAt: opts.now ?? new Date(),
    ...periods,
    sources: totals.sources,
    journal: totals.journal,
    matching: totals.matching,
    discrepancies,
    open,
    windows,
    facts,
    cash: await cashSheetData(sql, { date: opts.date, timezone: opts.timezone }),
    orders: await ordersReportData(deps.sql, { ...periods.day, timezone: opts.timezone }),
    asOfDay,
    decisions: await decisionRows(sql, periods.day.to, opts.policy),
  };
}

/** Reads the data and writes `DIR/nightly-YYYY-MM-DD.xlsx`; returns the file and the data written. */
export async function writeNightlyReportFor(
  deps: { sql: Sql; store: EventStore },
  opts: {
    date: string;
    timezone: string;
    graceHours: number;
    outDir: string;
    facts?: ReadonlyArray<readonly [string, string | number]>;
    windows?: readonly SyncedWindow[];
    now?: Date;
    policy?: ExceptionPolicy;
  },
): Promise<{ file: string; data: NightlyReportData }> {
  const data = await nightlyReportData(deps, opts);
  const file = path.join(opts.outDir, nightlyReportFileName(opts.date));
  await writeNightlyReport(file, data);
  return { file, data };
}

/** Yesterday in the business zone, the default day of the report. */
export function previousDay(now: Date, timezone: string): string {
  return DateTime.fromJSDate(now, { zone: timezone }).minus({ days: 1 }).toISODate()!;
}

/** The previous month in the business zone (monthly statements). */
export function previousMonth(now: Date, timezone: string): string {
  return DateTime.fromJSDate(now, { zone: timezone }).minus({ months: 1 }).toFormat('yyyy-MM');
}
