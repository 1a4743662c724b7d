import { requireConfig, secretValues, type Config } from '../config/env';
import { openDatabase, type Database, type Sql } from '../db/connect';
import { Interrupted } from '../errors';
import { applySubMerchantDirectory, type DirectoryApplied } from '../ingest/sub-merchant-directory';
import { createLogger, type Logger } from '../log';
import type { RunnerDeps } from '../projector/runner-types';
import { openEventStore } from '../store/open';
import { readTransactionCounter } from '../store/transaction-counter';
import type { EventStore } from '../store/types';

/** What a command runs with: validated configuration, logger, database (migrated) and event store. */
export interface Runtime {
  readonly config: Config;
  readonly log: Logger;
  readonly db: Database;
  readonly sql: Sql;
  readonly store: EventStore;
  /** RECON_SUB_MERCHANTS as imported at open (with `subMerchants: true` and the variable set) */
  readonly subMerchantDirectory?: DirectoryApplied;
}

/** What the projections run with, from a command's runtime (`log`: the command's own, if it has one). */
export function runnerDepsOf(rt: Runtime, log: Logger = rt.log): RunnerDeps {
  const { config } = rt;
  return {
    sql: rt.sql,
    store: rt.store,
    log,
    timezone: config.timezone,
    graceHours: config.graceHours,
    bank: config.bank,
  };
}

export function loggerFor(config: Config): Logger {
  return createLogger({ level: config.logLevel, secrets: secretValues(config) });
}

export interface RuntimeOptions {
  readonly maxConnections?: number;
  /**
   * Import RECON_SUB_MERCHANTS (when set) before the command runs: every command that judges (start, sync,
   * project, statements, demo, the jobs) sees the directory in force. A malformed directory stops the command.
   */
  readonly subMerchants?: boolean;
}

export async function openRuntime(
  config: Config,
  opts: RuntimeOptions & { log?: Logger; signal?: AbortSignal } = {},
): Promise<Runtime> {
  const log = opts.log ?? loggerFor(config);
  const db = await openDatabase(config, log, { max: opts.maxConnections ?? 10, signal: opts.signal });
  let store: EventStore | undefined;
  try {
    store = await openEventStore(config, db.sql);
    if (store.backend === 'postgres') await warnOfRefusedAppends(db.sql, log);
  } catch (e) {
    // the pool's connections (and the store's) would keep the process alive after the error is reported
    await store?.close().catch(() => {});
    await db.close();
    throw e;
  }
  const rt: Runtime = { config, log, db, sql: db.sql, store };
  if (!opts.subMerchants) return rt;
  try {
    const directory = await applySubMerchantDirectory({ store, sql: db.sql, source: config.subMerchantsPath, log });
    return directory ? { ...rt, subMerchantDirectory: directory } : rt;
  } catch (e) {
    await closeRuntime(rt);
    throw e;
  }
}

/** Said at every start: after a logical restore every append fails until an operator acts (reads see the events below the counter). */
async function warnOfRefusedAppends(sql: Sql, log: Logger): Promise<void> {
  const counter = await readTransactionCounter(sql);
  if (counter.ok) return;
  log.warn(
    'the event store refuses appends: its transaction counter is behind the stored events (restored from a logical dump?); run recon store advance-xid',
    { lastCommit: counter.lastCommit?.toString(), nextTransaction: counter.nextTransaction.toString() },
  );
}

export async function closeRuntime(rt: Runtime): Promise<void> {
  await rt.store.close();
  await rt.db.close();
}

/** `withRuntime` for a command that judges (sync, project, statements): RECON_SUB_MERCHANTS is imported first. */
export function withJudgingRuntime<T>(
  fn: (rt: Runtime, signal: AbortSignal) => Promise<T>,
  opts: RuntimeOptions = {},
): Promise<T> {
  return withRuntime(fn, { ...opts, subMerchants: true });
}

/**
 * Runs a command body with a runtime, closing it afterwards. SIGINT/SIGTERM (and a reader of its output that
 * leaves, src/cli/stdout.ts) abort the signal given to the body; a second signal exits at once.
 */
export async function withRuntime<T>(
  fn: (rt: Runtime, signal: AbortSignal) => Promise<T>,
  opts: RuntimeOptions = {},
): Promise<T> {
  // An invalid configuration throws ConfigError: the command line shows every problem at once.
  const config = requireConfig();
  const log = loggerFor(config);
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals++;
    // a reader that left (src/cli/stdout.ts) is said by the status (141), as a Unix filter says nothing
    if (sig === 'SIGPIPE') log.debug('the reader of the output left, finishing');
    else log.info('signal received, finishing', { signal: sig });
    if (signals > 1) process.exit(130);
    controller.abort(new Interrupted(`interrupted by ${sig}`));
  };
  // Listening from the start: a signal while the database opens still ends in a clean close.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const rt = await openRuntime(config, { ...opts, log, signal: controller.signal });
    try {
      controller.signal.throwIfAborted();
      return await fn(rt, controller.signal);
    } finally {
      await closeRuntime(rt);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
