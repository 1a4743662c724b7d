import { Worker } from 'node:worker_threads';
import type { Sql } from '../db/connect';
import { ReconError, type ErrorKind } from '../errors';
import type { Logger } from '../log';
import { ProjectionApplyError, ProjectionsFailedError } from './errors';
import { loadProjections } from './load';
import type { Projection } from './projection';
import type { ProjectionReport, RunnerDeps, RunOptions, ThreadSource } from './runner-types';

/**
 * A run's projections spread over threads of one process (issue 26): the projections are split into groups of
 * about equal cost, the first applied on the calling thread and each other in a worker thread of its own, with
 * its own pool of connections and its own read of the store (thread-main.ts). One thread applied every
 * projection before: on 2 cores the rebuild used one core (and PostgreSQL a part of the other).
 *
 * Nothing of exactly once changes: each group is an ordinary run of the runner (run.ts `runAll`) over other
 * projections, each batch applied with its checkpoint in one transaction under the projection's lock.
 */

/**
 * Relative CPU of each projection's rebuild, measured (2026-11-28) over a 5,000-payment demo month's store
 * (37,517 events, `recon project --rebuild <name> --batch 5000`, recon's CPU less that of a projection that
 * applies almost nothing, docs/scale.md): orders 11.5 s, reconciliation 10.9 s, journal 1.7 s, settlement
 * 0.8 s, operations_seen 0.6 s, the others nearly nothing. A projection not listed counts as 1.
 */
export const PROJECTION_COST: Readonly<Record<string, number>> = {
  orders: 115,
  reconciliation: 109,
  journal: 17,
  settlement: 8,
  operations_seen: 6,
  bank: 1,
  exceptions: 1,
  payouts: 1,
};

/**
 * The caller's database as a worker thread reaches it: the configured URL, or (the embedded server) the
 * pool's own host, port, user and password. A thread never starts or stops the embedded server: the caller's
 * process holds it.
 */
export function threadSource(config: { databaseUrl?: string; eventStoreUrl?: string }, sql: Sql): ThreadSource {
  const store = config.eventStoreUrl ? { eventStoreUrl: config.eventStoreUrl } : {};
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, ...store };
  const o = (sql as unknown as { options: PoolOptions }).options;
  const auth = `${encodeURIComponent(o.user)}:${encodeURIComponent(typeof o.pass === 'string' ? o.pass : '')}`;
  const url = `postgres://${auth}@${o.host[0]}:${o.port[0]}/${encodeURIComponent(o.database)}`;
  return { databaseUrl: url, ...store };
}

interface PoolOptions {
  host: string[];
  port: number[];
  user: string;
  pass: unknown;
  database: string;
}

/**
 * The threads a run uses when not told (RECON_PROJECTION_THREADS unset): one. Two threads on the shared 2-core
 * development machine cost more CPU (a second start-up through tsx, a second read of the store, a second heap)
 * and more memory (a 5k rebuild peaked at 966 MiB against 733) for no wall-clock gain there (docs/scale.md,
 * "Two threads, measured"), so they are asked for (`--threads 2`, `RECON_PROJECTION_THREADS=2`) where cores
 * are idle.
 */
export function defaultThreads(): number {
  return 1;
}

/**
 * The projections split into at most `threads` groups of about equal cost (the costliest first, each to the
 * group that costs least so far), each group in the list's order; none when the run stays on one thread:
 * one thread asked for, no thread source, one projection, or projections that are not projections/'s own (a
 * worker thread loads its projections from projections/ by name).
 */
export async function spreadPlan(
  deps: RunnerDeps,
  list: readonly Projection[],
  threads: number | undefined,
): Promise<Projection[][] | undefined> {
  const n = Math.min(threads ?? 1, list.length);
  if (n < 2 || !deps.threadSource) return undefined;
  const own = new Set(await loadProjections());
  if (!list.every((p) => own.has(p))) return undefined;
  const cost = (p: Projection) => PROJECTION_COST[p.name] ?? 1;
  const groups = Array.from({ length: n }, () => ({ cost: 0, members: new Set<Projection>() }));
  for (const p of [...list].sort((a, b) => cost(b) - cost(a))) {
    const g = groups.reduce((low, x) => (x.cost < low.cost ? x : low));
    g.cost += cost(p);
    g.members.add(p);
  }
  return groups.map((g) => list.filter((p) => g.members.has(p))).filter((g) => g.length > 0);
}

