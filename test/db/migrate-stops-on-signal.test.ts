import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../src/db/connect';
import { migrate, type Migration } from '../../src/db/migrate';
import { sha256Hex } from '../../src/canonical';
import { createLogger } from '../../src/log';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';

/**
 * SIGINT/SIGTERM while recon waits for another process's migrations (the session advisory lock
 * MIGRATION_LOCK of src/db/migrate.ts, which another migrator may hold for minutes: migration 0400 rewrites
 * es_events at about half a minute per million). WithRuntime aborted its signal, but
 * openDatabase/migrate never looked at it, so `recon start` ignored one SIGTERM for as long as the other
 * migrator ran. The lock is now tried again every 200 ms, and the signal ends the wait at once.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const MIGRATION_LOCK = 7_315_220_001n;
const WAITING = 'waiting for another process to finish migrating the database';

let db: TestDatabase;
let holder: Sql;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  holder = connect(db.url, { max: 1 });
});
afterAll(async () => {
  await holder.end({ timeout: 5 });
  await db.drop();
});

/** Runs `fn` while another session holds the migration lock. */
async function whileAnotherMigrates<T>(fn: (backendPid: number) => Promise<T>): Promise<T> {
  const conn = await holder.reserve();
  await conn`select pg_advisory_lock(${MIGRATION_LOCK})`;
  try {
    const [row] = await conn<{ pid: number }[]>`select pg_backend_pid() as pid`;
    return await fn(row!.pid);
  } finally {
    await conn`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    conn.release();
  }
}

function capturingLogger(): { log: ReturnType<typeof createLogger>; lines: { msg: string; [k: string]: unknown }[] } {
  const lines: { msg: string }[] = [];
  return { log: createLogger({ level: 'info', write: (l) => lines.push(JSON.parse(l) as { msg: string }) }), lines };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const tableExists = async (sql: Sql, name: string) =>
  (await sql<{ t: string | null }[]>`select to_regclass(${name})::text as t`)[0]?.t != null;

describe("recon start: one SIGTERM while it waits for another process's migrations", () => {
  it('stops at once (within 2 s), saying why, having applied nothing and left no connection', async () => {
    await whileAnotherMigrates(async (holderPid) => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, 'bin/recon.mjs'), 'start', '--port', '0', '--no-scheduler'],
        {
          cwd: ROOT,
          env: reconEnv({ databaseUrl: db.url }),
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      // It says so (a blocking wait, as before the fix, shows as a lock not granted).
      await until(
        async () =>
          stderr.includes(WAITING) ||
          (
            await db.sql<
              { n: number }[]
            >`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`
          )[0]!.n > 0,
        'the worker waits for the migration lock',
      );

      const t0 = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), 8_000)),
      ]);
      if (code === 'still running') child.kill('SIGKILL');
      expect(code, stderr).toBe(130);
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(stderr).toContain(
        'recon: interrupted by SIGTERM while waiting for another process to finish migrating the database (nothing applied)',
      );
      // The wait was logged once, naming the process waited for.
      const waitLines = stderr
        .split('\n')
        .filter((l) => l.startsWith('{') && l.includes(WAITING))
        .map((l) => JSON.parse(l) as { holderPid?: number; holderApplication?: string });
      expect(waitLines).toHaveLength(1);
      expect(waitLines[0]!.holderPid).toBe(holderPid);
      expect(waitLines[0]!.holderApplication).toMatch(/^recon:\d+$/);
      expect(await tableExists(db.sql, 'schema_migrations')).toBe(false);
      const [left] = await db.sql<
        { n: number }[]
      >`select count(*)::int as n from pg_stat_activity where application_name = ${`recon:${child.pid}`}`;
      expect(left!.n).toBe(0);
    });
  }, 60_000);
});

describe('migrate with a signal', () => {
  const migration = (version: number, name: string, sql: string): Migration => ({
    version,
    name,
    sql,
    checksum: sha256Hex(sql),
  });

  it('waits for another migrator while the signal is not aborted, then applies', async () => {
    const { log, lines } = capturingLogger();
    const controller = new AbortController();
    const migrations = [migration(1, 'one', 'create table t_one (x int)')];
    const { run } = await whileAnotherMigrates(async () => {
      const run = migrate(db.sql, log, migrations, { signal: controller.signal });
      await until(() => lines.some((l) => l.msg === WAITING), 'migrate waits');
      await new Promise((r) => setTimeout(r, 500));
      expect(await tableExists(db.sql, 't_one')).toBe(false);
      return { run }; // not awaited here: it waits for this lock
    });
    expect(await run).toEqual([1]);
    expect(lines.filter((l) => l.msg === WAITING)).toHaveLength(1); // said once, not at every try
  });

  it('an abort stops the wait at once', async () => {
    const { log, lines } = capturingLogger();
    const controller = new AbortController();
    await whileAnotherMigrates(async () => {
      const run = migrate(db.sql, log, [migration(2, 'two', 'create table t_two (x int)')], {
        signal: controller.signal,
      });
      const outcome = run.then(
        () => 'applied',
        (e: Error) => e.message,
      );
      await until(() => lines.some((l) => l.msg === WAITING), 'migrate waits');
      const t0 = Date.now();
      controller.abort(new Error('interrupted by SIGINT'));
      expect(await outcome).toBe(
        'interrupted by SIGINT while waiting for another process to finish migrating the database (nothing applied)',
      );
      expect(Date.now() - t0).toBeLessThan(500);
    });
    expect(await tableExists(db.sql, 't_two')).toBe(false);
    // The lock was never this run's: the next run takes it and applies.
    expect(
      await migrate(db.sql, log, [
        migration(1, 'one', 'create table t_one (x int)'),
        migration(2, 'two', 'create table t_two (x int)'),
      ]),
    ).toEqual([2]);
  });

  it('an abort during a migration lets it finish and stops before the next one', async () => {
    const { log } = capturingLogger();
    const controller = new AbortController();
    const migrations = [
      migration(1, 'one', 'create table t_one (x int)'),
      migration(2, 'two', 'create table t_two (x int)'),
      migration(3, 'slow', 'select pg_sleep(0.6); create table t_slow (x int)'),
      migration(4, 'after', 'create table t_after (x int)'),
    ];
    const run = migrate(db.sql, log, migrations, { signal: controller.signal }).then(
      () => 'applied',
      (e: Error) => e.message,
    );
    await until(
      async () =>
        (
          await db.sql<
            { n: number }[]
          >`select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(0.6)%' and pid <> pg_backend_pid()`
        )[0]!.n > 0,
      'the slow migration runs',
    );
    controller.abort(new Error('interrupted by SIGTERM'));
    expect(await run).toBe(
      'interrupted by SIGTERM before migration 4_after (1 applied by this run; the rest are applied at the next start)',
    );
    expect(await tableExists(db.sql, 't_slow')).toBe(true);
    expect(await tableExists(db.sql, 't_after')).toBe(false);
    expect(
      (await db.sql<{ version: number }[]>`select version from schema_migrations order by version`).map(
        (r) => r.version,
      ),
    ).toEqual([1, 2, 3]);
  });
});
