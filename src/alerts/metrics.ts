import { Gauge, Registry } from 'prom-client';
import type { Sql } from '../db/connect';
import {
  ageBucketOf,
  ageHours,
  DEFAULT_EXCEPTION_POLICY,
  type ExceptionPolicy,
  severityOf,
} from '../exceptions/severity';
import { allBuilds } from '../projector/builds';
import { amountInDoubt } from '../reconciliation/discrepancy-summary';
import { type EventStore, parsePosition, type Position } from '../store/types';
import { openDiscrepancies } from './evaluate';

/**
 * The figures of GET /metrics (docs/exceptions.md, "Metrics"), read fresh at every scrape into a registry of
 * their own (never prom-client's global one): open exceptions by type, severity, currency and age bucket, the
 * amount in doubt per currency, each job's last success, each live projection's lag behind the store's head.
 */

export interface OpenExceptionsRow {
  readonly type: string;
  readonly severity: string;
  /** "none" for an exception without a currency */
  readonly currency: string;
  readonly ageBucket: string;
  readonly count: number;
}

export interface MetricsSnapshot {
  readonly openExceptions: readonly OpenExceptionsRow[];
  /** per currency, minor units */
  readonly amountInDoubt: ReadonlyMap<string, bigint>;
  /** per job, the end of its last successful run */
  readonly lastSuccess: ReadonlyMap<string, Date>;
  /** per live projection, events in the store after its checkpoint up to the head */
  readonly projectionLag: ReadonlyMap<string, number>;
}

export interface MetricsDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly timezone: string;
  readonly policy?: ExceptionPolicy;
  readonly now?: () => Date;
}

/** On EventStoreDB, the lag is counted by reading, up to this many events (a greater lag reads as this). */
export const LAG_COUNT_CAP = 10_000;

async function exceptionFigures(deps: MetricsDeps, now: Date) {
  const policy = deps.policy ?? DEFAULT_EXCEPTION_POLICY;
  const groups = new Map<string, OpenExceptionsRow>();
  const amount = new Map<string, bigint>();
  for (const d of await openDiscrepancies(deps.sql, deps.timezone)) {
    const row = {
      type: d.type,
      severity: severityOf(d, now, policy),
      currency: d.currency ?? 'none',
      ageBucket: ageBucketOf(ageHours(d, now)),
    };
    const key = JSON.stringify(row);
    groups.set(key, { ...row, count: (groups.get(key)?.count ?? 0) + 1 });
    const a = amountInDoubt(d);
    if (a !== null && d.currency) amount.set(d.currency, (amount.get(d.currency) ?? 0n) + (a < 0n ? -a : a));
  }
  return { openExceptions: [...groups.values()], amountInDoubt: amount };
}

/** Each job's last successful run (job_runs). */
export async function lastSuccessfulRuns(sql: Sql): Promise<Map<string, Date>> {
  const rows = await sql<{ job: string; at: Date }[]>`
    select job, max(finished_at) as at from job_runs where status = 'succeeded' and finished_at is not null
    group by job order by job`;
  return new Map(rows.map((r) => [r.job, r.at]));
}

/** Events after `from` up to `head`: counted in es_events on PostgreSQL, read (up to the cap) on EventStoreDB. */
async function eventsBetween(deps: MetricsDeps, from: Position | undefined, head: Position): Promise<number> {
  if (deps.store.backend === 'postgres') {
    const c = from ?? { commit: 0n, prepare: -1n };
    const [r] = await deps.sql<{ n: string }[]>`
      select count(*)::text as n from es_events
      where (transaction_id, global_position) > (${c.commit.toString()}::text::xid8, ${c.prepare.toString()}::int8)
        and (transaction_id, global_position) <= (${head.commit.toString()}::text::xid8, ${head.prepare.toString()}::int8)`;
    return Number(r!.n);
  }
  let n = 0;
  let at = from;
  while (n < LAG_COUNT_CAP) {
    const page = await deps.store.readAll(at, { maxCount: 1000 });
    if (page.length === 0) break;
    n += page.length;
    at = page.at(-1)!.position;
  }
  return Math.min(n, LAG_COUNT_CAP);
}

/** Per live projection, the events of the store it has not applied yet. */
export async function projectionLag(deps: MetricsDeps): Promise<Map<string, number>> {
  const head = await deps.store.headPosition();
  const out = new Map<string, number>();
  for (const b of await allBuilds(deps.sql)) {
    if (b.status !== 'live') continue;
    out.set(b.name, head ? await eventsBetween(deps, b.checkpoint ? parsePosition(b.checkpoint) : undefined, head) : 0);
  }
  return out;
}

/** Every figure of /metrics, for the route and for the console. */
export async function collectMetrics(deps: MetricsDeps): Promise<MetricsSnapshot> {
  const now = (deps.now ?? (() => new Date()))();
  const { openExceptions, amountInDoubt: amount } = await exceptionFigures(deps, now);
  return {
    openExceptions,
    amountInDoubt: amount,
    lastSuccess: await lastSuccessfulRuns(deps.sql),
    projectionLag: await projectionLag(deps),
  };
}

/** The snapshot in Prometheus text format, from a registry of its own. */
export async function metricsText(s: MetricsSnapshot): Promise<{ contentType: string; text: string }> {
  const registry = new Registry();
  const open = new Gauge({
    name: 'recon_open_exceptions',
    help: 'Open exceptions (discrepancies of every leg) by type, severity, currency and age bucket',
    labelNames: ['type', 'severity', 'currency', 'age_bucket'],
    registers: [registry],
  });
  for (const r of s.openExceptions)
    open.set({ type: r.type, severity: r.severity, currency: r.currency, age_bucket: r.ageBucket }, r.count);
  const amount = new Gauge({
    name: 'recon_amount_in_doubt_minor_units',
    help: 'Amount in doubt of the open exceptions per currency, in minor units (cents, kopiykas), not major units',
    labelNames: ['currency'],
    registers: [registry],
  });
  // exact while below 2^53 minor units (90 trillion in a two-decimal currency)
  for (const [currency, v] of s.amountInDoubt) amount.set({ currency }, Number(v));
  const success = new Gauge({
    name: 'recon_job_last_success_timestamp_seconds',
    help: 'End of the last successful run of each job, unix time in seconds',
    labelNames: ['job'],
    registers: [registry],
  });
  for (const [job, at] of s.lastSuccess) success.set({ job }, Math.floor(at.getTime() / 1000));
  const lag = new Gauge({
    name: 'recon_projection_lag_events',
    help: `Events in the store not yet applied by each live projection (on EventStoreDB counted up to ${LAG_COUNT_CAP})`,
    labelNames: ['projection'],
    registers: [registry],
  });
  for (const [projection, n] of s.projectionLag) lag.set({ projection }, n);
  return { contentType: registry.contentType, text: await registry.metrics() };
}
