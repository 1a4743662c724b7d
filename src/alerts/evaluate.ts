import { sha256Hex } from '../canonical';
import type { AlertsConfig } from '../config/alerts';
import type { Sql } from '../db/connect';
import { dataOf, isEvent, newEvent } from '../events/catalog';
import { AlertRaised, alertStream } from '../events/alert-events';
import { SyncWindowCompleted, syncStream } from '../events/ingest-events';
import { DEFAULT_EXCEPTION_POLICY, type ExceptionPolicy } from '../exceptions/severity';
import type { Logger } from '../log';
import { listDiscrepancies, type DiscrepancyRecord } from '../reconciliation/discrepancy-queries';
import { isStoreError } from '../store/errors';
import type { EventStore, RecordedEvent } from '../store/types';
import type { ChannelDeps } from './channels';
import { type DeliveryOutcome, deliverPending } from './deliveries';
import {
  alertIdOf,
  type Candidate,
  digestCandidates,
  discrepancyCandidates,
  type FailedRun,
  jobFailedCandidates,
  type SyncState,
  syncOverdueCandidates,
} from './rules';

/**
 * One evaluation of the alert rules (`recon alerts run`, the alerts job, after every nightly run): the facts
 * read, the alerts they call for, those not raised before raised (one summary instead when there are more than
 * `maxPerRun`), then every delivery due made. Run twice, the second raises and sends nothing new.
 */

export interface AlertDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly config: AlertsConfig;
  readonly timezone: string;
  /** the PSP projects whose syncs are watched (sync_overdue rules) */
  readonly projects: ReadonlyArray<{ readonly name: string; readonly posId: string }>;
  readonly channelDeps: ChannelDeps;
  readonly policy?: ExceptionPolicy;
  readonly now?: () => Date;
  /** the secret values in force (src/config/env.ts secretValues): hidden in a failed job's error before it leaves */
  readonly secrets?: readonly string[];
}

export interface RaisedSummary {
  readonly alertId: string;
  readonly rule: string;
  readonly kind: string;
  readonly subject: string;
  readonly title: string;
  readonly coveredBy: string | null;
}

export interface EvaluationReport {
  readonly at: string;
  readonly dryRun: boolean;
  /** alerts raised now (a dry run: would be) */
  readonly raised: readonly RaisedSummary[];
  /** the flood's summary alert, when there was one */
  readonly summary: string | null;
  readonly deliveries: readonly DeliveryOutcome[];
}

/** The open discrepancies of every leg (none while the views are not projected yet). */
export async function openDiscrepancies(sql: Sql, timezone: string): Promise<DiscrepancyRecord[]> {
  const r = await listDiscrepancies(sql, { status: 'open', timezone });
  return r.ok ? r.value : [];
}

/**
 * Failed job attempts that finished within the lookback: those kept in job_run_failures (an occurrence retried
 * since, successfully or not, no longer shows its earlier attempts in job_runs) and the job_runs rows failed now.
 */
export async function failedRuns(sql: Sql, since: Date): Promise<FailedRun[]> {
  const rows = await sql<
    { job: string; scheduled_for: Date; attempt: number; error: string | null; finished_at: Date | null }[]
  >`select distinct on (job, scheduled_for, attempt) job, scheduled_for, attempt, error, finished_at from (
      select job, scheduled_for, attempt, error, finished_at from job_run_failures where finished_at >= ${since}
      union all
      select job, scheduled_for, attempt, error, finished_at from job_runs
      where status = 'failed' and coalesce(finished_at, started_at) >= ${since}) f
    order by job, scheduled_for, attempt`;
  return rows.map((r) => ({
    job: r.job,
    scheduledFor: r.scheduled_for,
    attempt: r.attempt,
    error: r.error,
    finishedAt: r.finished_at,
  }));
}

/** The last completed sync window of each project (its `sync-<posId>` stream). */
export async function syncStates(store: EventStore, projects: AlertDeps['projects']): Promise<SyncState[]> {
  const out: SyncState[] = [];
  for (const p of projects) {
    let last: Date | null = null;
    for (const e of await store.readStream(syncStream(p.posId)))
      if (isEvent(SyncWindowCompleted, e)) {
        const t = new Date(dataOf(SyncWindowCompleted, e).completedAt);
        if (last === null || t > last) last = t;
      }
    out.push({ posId: p.posId, project: p.name, lastCompletedAt: last });
  }
  return out;
}

/**
 * A job's error is recorded as thrown (job_runs) and may quote a secret (a connection string's password in a
 * client's message): hidden before it goes to a channel or into an alert's event.
 */