/** What the calling thread tells a worker thread to do. */
export interface ThreadJob {
  readonly source: ThreadSource;
  readonly timezone: string;
  readonly graceHours: number;
  readonly bank?: RunnerDeps['bank'];
  readonly names: readonly string[];
  readonly fresh: boolean;
  readonly batchSize?: number;
  readonly until?: RunOptions['until'];
}

/** What a worker thread tells the calling thread. */
export type ThreadMessage =
  | {
      readonly kind: 'log';
      readonly level: 'debug' | 'info' | 'warn' | 'error';
      readonly msg: string;
      readonly fields?: Record<string, unknown>;
    }
  | { readonly kind: 'progress'; readonly progress: Parameters<NonNullable<RunOptions['onProgress']>>[0] }
  | { readonly kind: 'done'; readonly reports: readonly ProjectionReport[] }
  | { readonly kind: 'failed'; readonly error: ThreadError };

/** A worker thread's error, as plain data (an Error's class does not cross threads). */
export type ThreadError =
  | { readonly type: 'apply'; readonly failures: readonly ApplyFailure[] }
  | {
      readonly type: 'other';
      readonly name: string;
      readonly message: string;
      readonly code?: string;
      readonly kind?: ErrorKind;
    };

interface ApplyFailure {
  readonly projection: string;
  readonly schema: string;
  readonly from: string;
  readonly to: string;
  readonly cause: string;
}

export function threadErrorOf(e: unknown): ThreadError {
  const apply = e instanceof ProjectionsFailedError ? e.failures : e instanceof ProjectionApplyError ? [e] : undefined;
  if (apply)
    return {
      type: 'apply',
      failures: apply.map((f) => ({
        projection: f.projection,
        schema: f.schema,
        from: f.from,
        to: f.to,
        cause: f.cause instanceof Error ? f.cause.message : String(f.cause),
      })),
    };
  const err = e instanceof Error ? e : new Error(String(e));
  const recon = e instanceof ReconError ? { code: e.code, kind: e.kind } : {};
  return { type: 'other', name: err.name, message: err.message, ...recon };
}

/** A worker thread's error that is not a projection's batch: its message, code and kind kept. */
export class ProjectionThreadError extends ReconError {
  readonly code: string;
  readonly kind: ErrorKind;
  constructor(e: Extract<ThreadError, { type: 'other' }>) {
    super(e.message);
    this.name = e.name;
    this.code = e.code ?? 'PROJECTION_THREAD_FAILED';
    this.kind = e.kind ?? 'internal';
  }
}

/** The batches a worker thread could not apply, as the calling thread's own errors. */
export function applyFailuresOf(e: Extract<ThreadError, { type: 'apply' }>): ProjectionApplyError[] {
  return e.failures.map((f) => new ProjectionApplyError(f.projection, f.schema, f.from, f.to, new Error(f.cause)));
}

/**
 * Runs `job` in a worker thread: its logs go to `log`, its progress to `onProgress`; `signal` stops it the way
 * it stops a run on this thread (between batches). Resolves with its reports; rejects with its error.
 */
export function runOnThread(
  job: ThreadJob,
  log: Logger,
  opts: Pick<RunOptions, 'signal' | 'onProgress'>,
): Promise<{ reports: readonly ProjectionReport[] } | { error: ThreadError }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./thread-entry.mjs', import.meta.url), { workerData: job });
    let result: { reports: readonly ProjectionReport[] } | { error: ThreadError } | undefined;
    const stop = () => worker.postMessage('abort');
    if (opts.signal?.aborted) stop();
    else opts.signal?.addEventListener('abort', stop, { once: true });
    const end = (r: { reports: readonly ProjectionReport[] } | { error: ThreadError }) => {
      if (result) return;
      result = r;
      resolve(r);
      // its connections are closed before it sends its result: nothing is left to wait for
      void worker.terminate();
    };
    worker.on('message', (m: ThreadMessage) => {
      if (m.kind === 'log') log[m.level](m.msg, m.fields);
      else if (m.kind === 'progress') opts.onProgress?.(m.progress);
      else if (m.kind === 'done') end({ reports: m.reports });
      else end({ error: m.error });
    });
    worker.on('error', (e) => end({ error: threadErrorOf(e) }));
    worker.on('exit', (code) => {
      opts.signal?.removeEventListener('abort', stop);
      if (!result)
        reject(
          new Error(`the projection thread of ${job.names.join(', ')} ended (exit code ${code}) without a report`),
        );
    });
  });
}
