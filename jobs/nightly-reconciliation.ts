import { AGE_BUCKETS, type OpenOnDay } from '../src/export/nightly/open';
import { exceptionPolicyOf } from '../src/exceptions/policy';
import { previousDay, writeNightlyReportFor } from '../src/export/nightly/report';
import { healMissingWebhooks } from '../src/ingest/heal';
import { syncIncremental } from '../src/ingest/sync';
import { runProjections } from '../src/projector/runner';
import { applySubMerchantDirectory } from '../src/ingest/sub-merchant-directory';
import type { JobContext, JobDefinition } from '../src/scheduler/scheduler';
import type { JobDeps } from './job-deps';

/** Open discrepancies per age bucket at the reported day's end, for the run's record. */
const ageingCounts = (v: OpenOnDay): Record<string, number> =>
  Object.fromEntries(
    AGE_BUCKETS.map((b) => [b.label, v.ageing.filter((r) => r.bucket === b.label).reduce((a, r) => a + r.count, 0)]),
  );

/** What the run states in its report ("facts") and stores with its record ("counters"), filled step by step. */
interface RunNotes {
  readonly facts: Array<readonly [string, string | number]>;
  readonly counters: Record<string, unknown>;
}

/**
 * Nightly: incremental sync of every project (from what was last read without a gap minus the lookback, or an earlier failed window), healing
 * of missing webhooks, projections caught up, then the nightly report of the previous business day, which states
 * the discrepancies open at that day's end (what this run's sync finds is detected now: the next report has it). Windows
 * or webhook re-send requests that failed make the run fail after the report is written, so that it is retried at
 * the next tick.
 */
export function nightlyReconciliationJob(deps: JobDeps): JobDefinition {
  return {
    name: 'nightly-reconciliation',
    description: 'incremental sync, webhook healing, projections, nightly reconciliation report',
    cron: deps.config.schedules.nightly,
    async run(ctx) {
      const notes: RunNotes = {
        facts: [
          ['Run scheduled for', ctx.scheduledFor.toISOString()],
          ['Attempt', ctx.attempt],
        ],
        counters: {},
      };
      await applyDirectory(deps, ctx, notes);
      let failed: string[] = [];
      if (deps.config.projects.length > 0) failed = await syncAndHeal(deps, ctx, notes);
      else notes.facts.push(['Sync and healing', 'skipped: no PSP project configured']);
      const applied = await project(deps, ctx, notes);
      // the runner stops between batches on a stop and returns: a report of views not caught up is never written
      ctx.signal.throwIfAborted();
      const file = await writeReport(deps, ctx, notes, applied);
      if (failed.length > 0)
        throw new Error(`${failed.join('; ')} (report written to ${file}); retried at the next tick`);
      return notes.counters;
    },
  };
}

/** The directory in force before anything is judged: a changed file is a new version, a malformed one fails the run. */
async function applyDirectory(deps: JobDeps, ctx: JobContext, notes: RunNotes): Promise<void> {
  const directory = await applySubMerchantDirectory({
    store: deps.store,
    source: deps.config.subMerchantsPath,
    log: ctx.log,
  });
  if (directory) {
    const { path, rows, version, registered } = directory;
    Object.assign(notes.counters, { subMerchantDirectory: { path, rows, version, registered } });
    notes.facts.push(['Sub-merchant directory', `${path}: ${rows} sub-merchants, version ${version}`]);
  }
}

/**
 * Incremental sync of every project, then webhook healing; returns what failed (windows, re-send requests): the
 * run fails for either, as `hourly-healing` does for the requests (recorded `succeeded`, nobody was told).
 */
async function syncAndHeal(deps: JobDeps, ctx: JobContext, notes: RunNotes): Promise<string[]> {
  const { config } = deps;
  const { facts, counters } = notes;
  const sync = await syncIncremental(
    {
      store: deps.store,
      projects: config.projects,
      log: ctx.log,
      timezone: config.timezone,
      reportMaxWaitMs: config.reportPollMaxWaitMs,
      pspTimeoutMs: config.pspTimeoutMs,
      lookbackDays: config.lookbackDays,
      now: ctx.now,
    },
    { signal: ctx.signal },
  );
  Object.assign(counters, {
    windowsCompleted: sync.completed,
    windowsFailed: sync.failed,
    records: sync.records,
    appended: sync.appended,
  });
  facts.push(
    ['Sync: windows completed by this run', sync.completed],
    ['Sync: windows failed by this run', sync.failed],
    ['Sync: records read', sync.records],
    ['Sync: events appended', sync.appended],
    ...sync.windows
      .filter((w) => w.status === 'failed')
      .map((w): readonly [string, string] => [`Sync failed: ${w.posId} ${JSON.stringify(w.window)}`, w.reason ?? '']),
  );
  const heal = await healMissingWebhooks(
    {
      sql: deps.sql,
      store: deps.store,
      projects: config.projects,
      log: ctx.log,
      graceHours: config.graceHours,
      timezone: config.timezone,
      bank: config.bank,
      pspTimeoutMs: config.pspTimeoutMs,
      resendConcurrency: config.healConcurrency,
    },
    { now: ctx.now(), signal: ctx.signal },
  );
  Object.assign(counters, { healRequested: heal.requested, healFailed: heal.failed });
  facts.push(
    ['Healing: webhook re-sends requested', heal.requested],
    ['Healing: re-send requests failed', heal.failed],
  );
  const failed: string[] = [];
  if (sync.failed > 0) failed.push(`${sync.failed} sync window(s) failed`);
  if (heal.failed > 0)
    failed.push(`${heal.failed} of ${heal.candidates} webhook re-send requests failed (${heal.requested} requested)`);
  return failed;
}

/** Projections caught up; returns the number of events applied. */
async function project(deps: JobDeps, ctx: JobContext, notes: RunNotes): Promise<number> {
  const { config } = deps;
  const projected = await runProjections(
    {
      sql: deps.sql,
      store: deps.store,
      log: ctx.log,
      timezone: config.timezone,
      graceHours: config.graceHours,
      bank: config.bank,
    },
    { signal: ctx.signal },
  );
  const applied = projected.projections.reduce((a, p) => a + p.applied, 0);
  notes.facts.push(['Projections: events applied', applied], ['Event store head', projected.head ?? '-']);
  return applied;
}

/** The nightly report of the previous business day; returns its file. */
async function writeReport(deps: JobDeps, ctx: JobContext, notes: RunNotes, applied: number): Promise<string> {
  const { config } = deps;
  const date = previousDay(ctx.scheduledFor, config.timezone);
  const { file, data } = await writeNightlyReportFor(
    { sql: deps.sql, store: deps.store },
    {
      date,
      timezone: config.timezone,
      policy: exceptionPolicyOf(config.exceptions).policy,
      graceHours: config.graceHours,
      outDir: config.outDir,
      facts: notes.facts,
      now: ctx.now(),
    },
  );
  Object.assign(notes.counters, {
    date,
    eventsProjected: applied,
    report: file,
    openDiscrepancies: data.open.length,
    ...(data.asOfDay ? { ageing: ageingCounts(data.asOfDay) } : {}),
  });
  return file;
}
