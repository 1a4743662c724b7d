import { createHash } from 'node:crypto';
import type { Sql } from '../db/connect';

/** The job_runs table (migration 0300): one row per job occurrence, whoever ran it. */

export type JobRunStatus = 'running' | 'succeeded' | 'failed' | 'skipped';
export type JobTrigger = 'schedule' | 'manual';

export interface JobRunRow {
  readonly job: string;
  readonly scheduledFor: Date;
  readonly trigger: JobTrigger;
  readonly status: JobRunStatus;
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly counters: Record<string, unknown>;
  readonly error: string | null;
}

interface RawRow {
  job: string;
  scheduled_for: Date;
  trigger: JobTrigger;
  status: JobRunStatus;
  attempt: number;
  worker: string;
  started_at: Date;
  finished_at: Date | null;
  counters: Record<string, unknown>;
  error: string | null;
}

const toRow = (r: RawRow): JobRunRow => ({
  job: r.job,
  scheduledFor: r.scheduled_for,
  trigger: r.trigger,
  status: r.status,
  attempt: r.attempt,
  worker: r.worker,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  counters: r.counters,
  error: r.error,
});

/** 64-bit advisory lock key from text (PostgreSQL's int8 range). */
export function lockKey(text: string): string {
  const hex = createHash('sha256').update(`recon-job:${text}`).digest('hex').slice(0, 16);
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
}

export async function lastRuns(sql: Sql, jobs: readonly string[]): Promise<Map<string, JobRunRow>> {
  const rows = await sql<RawRow[]>`
    select distinct on (job) job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at, counters, error
    from job_runs where job = any(${jobs as string[]}) order by job, started_at desc, scheduled_for desc`;
  return new Map(rows.map((r) => [r.job, toRow(r)]));
}

export async function listRuns(sql: Sql, opts: { job?: string; limit?: number } = {}): Promise<JobRunRow[]> {
  const rows = await sql<RawRow[]>`
    select job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at, counters, error from job_runs
    ${opts.job ? sql`where job = ${opts.job}` : sql``}
    order by started_at desc, scheduled_for desc limit ${opts.limit ?? 20}`;
  return rows.map(toRow);
}

export async function runsOf(sql: Sql, job: string): Promise<JobRunRow[]> {
  const rows = await sql<RawRow[]>`
    select job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at, counters, error
    from job_runs where job = ${job} order by scheduled_for`;
  return rows.map(toRow);
}
