import type { Sql } from '../../db/connect';
import { cashSheetData } from '../../export/nightly/cash-sheet';
import { heldAt } from '../../export/payouts/holds';
import { AGE_BUCKETS, ageBucketOf, ageHours, severityOf } from '../../exceptions/severity';
import { SEVERITIES, type Leg } from '../../reconciliation/discrepancies/registry';
import { DISCREPANCY_VIEW_OF } from '../../reconciliation/discrepancies/table';
import { amountInDoubt } from '../../reconciliation/discrepancy-summary';
import { lastRuns } from '../../scheduler/job-runs';
import type { EventStore } from '../../store/types';
import { DateTime } from 'luxon';
import { type Html, html } from '../html';
import { money, when } from '../i18n';
import { type View, table } from '../layout';
import { liveLegs } from '../queue';

/**
 * Overview: per leg, how many of its items carry no open discrepancy (the items: the leg's main view — the PSP's
 * operations, the orders, the payouts expected, the settlements expected); the open discrepancies by type,
 * severity and age (src/exceptions/severity.ts); money in doubt and held per currency; each bank account's
 * bridge (the nightly report's Cash sheet); each job's last run.
 */

const ITEMS_OF: Readonly<Record<Leg, string>> = {
  psp: 'recon.operations',
  orders: 'recon.orders',
  payouts: 'recon.payout_expected',
  settlement: 'recon.settlements_expected',
};

interface LegRate {
  leg: Leg;
  items: number;
  open: number;
  discrepancies: number;
}

async function legRates(sql: Sql): Promise<LegRate[]> {
  const out: LegRate[] = [];
  for (const leg of await liveLegs(sql, ['psp', 'orders', 'payouts', 'settlement'])) {
    const [exists] = await sql<{ ok: boolean }[]>`select to_regclass(${ITEMS_OF[leg]}) is not null as ok`;
    const n = exists?.ok
      ? ((await sql<{ n: number }[]>`select count(*)::int as n from ${sql(ITEMS_OF[leg])}`)[0]?.n ?? 0)
      : 0;
    const [d] = await sql<{ total: number; open: number }[]>`
      select count(*)::int as total,
        count(distinct coalesce(payment_id, order_id, operation_key)) filter (where status = 'open')::int as open
      from ${sql(`recon.${DISCREPANCY_VIEW_OF[leg]}`)}`;
    out.push({ leg, items: n, open: d?.open ?? 0, discrepancies: d?.total ?? 0 });
  }
  return out;
}

interface OpenRow {
  type: string;
  values: Record<string, unknown>;
  currency: string | null;
  detected_at: Date;
}

async function openRows(sql: Sql): Promise<OpenRow[]> {
  const rows: OpenRow[] = [];
  for (const leg of await liveLegs(sql, ['psp', 'orders', 'payouts', 'settlement']))
    rows.push(
      ...(await sql<OpenRow[]>`select type, "values", currency, detected_at
        from ${sql(`recon.${DISCREPANCY_VIEW_OF[leg]}`)} where status = 'open'`),
    );
  return rows;
}

const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);

export interface OverviewData {
  rates: LegRate[];
  byType: Map<string, number>;
  bySeverity: Map<string, number>;
  byAge: Map<string, number>;
  inDoubt: Map<string, bigint>;
  held: Map<string, bigint> | null;
  bridges: Awaited<ReturnType<typeof cashSheetData>>;
  runs: Array<{
    job: string;
    run: Awaited<ReturnType<typeof lastRuns>> extends Map<string, infer R> ? R | null : never;
  }>;
}

