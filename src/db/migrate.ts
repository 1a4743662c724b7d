import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log';
import { sha256Hex } from '../canonical';
import type { Sql } from './sql';
import { Interrupted } from '../errors';
import { DatabaseSetupError } from './errors';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

/** Plain SQL files named NNNN_name.sql, in version order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(path.join(dir, f), 'utf8');
      return { version: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: text, checksum: sha256Hex(text) };
    });
}

// Any fixed 64-bit key: every recon process agrees on it, nothing else uses it.
const MIGRATION_LOCK = 7_315_220_001n;
/** How often a process waiting for another one's migrations tries the lock again. */
const LOCK_RETRY_MS = 200;

export interface MigrateOptions {
  /**
   * Stops the run: while it waits for another process's migrations (at once), or between two migrations
   * (one being applied is finished first; each is its own transaction). The run then fails with the
   * signal's reason and what was done.
   */
  readonly signal?: AbortSignal;
}

function interrupted(signal: AbortSignal, what: string): Error {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  return new Interrupted(`${reason} ${what}`);
}

/**
 * Takes the migration lock on `conn`, waiting for another process that holds it. Tried again every
 * LOCK_RETRY_MS rather than waited for in one blocking call, so that the signal is seen at once (found in
 * review: `recon start` ignored SIGTERM for as long as another process migrated, which can be minutes).
 */
async function takeMigrationLock(
  conn: Awaited<ReturnType<Sql['reserve']>>,
  log: Logger,
  signal: AbortSignal | undefined,
): Promise<void> {
  let logged = false;
  for (;;) {
    if (signal?.aborted)
      throw interrupted(signal, 'while waiting for another process to finish migrating the database (nothing applied)');
    const [row] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${MIGRATION_LOCK}) as locked`;
    if (row?.locked) return;
    if (!logged) {
      logged = true;
      const holder = await conn<{ pid: number; application_name: string }[]>`
        select a.pid, a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
          and ((l.classid::int8 << 32) | l.objid::int8) = ${MIGRATION_LOCK} and l.objsubid = 1`.catch(() => []);
      log.info(
        'waiting for another process to finish migrating the database',
        holder[0] ? { holderPid: holder[0].pid, holderApplication: holder[0].application_name } : {},
      );
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, LOCK_RETRY_MS);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * Applies pending migrations, each in its own transaction, recorded in schema_migrations. A session
 * advisory lock on one reserved connection makes concurrent runs from several processes wait for each
 * other; a dropped connection releases it, so a killed process never leaves it behind.
 */
export async function migrate(
  sql: Sql,
  log: Logger,
  migrations: Migration[] = loadMigrations(),
  opts: MigrateOptions = {},
): Promise<number[]> {
  const { signal } = opts;
  const applied: number[] = [];
  const conn = await sql.reserve();
  let locked = false;
  try {
    await takeMigrationLock(conn, log, signal);
    locked = true;
    await conn`create table if not exists schema_migrations (
      version int primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
    const done = new Map(
      (await conn<{ version: number; checksum: string }[]>`select version, checksum from schema_migrations`).map(
        (r) => [r.version, r.checksum],
      ),
    );
    for (const m of migrations) {
      const seen = done.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum)
          throw new DatabaseSetupError(
            `migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`,
          );
        continue;
      }
      if (signal?.aborted) {
        throw interrupted(
          signal,
          `before migration ${m.version}_${m.name} (${applied.length} applied by this run; the rest are applied at the next start)`,
        );
      }
      try {
        await conn`begin`;
        // a migration is a static SQL file of several statements (the simple protocol), nothing interpolated
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
        await conn`commit`;
      } catch (e) {
        await conn`rollback`.catch(() => {});
        throw new Error(`migration ${m.version}_${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.version);
      log.info('migration applied', { version: m.version, name: m.name });
    }
  } finally {
    if (locked) await conn`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {});
    conn.release();
  }
  return applied;
}
