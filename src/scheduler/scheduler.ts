import { type ErrorKind, ReconError } from '../errors';
import { hostname } from 'node:os';
import type { Sql } from '../db/connect';
import { scrubber, silentLogger, type Logger } from '../log';
import { systemClock, type Clock } from './clock';
import { latestRunBetween, nextRun, parseCron, type CronSchedule } from './cron';
import { lockKey, type JobTrigger } from './job-runs';

/**
 * Runs jobs on cron schedules in the business time zone.
 *
 * - A job never overlaps itself: a session advisory lock keyed by the job's name is held for the whole
 *   run, by whichever worker runs it; a tick that finds it held is skipped (and recorded as skipped).
 * - With several workers only one executes a given occurrence: a second advisory lock keyed by job name +
 *   scheduled time, and the job_runs row (job, scheduled_for) claimed with an upsert that only a failed,
 *   abandoned or skipped occurrence lets through. A worker arriving after the run sees it succeeded.
 * - A failed occurrence is retried at the job's next tick (before that tick's own run), up to
 *   `maxAttempts` attempts in all.
 * - Time comes from an injectable clock, so tests drive a month of ticks with a fake one.
 */

export interface JobContext {
  readonly scheduledFor: Date;
  readonly trigger: JobTrigger;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly now: () => Date;
}

/** What a job returns: counters stored with its run (numbers, short strings, small lists). */
export type JobCounters = Record<string, unknown>;

export interface JobDefinition {
  readonly name: string;
  readonly description: string;
  /** cron expression (5 or 6 fields), evaluated in the scheduler's time zone */
  readonly cron: string;
  run(ctx: JobContext): Promise<JobCounters | void>;
}

export type RunOutcome =
  | { status: 'succeeded'; job: string; scheduledFor: Date; attempt: number; counters: JobCounters }
  | { status: 'failed'; job: string; scheduledFor: Date; attempt: number; error: string }
  | { status: 'skipped'; job: string; scheduledFor: Date; reason: 'overlap' }
  | { status: 'already-done'; job: string; scheduledFor: Date };

export interface SchedulerOptions {
  readonly jobs: readonly JobDefinition[];
  readonly sql: Sql;
  readonly timezone: string;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** name written in job_runs.worker */
  readonly worker?: string;
  /** attempts of one occurrence in all (first run + retries at later ticks); default 3 */
  readonly maxAttempts?: number;
  /** called after every occurrence handled (tests, progress) */
  readonly onOutcome?: (o: RunOutcome) => void;
  /**
   * The secret values in force (src/config/env.ts secretValues): hidden, with card numbers, from a run's error
   * before job_runs keeps it (the console and `recon jobs` show it), as the log hides them from its lines.
   */
  readonly secrets?: readonly string[];
}

export interface ScheduledJobInfo {
  readonly name: string;
  readonly description: string;
  readonly cron: string;
  readonly nextRun: Date;
}

export interface Scheduler {
  /** Starts one loop per job; returns at once. */
  start(): void;
  /** Stops the loops, aborts running jobs' signals and waits for them to finish. */
  stop(): Promise<void>;
  /** Runs a job now (trigger "manual"), with the same locks and recording as a scheduled run. */
  runNow(name: string, opts?: { signal?: AbortSignal }): Promise<RunOutcome>;
  /** Each job's schedule and next run time after now. */
  schedules(): ScheduledJobInfo[];
}

export type SchedulerErrorCode = 'SCHEDULER_BAD_CRON' | 'SCHEDULER_UNKNOWN_JOB' | 'SCHEDULER_DUPLICATE_JOB';

/** A cron expression is the configuration's, a job asked for by name the command's; a job defined twice is a defect. */
const SCHEDULER_ERROR_KIND: Record<SchedulerErrorCode, ErrorKind> = {
  SCHEDULER_BAD_CRON: 'configuration',
  SCHEDULER_UNKNOWN_JOB: 'usage',
  SCHEDULER_DUPLICATE_JOB: 'internal',
};

export class SchedulerError extends ReconError {
  get kind(): ErrorKind {
    return SCHEDULER_ERROR_KIND[this.code];
  }
  constructor(
    readonly code: SchedulerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SchedulerError';
  }
}

/** At most this many owed occurrences of a job are run by one tick (the rest by the next ones). */
const MAX_OWED = 40;

/** An error's text as recorded and logged: scrubbed whole, then cut (cut first, a secret across the cut kept its start). */
const errorText = (e: unknown, scrub: (text: string) => string) =>
  scrub(e instanceof Error ? e.message : String(e)).slice(0, 2000);