export async function overviewData(
  deps: { sql: Sql; store: EventStore; timezone: string; jobs: readonly string[] },
  now = new Date(),
): Promise<OverviewData> {
  const rows = await openRows(deps.sql);
  const byType = new Map<string, number>();
  const bySeverity = new Map<string, number>();
  const byAge = new Map<string, number>();
  const inDoubt = new Map<string, bigint>();
  for (const r of rows) {
    const d = { type: r.type, values: r.values, currency: r.currency, detected_at: r.detected_at.toISOString() };
    bump(byType, r.type);
    bump(bySeverity, severityOf(d, now));
    bump(byAge, ageBucketOf(ageHours(d, now)));
    const a = amountInDoubt(d);
    if (a !== null) add(inDoubt, r.currency ?? '', a);
  }
  const head = await deps.store.headPosition();
  const items = head ? await heldAt(deps.sql, deps.store, head) : null;
  const held = items ? new Map<string, bigint>() : null;
  for (const i of items ?? []) add(held!, i.currency, i.amount);
  const today = DateTime.fromJSDate(now, { zone: deps.timezone }).toISODate()!;
  const bridges = await cashSheetData(deps.sql, { date: today, timezone: deps.timezone });
  const last = await lastRuns(deps.sql, deps.jobs);
  const runs = deps.jobs.map((job) => ({ job, run: last.get(job) ?? null }));
  return { rates: await legRates(deps.sql), byType, bySeverity, byAge, inDoubt, held, bridges, runs };
}

const percent = (part: number, whole: number) =>
  whole === 0 ? '–' : `${((Math.max(0, whole - part) / whole) * 100).toFixed(1)} %`;

function moneyRows(v: View, m: Map<string, bigint>): Html[] {
  return [...m]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([c, a]) => html`<tr><td>${c}</td><td class="num">${money(a, c || null, v.lang)}</td></tr>`);
}

function countRows(m: Map<string, number>, order: readonly string[]): Html[] {
  return order.filter((k) => m.has(k)).map((k) => html`<tr><td>${k}</td><td class="num">${m.get(k)}</td></tr>`);
}

export function overviewPage(v: View, d: OverviewData): Html {
  const w = v.w;
  const rates = d.rates.map(
    (r) =>
      html`<tr><td>${v.w.legs[r.leg]}</td><td class="num">${r.items}</td><td class="num">${r.open}</td><td class="num">${percent(r.open, r.items)}</td></tr>`,
  );
  const bridges = (d.bridges?.bridges ?? []).map(
    (b) => html`<tr><td>${b.accountId}</td><td>${b.currency}</td>
<td class="num">${money(b.firstStatementOpening, b.currency, v.lang)}</td><td class="num">${money(b.bookedInJournal, b.currency, v.lang)}</td>
<td class="num">${money(b.notInJournal, b.currency, v.lang)}</td><td class="num">${money(b.bankClosing, b.currency, v.lang)}</td>
<td class="num">${money(b.difference, b.currency, v.lang)}</td></tr>`,
  );
  const runs = d.runs.map(
    ({ job, run }) => html`<tr><td>${job}</td><td>${run ? run.status : w.never}</td>
<td>${run ? when(run.startedAt, v.zone, v.lang) : ''}</td><td>${run ? when(run.finishedAt, v.zone, v.lang) : ''}</td>
<td class="text">${run?.error ?? ''}</td></tr>`,
  );
  return html`
${table(w.matchRate, [w.leg, w.total, w.open, w.rate], rates, w.noData)}
${table(w.openByType, [w.type, w.count], countRows(d.byType, [...d.byType.keys()].sort()), w.noRows)}
${table(w.openBySeverity, [w.severity, w.count], countRows(d.bySeverity, [...SEVERITIES].reverse()), w.noRows)}
${table(w.openByAge, [w.age, w.count], countRows(d.byAge, AGE_BUCKETS), w.noRows)}
${table(w.inDoubt, [w.currency, w.amount], moneyRows(v, d.inDoubt), w.noRows)}
${table(w.held, [w.currency, w.amount], d.held ? moneyRows(v, d.held) : [], d.held ? w.noRows : w.noData)}
${table(w.cashBridge, [w.account, w.currency, w.opening, w.journal, w.notInJournal, w.bankClosing, w.difference], bridges, w.noData)}
${table(w.lastRuns, [w.job, w.status, w.started, w.finished, w.error], runs, w.noRows)}`;
}