function hidden(runs: FailedRun[], secrets: readonly string[] = []): FailedRun[] {
  const longestFirst = [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  if (longestFirst.length === 0) return runs;
  const scrub = (t: string) => longestFirst.reduce((acc, s) => acc.split(s).join('(hidden)'), t);
  return runs.map((r) => (r.error === null ? r : { ...r, error: scrub(r.error) }));
}

/** Every alert the facts call for at `now`. */
export async function candidatesAt(deps: AlertDeps, now: Date): Promise<Candidate[]> {
  const { rules } = deps.config;
  if (rules.length === 0) return [];
  const policy = deps.policy ?? DEFAULT_EXCEPTION_POLICY;
  const wants = (on: string) => rules.some((r) => r.on === on);
  const open = wants('discrepancy') || wants('digest') ? await openDiscrepancies(deps.sql, deps.timezone) : [];
  const since = new Date(now.getTime() - deps.config.jobLookbackHours * 3_600_000);
  return [
    ...discrepancyCandidates(rules, open, now, policy),
    ...(wants('job_failed') ? jobFailedCandidates(rules, hidden(await failedRuns(deps.sql, since), deps.secrets)) : []),
    ...(wants('sync_overdue') ? syncOverdueCandidates(rules, await syncStates(deps.store, deps.projects), now) : []),
    ...digestCandidates(rules, open, now, deps.timezone, policy),
  ];
}

async function readMany(store: EventStore, streams: string[]): Promise<RecordedEvent[]> {
  if (store.readStreams) return store.readStreams(streams);
  return (await Promise.all(streams.map((s) => store.readStream(s)))).flat();
}

/**
 * The candidates not raised before. The index table answers first; a candidate it lacks is looked for in its
 * stream too (a crash between the append and the index), and an alert found there is put back in the index.
 */
async function notRaised(deps: AlertDeps, candidates: readonly Candidate[], dryRun: boolean): Promise<Candidate[]> {
  const ids = [...new Set(candidates.map((c) => c.alertId))];
  const known = new Set(
    (
      await deps.sql<{ id: string }[]>`select alert_id::text as id from alerts where alert_id = any(${ids}::uuid[])`
    ).map((r) => r.id),
  );
  const unknown = candidates.filter((c) => !known.has(c.alertId));
  if (unknown.length === 0) return [];
  const found = (
    await readMany(
      deps.store,
      unknown.map((c) => alertStream(c.alertId)),
    )
  ).filter((e) => isEvent(AlertRaised, e));
  const inStream = found.map((e) => dataOf(AlertRaised, e));
  if (!dryRun && inStream.length) await index(deps.sql, inStream);
  const raised = new Set(inStream.map((a) => a.alertId));
  const seen = new Set<string>();
  return unknown.filter((c) => !raised.has(c.alertId) && !seen.has(c.alertId) && seen.add(c.alertId));
}

/** When more alerts are new than `maxPerRun`: one summary alert to every channel they name, covering them all. */
function floodSummary(fresh: readonly Candidate[], now: Date): Candidate {
  const ids = fresh.map((c) => c.alertId).sort();
  const subject = `${now.toISOString()}#${sha256Hex(ids.join(',')).slice(0, 16)}`;
  const byRule = new Map<string, number>();
  for (const c of fresh) byRule.set(`${c.rule} (${c.kind})`, (byRule.get(`${c.rule} (${c.kind})`) ?? 0) + 1);
  return {
    alertId: alertIdOf('flood-control', 'summary', subject),
    rule: 'flood-control',
    kind: 'summary',
    subject,
    title: `${fresh.length} new alerts in one evaluation`,
    text: [
      `${fresh.length} alerts were raised at once; they are recorded (recon alerts list) and sent as this one summary.`,
      ...[...byRule].sort().map(([k, n]) => `${k}: ${n}`),
    ].join('\n'),
    facts: { count: fresh.length, byRule: Object.fromEntries([...byRule].sort()), alertIds: ids },
    channels: [...new Set(fresh.flatMap((c) => c.channels))].sort(),
  };
}

type Raising = { c: Candidate; channels: readonly string[]; coveredBy: string | null };

/** The alerts to raise: the fresh ones, or the flood's summary and the fresh ones it covers (sent to no channel). */
function plan(
  fresh: readonly Candidate[],
  maxPerRun: number,
  now: Date,
): { raising: Raising[]; summary: string | null } {
  // the digest is a summary already: it is never folded into the flood's
  const floodable = fresh.filter((c) => c.kind !== 'digest');
  const others = fresh.filter((c) => c.kind === 'digest').map((c) => ({ c, channels: c.channels, coveredBy: null }));
  if (floodable.length <= maxPerRun)
    return {
      raising: [...floodable.map((c) => ({ c, channels: c.channels, coveredBy: null })), ...others],
      summary: null,
    };
  const s = floodSummary(floodable, now);
  return {
    raising: [
      { c: s, channels: s.channels, coveredBy: null },
      ...floodable.map((c) => ({ c, channels: [], coveredBy: s.alertId })),
      ...others,
    ],
    summary: s.alertId,
  };
}

type Raised = ReturnType<typeof AlertRaised.schema.parse>;

async function index(sql: Sql, alerts: readonly Raised[]): Promise<void> {
  const rows = alerts.map((a) => ({
    alert_id: a.alertId,
    rule: a.rule,
    kind: a.kind,
    subject: a.subject,
    title: a.title,
    raised_at: new Date(a.raisedAt),
    channels: a.channels,
    pending: a.channels.length > 0,
  }));
  for (let i = 0; i < rows.length; i += 1000)
    await sql`insert into alerts ${sql(rows.slice(i, i + 1000))} on conflict (alert_id) do nothing`;
}

/** Appends each alert's AlertRaised to its own stream (one id per alert: a repeat is a duplicate), then indexes them. */
async function raise(deps: AlertDeps, raising: readonly Raising[], now: Date): Promise<void> {
  const data: Raised[] = raising.map(({ c, channels, coveredBy }) =>
    AlertRaised.schema.parse({
      alertId: c.alertId,
      rule: c.rule,
      kind: c.kind,
      subject: c.subject,
      title: c.title.slice(0, 300),
      text: c.text.slice(0, 20_000),
      facts: c.facts,
      channels: [...channels],
      coveredBy,
      raisedAt: now.toISOString(),
    }),
  );
  // a flood's summary and the alerts it covers in one append (one transaction on PostgreSQL): cut in two by a
  // crash, the covered alerts left out would be raised one by one, and sent, by the next evaluation
  const size = data.some((d) => d.coveredBy !== null) ? data.length : 500;
  for (let i = 0; i < data.length; i += size)
    await deps.store.appendMany(
      data.slice(i, i + size).map((d) => ({
        stream: alertStream(d.alertId),
        events: [newEvent(AlertRaised, d, { idContent: { alertId: d.alertId } })],
        expectedRevision: 'no_stream' as const,
      })),
    );
  await index(deps.sql, data);
}

/** Another evaluator raised one of these alerts between our reading and our append (two workers at once). */
const raceLost = (e: unknown) => isStoreError(e, 'WRONG_EXPECTED_REVISION') || isStoreError(e, 'EVENT_ID_CONFLICT');

/**
 * The alerts new at `now`, planned and raised. Two workers evaluating at once read the same candidates as new:
 * the second's append is refused (its AlertRaised differs by raisedAt; a batch is one transaction), so it plans
 * again from what the first raised instead of failing, and never adds a second flood summary.
 */
async function raiseNew(deps: AlertDeps, candidates: readonly Candidate[], now: Date, dryRun: boolean) {
  for (let round = 1; ; round++) {
    const planned = plan(await notRaised(deps, candidates, dryRun), deps.config.maxPerRun, now);
    if (dryRun || planned.raising.length === 0) return planned;
    try {
      await raise(deps, planned.raising, now);
      return planned;
    } catch (e) {
      if (!raceLost(e) || round >= 3) throw e;
      deps.log.info('alerts raised meanwhile by another evaluation; planning again', { round });
    }
  }
}

/** One evaluation at the deps' clock: raise what is new, then deliver what is due. */
export async function evaluateAlerts(deps: AlertDeps, opts: { dryRun?: boolean } = {}): Promise<EvaluationReport> {
  const now = (deps.now ?? (() => new Date()))();
  const dryRun = opts.dryRun ?? false;
  const { raising, summary } = await raiseNew(deps, await candidatesAt(deps, now), now, dryRun);
  const deliveries = await deliverPending(
    { sql: deps.sql, store: deps.store, log: deps.log, config: deps.config, channelDeps: deps.channelDeps },
    now,
    dryRun,
  );
  if (raising.length) deps.log.info('alerts raised', { raised: raising.length, summary, dryRun });
  return {
    at: now.toISOString(),
    dryRun,
    raised: raising.map(({ c, coveredBy }) => ({
      alertId: c.alertId,
      rule: c.rule,
      kind: c.kind,
      subject: c.subject,
      title: c.title,
      coveredBy,
    })),
    summary,
    deliveries,
  };
}