/** Plain-JSON counters: bigints as strings, so that jsonb accepts them. */
const plain = (c: JobCounters): JobCounters =>
  JSON.parse(JSON.stringify(c, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as JobCounters;

/** One scheduler's settings and what its loops share (runs in flight, ticks not yet recorded). */
interface SchedulerState {
  readonly opts: SchedulerOptions;
  readonly sql: Sql;
  readonly clock: Clock;
  readonly log: Logger;
  readonly worker: string;
  readonly maxAttempts: number;
  /** a run's error as recorded: without the secrets and card numbers */
  readonly scrub: (text: string) => string;
  readonly parsed: ReadonlyMap<string, { job: JobDefinition; schedule: CronSchedule }>;
  readonly controller: AbortController;
  readonly loops: Promise<void>[];
  /** runs in flight in this process, per job */
  readonly inFlight: Map<string, Promise<unknown>>;
  /** manual runs (runNow: recon run, the console's "run now") in flight, which stop() waits for too */
  readonly manual: Set<Promise<unknown>>;
  /** per job, scheduled times whose tick failed before anything was recorded (database unreachable) */
  readonly unrecorded: Map<string, Date[]>;
  started: boolean;
}

type Reserved = Awaited<ReturnType<Sql['reserve']>>;

export function createScheduler(opts: SchedulerOptions): Scheduler {
  const s: SchedulerState = {
    opts,
    sql: opts.sql,
    clock: opts.clock ?? systemClock,
    log: opts.log ?? silentLogger,
    worker: opts.worker ?? `${hostname()}:${process.pid}`,
    maxAttempts: opts.maxAttempts ?? 3,
    scrub: scrubber(opts.secrets ?? []),
    parsed: parseJobs(opts.jobs, opts.timezone),
    controller: new AbortController(),
    loops: [],
    inFlight: new Map(),
    manual: new Set(),
    unrecorded: new Map(),
    started: false,
  };
  const { clock, log, parsed, controller } = s;
  return {
    start() {
      if (s.started) return;
      s.started = true;
      const caughtUp = catchUpAll(s, clock.now()).catch((e) =>
        log.error('catching up owed job runs failed; the next ticks run them', { error: errorText(e, s.scrub) }),
      );
      s.loops.push(caughtUp);
      for (const { job, schedule } of parsed.values()) s.loops.push(loop(s, job, schedule, caughtUp));
      log.info('scheduler started', { jobs: [...parsed.keys()], timezone: opts.timezone, worker: s.worker });
    },
    async stop() {
      controller.abort(new Error('scheduler stopping'));
      await Promise.all(s.loops);
      await Promise.all([...s.inFlight.values()]);
      // a console run is not a loop's: stop() returned under it and the worker closed the pool (row left running)
      await Promise.allSettled([...s.manual]);
    },
    async runNow(name, runOpts = {}) {
      const entry = parsed.get(name);
      if (!entry)
        throw new SchedulerError(
          'SCHEDULER_UNKNOWN_JOB',
          `unknown job ${JSON.stringify(name)}; jobs: ${[...parsed.keys()].join(', ')}`,
        );
      // Whole seconds: the occurrence key of a manual run is readable and collides with nothing scheduled.
      const at = new Date(Math.floor(clock.now().getTime() / 1000) * 1000);
      const run = execute(s, entry.job, at, 'manual', runOpts.signal ?? controller.signal);
      s.manual.add(run);
      try {
        return report(s, await run);
      } finally {
        s.manual.delete(run);
      }
    },
    schedules() {
      const now = clock.now();
      return [...parsed.values()].map(({ job, schedule }) => ({
        name: job.name,
        description: job.description,
        cron: job.cron,
        nextRun: nextRun(schedule, now),
      }));
    },
  };
}

/** Each job with its parsed schedule; a job defined twice or a bad cron expression is refused. */
function parseJobs(
  jobs: readonly JobDefinition[],
  timezone: string,
): Map<string, { job: JobDefinition; schedule: CronSchedule }> {
  const parsed = new Map<string, { job: JobDefinition; schedule: CronSchedule }>();
  for (const job of jobs) {
    if (parsed.has(job.name)) throw new SchedulerError('SCHEDULER_DUPLICATE_JOB', `job ${job.name} is defined twice`);
    const p = parseCron(job.cron, timezone);
    if (!p.ok)
      throw new SchedulerError(
        'SCHEDULER_BAD_CRON',
        `job ${job.name}: invalid cron expression "${job.cron}": ${p.reason}`,
      );
    parsed.set(job.name, { job, schedule: p.schedule });
  }
  return parsed;
}

function report(s: SchedulerState, o: RunOutcome): RunOutcome {
  s.opts.onOutcome?.(o);
  return o;
}

async function recordSkip(
  s: SchedulerState,
  job: string,
  scheduledFor: Date,
  trigger: JobTrigger,
): Promise<RunOutcome> {
  const { sql, clock, worker } = s;
  // Never overwrites a row: if the occurrence is being (or was) run elsewhere, that row stands.
  await sql`
    insert into job_runs (job, scheduled_for, trigger, status, worker, started_at, finished_at, error)
    values (${job}, ${scheduledFor}, ${trigger}, 'skipped', ${worker}, ${clock.now()}, ${clock.now()}, 'previous run still running')
    on conflict (job, scheduled_for) do nothing`;
  s.log.warn('job tick skipped: previous run still running', { job, scheduledFor: scheduledFor.toISOString() });
  return { status: 'skipped', job, scheduledFor, reason: 'overlap' };
}

/** Executes one occurrence under both advisory locks, recording it in job_runs. */
async function execute(
  s: SchedulerState,
  job: JobDefinition,
  scheduledFor: Date,
  trigger: JobTrigger,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const conn = await s.sql.reserve();
  const jobKey = lockKey(job.name);
  const occurrenceKey = lockKey(`${job.name}@${scheduledFor.toISOString()}`);
  let haveJobLock = false;
  let haveOccurrenceLock = false;
  try {
    const [a] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${jobKey}::int8) as locked`;
    haveJobLock = a?.locked === true;
    if (!haveJobLock) return await recordSkip(s, job.name, scheduledFor, trigger);
    const [b] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${occurrenceKey}::int8) as locked`;
    haveOccurrenceLock = b?.locked === true;
    if (!haveOccurrenceLock) return await recordSkip(s, job.name, scheduledFor, trigger);
    return await claimAndRun(s, conn, job, scheduledFor, trigger, signal);
  } finally {
    if (haveOccurrenceLock) await conn`select pg_advisory_unlock(${occurrenceKey}::int8)`.catch(() => {});
    if (haveJobLock) await conn`select pg_advisory_unlock(${jobKey}::int8)`.catch(() => {});
    conn.release();
  }
}

/** With both locks held: claims the occurrence's job_runs row, runs the job and records how it ended. */
async function claimAndRun(
  s: SchedulerState,
  conn: Reserved,
  job: JobDefinition,
  scheduledFor: Date,
  trigger: JobTrigger,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { sql, clock, worker, maxAttempts } = s;
  // A row left "running" can only belong to a worker that died (we hold the lock): that attempt is recorded failed,
  // abandoned, before the occurrence is taken again; re-claimed as it was, it was in no failure and never alerted.
  if (await recordFailed(conn, job.name, scheduledFor, ABANDONED, clock.now(), 'running'))
    s.log.warn('job run abandoned by a process that stopped: recorded as failed, run again', {
      job: job.name,
      scheduledFor: scheduledFor.toISOString(),
    });
  // Claim the occurrence.
  const claimed = await conn<{ attempt: number }[]>`
    insert into job_runs (job, scheduled_for, trigger, status, worker, started_at)
    values (${job.name}, ${scheduledFor}, ${trigger}, 'running', ${worker}, ${clock.now()})
    on conflict (job, scheduled_for) do update
      set status = 'running', attempt = job_runs.attempt + case when job_runs.status = 'skipped' then 0 else 1 end,
          worker = excluded.worker, trigger = excluded.trigger, started_at = excluded.started_at,
          finished_at = null, error = null, counters = '{}'::jsonb
      where job_runs.status in ('failed', 'running', 'skipped') and job_runs.attempt < ${maxAttempts}
    returning attempt`;
  const attempt = claimed[0]?.attempt;
  if (attempt === undefined) return { status: 'already-done', job: job.name, scheduledFor };
  const runLog = s.log.child({ job: job.name, scheduledFor: scheduledFor.toISOString(), attempt, trigger });
  runLog.info('job started');
  try {
    const counters = plain(
      (await job.run({ scheduledFor, trigger, attempt, signal, log: runLog, now: () => clock.now() })) ?? {},
    );
    await conn`update job_runs set status = 'succeeded', finished_at = ${clock.now()}, counters = ${sql.json(counters as never)}
               where job = ${job.name} and scheduled_for = ${scheduledFor}`;
    runLog.info('job succeeded', { counters });
    return { status: 'succeeded', job: job.name, scheduledFor, attempt, counters };
  } catch (e) {
    const error = errorText(e, s.scrub);
    await recordFailed(conn, job.name, scheduledFor, error, clock.now());
    runLog.error('job failed', { error, willRetry: attempt < maxAttempts });
    return { status: 'failed', job: job.name, scheduledFor, attempt, error };
  }
}

/**
 * An attempt failed: its job_runs row, and the attempt in job_run_failures, which the occurrence's retry does not
 * overwrite (the job_failed alert reads it). One statement: both or neither.
 */
async function recordFailed(
  conn: Reserved,
  job: string,
  scheduledFor: Date,
  error: string,
  at: Date,
  onlyIf?: 'running',
): Promise<boolean> {
  const r = await conn`
    with failed as (
      update job_runs set status = 'failed', finished_at = ${at}, error = ${error}
      where job = ${job} and scheduled_for = ${scheduledFor} ${onlyIf ? conn`and status = ${onlyIf}` : conn``}
      returning job, scheduled_for, attempt, error, finished_at)
    insert into job_run_failures (job, scheduled_for, attempt, error, finished_at)
    select job, scheduled_for, attempt, error, finished_at from failed
    on conflict do nothing`;
  return r.count > 0;
}

const ABANDONED = 'abandoned: the process running it stopped before it finished';

/**
 * Rows left `running` that no retry takes back — a manual run, or an occurrence's last attempt — whose process
 * died (nobody holds the occurrence's lock): recorded as failed, so that they are shown and alerted as such.
 * Found in review 13: they stayed `running` for ever, and the job_failed alert never saw them.
 */
async function closeAbandoned(s: SchedulerState, job: JobDefinition): Promise<void> {
  const rows = await s.sql<{ scheduled_for: Date }[]>`
    select scheduled_for from job_runs
    where job = ${job.name} and status = 'running' and (trigger = 'manual' or attempt >= ${s.maxAttempts})`;
  for (const r of rows) {
    const conn = await s.sql.reserve();
    const key = lockKey(`${job.name}@${r.scheduled_for.toISOString()}`);
    try {
      const [b] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${key}::int8) as locked`;
      if (b?.locked !== true) continue; // a live run holds it
      try {
        await recordFailed(conn, job.name, r.scheduled_for, ABANDONED, s.clock.now(), 'running');
        s.log.warn('job run abandoned by a process that stopped: recorded as failed', {
          job: job.name,
          scheduledFor: r.scheduled_for.toISOString(),
        });
      } finally {
        await conn`select pg_advisory_unlock(${key}::int8)`.catch(() => {});
      }
    } finally {
      conn.release();
    }
  }
}

/**
 * The occurrences before `before` that still need a run, oldest first: every one that failed, or was left
 * `running` by a worker that died (execute's occurrence lock tells a live run from a dead one), with
 * attempts left; and every one since the job's latest recorded occurrence that has no row at all (the
 * worker was down at its time, or its tick met a database outage before anything was recorded). Found in
 * review: only the latest earlier occurrence was retried, and only when `failed`.
 */
async function owed(
  s: SchedulerState,
  job: JobDefinition,
  schedule: CronSchedule,
  before: Date,
): Promise<Array<{ at: Date; why: string }>> {
  const { sql } = s;
  await closeAbandoned(s, job);
  const unfinished = await sql<{ scheduled_for: Date; status: string; attempt: number }[]>`
    select scheduled_for, status, attempt from job_runs
    where job = ${job.name} and trigger = 'schedule' and scheduled_for < ${before}
      and status in ('failed', 'running') and attempt < ${s.maxAttempts}
    order by scheduled_for limit ${MAX_OWED}`;
  const out = unfinished.map((r) => ({
    at: r.scheduled_for,
    why: r.status === 'running' ? 'abandoned by a worker that stopped' : 'failed',
  }));
  const [last] = await sql<{ at: Date | null }[]>`
    select max(scheduled_for) as at from job_runs where job = ${job.name} and trigger = 'schedule' and scheduled_for < ${before}`;
  if (last?.at) {
    for (
      let t = nextRun(schedule, last.at);
      t.getTime() < before.getTime() && out.length < MAX_OWED;
      t = nextRun(schedule, t)
    )
      out.push({ at: t, why: 'missed (no run recorded)' });
  }
  // ticks of this process that failed before anything was recorded (a job with no row yet included)
  for (const t of s.unrecorded.get(job.name) ?? []) {
    if (t.getTime() < before.getTime() && !out.some((o) => o.at.getTime() === t.getTime()))
      out.push({ at: t, why: 'its tick failed before it was recorded' });
  }
  s.unrecorded.delete(job.name);
  return out.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** Runs what is owed before `before`, then (with `at`) the occurrence itself. */
async function tick(
  s: SchedulerState,
  job: JobDefinition,
  schedule: CronSchedule,
  before: Date,
  at?: Date,
): Promise<RunOutcome[]> {
  const { log } = s;
  const signal = s.controller.signal;
  const outcomes: RunOutcome[] = [];
  const list = await owed(s, job, schedule, before);
  for (const o of list) {
    if (signal.aborted) break;
    log.info('running an owed job occurrence', { job: job.name, scheduledFor: o.at.toISOString(), why: o.why });
    outcomes.push(await execute(s, job, o.at, 'schedule', signal));
  }
  // More owed than one tick runs: this occurrence waits too (it has no row, so the next tick owes it after
  // the ones before it); run now, it would become the latest recorded and hide those.
  if (at && list.length >= MAX_OWED)
    log.warn('more job occurrences owed than one tick runs; the next tick carries on', {
      job: job.name,
      scheduledFor: at.toISOString(),
    });
  else if (at && !signal.aborted) outcomes.push(await execute(s, job, at, 'schedule', signal));
  return outcomes;
}

/** Runs `work` (the tick of `at`, if any) as the job's run in flight; outcomes are reported once it is completely over. */
function runInFlight(s: SchedulerState, job: JobDefinition, work: Promise<RunOutcome[]>, at?: Date): void {
  const { inFlight, unrecorded } = s;
  const run = work.then(
    (outcomes) => {
      inFlight.delete(job.name);
      for (const o of outcomes) report(s, o);
    },
    (e) => {
      inFlight.delete(job.name);
      if (at) unrecorded.set(job.name, [...(unrecorded.get(job.name) ?? []), at]);
      s.log.error('job tick failed before it could be recorded; the next tick runs it', {
        job: job.name,
        scheduledFor: at?.toISOString(),
        error: errorText(e, s.scrub),
      });
    },
  );
  inFlight.set(job.name, run);
}

/**
 * At start: what fell due while no worker ran (and what a dead worker left), of every job together, in the
 * order of their scheduled times — a monthly statement owed after two nightly syncs is cut after them, as on
 * schedule (each job caught up on its own, at the same time as the others).
 */
async function catchUpAll(s: SchedulerState, at: Date): Promise<void> {
  const { log } = s;
  const signal = s.controller.signal;
  const all: Array<{ job: JobDefinition; at: Date; why: string; rank: number }> = [];
  let rank = 0;
  for (const { job, schedule } of s.parsed.values()) {
    rank++;
    try {
      for (const o of await owed(s, job, schedule, at)) all.push({ job, ...o, rank });
    } catch (e) {
      log.error('cannot read what a job owes; its next tick runs it', { job: job.name, error: errorText(e, s.scrub) });
    }
  }
  all.sort((a, b) => a.at.getTime() - b.at.getTime() || a.rank - b.rank);
  for (const o of all) {
    if (signal.aborted) return;
    log.info('running an owed job occurrence', { job: o.job.name, scheduledFor: o.at.toISOString(), why: o.why });
    const work = execute(s, o.job, o.at, 'schedule', signal).then((r) => [r]);
    runInFlight(s, o.job, work);
    await s.inFlight.get(o.job.name);
  }
}

async function loop(
  s: SchedulerState,
  job: JobDefinition,
  schedule: CronSchedule,
  caughtUp: Promise<void>,
): Promise<void> {
  const { clock } = s;
  let after = clock.now();
  const signal = s.controller.signal;
  // a tick due while the catch-up runs is this loop's first (woken late: the latest due, owed ones first)
  await caughtUp;
  while (!signal.aborted) {
    let due = nextRun(schedule, after);
    try {
      await clock.sleepUntil(due, signal);
    } catch {
      return;
    }
    // Woken late (suspended host, long GC, clock moved): the latest occurrence that is due is this tick's;
    // the ones passed meanwhile are owed and run first, oldest first (tick).
    due = latestRunBetween(schedule, due, clock.now()) ?? due;
    after = due;
    if (s.inFlight.has(job.name)) {
      await recordSkip(s, job.name, due, 'schedule').then(
        (o) => report(s, o),
        (e) => s.log.error('cannot record skipped tick', { job: job.name, error: errorText(e, s.scrub) }),
      );
      continue;
    }
    runInFlight(s, job, tick(s, job, schedule, due, due), due);
  }
}
