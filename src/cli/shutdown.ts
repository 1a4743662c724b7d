import postgres from 'postgres';
import { APPLICATION_PREFIX, type Sql } from '../db/connect';
import type { Logger } from '../log';

/**
 * SIGTERM stops `recon start` and `recon project` within a bounded time whatever they are doing
 * (docs/reliability.md, "Shutdown"). The signal asks every part to finish (the runner between two batches,
 * the worker after its requests and jobs); a part waiting on PostgreSQL (a lock another session holds, a
 * query that does not end) would never see it. So, once the signal is `graceMs` old, this process's queries
 * still running are cancelled on the server (pg_cancel_backend, from a connection of its own: the pool may
 * be all taken by the stuck ones), which fails them and lets the command unwind and roll back; and if the
 * process is still there `hardMs` later, it exits with 130 (interrupted) without waiting any longer.
 */

export interface StopBounds {
  /** from the signal to cancelling the process's queries still running */
  readonly graceMs: number;
  /** from the cancel to exiting at once */
  readonly hardMs: number;
}

export const EXIT_FORCED = 130;

/** `RECON_STOP_GRACE_MS` overrides the grace (tests and impatient supervisors); hard stays `hardMs`. */
export function stopBounds(defaults: StopBounds, env: NodeJS.ProcessEnv = process.env): StopBounds {
  // read as the configuration checks it at start (src/config/env.ts): blank is unset, whole milliseconds only
  const text = (env.RECON_STOP_GRACE_MS ?? '').trim();
  return /^\d{1,7}$/.test(text) ? { ...defaults, graceMs: Number(text) } : defaults;
}

/** Cancels the running queries of this process's other connections; the number cancelled. */
export async function cancelOwnQueries(sql: Sql): Promise<number> {
  const o = (sql as unknown as { options: Record<string, unknown> }).options;
  const own = `${APPLICATION_PREFIX}${process.pid}`;
  const side = postgres({
    host: o.host as string[],
    port: o.port as number[],
    path: o.path as string | undefined,
    user: o.user as string,
    pass: o.pass as string,
    database: o.database as string,
    ssl: o.ssl as boolean,
    max: 1,
    onnotice: () => {},
    connect_timeout: 5,
    connection: { application_name: `${own}:stop` },
  } as unknown as postgres.Options<Record<string, never>>);
  try {
    const rows = await side<{ cancelled: boolean }[]>`
      select pg_cancel_backend(pid) as cancelled from pg_stat_activity
      where application_name = ${own} and state <> 'idle' and pid <> pg_backend_pid()`;
    return rows.filter((r) => r.cancelled).length;
  } finally {
    await side.end({ timeout: 1 });
  }
}

/**
 * Arms the bounds on `signal`; returns how to disarm them (when the command ended by itself). The timers do
 * not keep the process alive.
 */
export function boundStop(
  sql: Sql,
  signal: AbortSignal,
  log: Logger,
  bounds: StopBounds,
  what: string,
  exit: (code: number) => void = (code) => process.exit(code),
): () => void {
  const timers: NodeJS.Timeout[] = [];
  const arm = () => {
    const cancel = setTimeout(() => {
      log.warn(`${what} still stopping: cancelling its database queries`, { afterMs: bounds.graceMs });
      cancelOwnQueries(sql).then(
        (n) => log.warn(`${what}: database queries cancelled`, { cancelled: n }),
        (e: unknown) => log.error(`${what}: could not cancel its database queries`, { error: e }),
      );
      const hard = setTimeout(() => {
        log.error(`${what} did not stop in time: exiting now`, { afterMs: bounds.graceMs + bounds.hardMs });
        exit(EXIT_FORCED);
      }, bounds.hardMs);
      hard.unref();
      timers.push(hard);
    }, bounds.graceMs);
    cancel.unref();
    timers.push(cancel);
  };
  if (signal.aborted) arm();
  else signal.addEventListener('abort', arm, { once: true });
  return () => {
    signal.removeEventListener('abort', arm);
    for (const t of timers) clearTimeout(t);
  };
}
