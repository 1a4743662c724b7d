import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { boundStop, EXIT_FORCED } from '../../src/cli/shutdown';
import { connect, type Sql } from '../../src/db/connect';
import { createLogger } from '../../src/log';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon, waitFor } from './support/processes';

/**
 * SIGTERM stops `recon project` and `recon start` within a bounded time whatever they are doing
 * (src/cli/shutdown.ts): here, waiting on PostgreSQL for a lock another session holds for ever. Once the
 * signal is RECON_STOP_GRACE_MS old, the process's own queries are cancelled on the server; `recon project`
 * then exits 130 (interrupted), `recon start` finishes its stop and exits 0. Through the real binary.
 */

let db: TestDatabase;
let holder: Sql;
beforeAll(async () => {
  db = await createTestDatabase();
  holder = connect(db.url, { max: 1 });
});
afterAll(async () => {
  await killAll();
  await holder?.end({ timeout: 5 });
  await db?.drop();
});

const GRACE_MS = 1000;

/** Runs `fn` while another session holds projection_builds locked (every projection run waits on it). */
async function whileLocked<T>(fn: () => Promise<T>): Promise<T> {
  const conn = await holder.reserve();
  await conn`begin`;
  await conn`lock table projection_builds in access exclusive mode`;
  try {
    return await fn();
  } finally {
    await conn`rollback`;
    conn.release();
  }
}

/** Waits until a backend of the process `pid` waits on a lock. */
const stuck = (pid: number) =>
  waitFor(
    async () => {
      const rows = await db.sql`
        select 1 from pg_stat_activity where application_name = ${`recon:${pid}`} and wait_event_type = 'Lock'`;
      return rows.length > 0;
    },
    { timeoutMs: 60_000, intervalMs: 50, what: `recon (pid ${pid}) waiting on the lock` },
  );

const env = () => reconEnv({ databaseUrl: db.url, extra: { RECON_STOP_GRACE_MS: String(GRACE_MS) } });

describe('SIGTERM with a PostgreSQL query that does not end', () => {
  it('recon project exits 130 within the bound, its query cancelled, no transaction left open', {
    timeout: 120_000,
  }, async () => {
    await whileLocked(async () => {
      const p = spawnRecon(['project'], env());
      await stuck(p.pid);
      const sent = Date.now();
      p.kill('SIGTERM');
      const { code } = await p.exited;
      const took = Date.now() - sent;
      expect(code, p.stderr()).toBe(130);
      expect(took).toBeLessThan(GRACE_MS + 8000);
      expect(p.stderr()).toContain('recon project still stopping: cancelling its database queries');
      expect(p.stderr()).toMatch(/interrupted/);
      const left = await db.sql`select 1 from pg_stat_activity where application_name = ${`recon:${p.pid}`}`;
      expect(left.length).toBe(0);
    });
  });

  it('recon start stops within the bound and exits 0 after cancelling its stuck query', {
    timeout: 120_000,
  }, async () => {
    await whileLocked(async () => {
      const w = spawnRecon(['start', '--port', '0', '--no-scheduler'], env());
      await w.waitForOutput(/listening on http:\/\/\S+/, 60_000);
      await stuck(w.pid);
      const sent = Date.now();
      w.kill('SIGTERM');
      const { code } = await w.exited;
      const took = Date.now() - sent;
      expect(code, w.stderr()).toBe(0);
      expect(took).toBeLessThan(GRACE_MS + 8000);
      expect(w.stderr()).toContain('recon start still stopping: cancelling its database queries');
      expect(w.stderr()).toContain('worker stopped');
    });
  });

  it('the bounds: the stuck query is cancelled after the grace, and the process exits 130 after the hard bound', async () => {
    const sql = connect(db.url, { max: 2 });
    const lines: string[] = [];
    const log = createLogger({ level: 'info', write: (l) => lines.push(l) });
    const exits: Array<{ code: number; at: number }> = [];
    const controller = new AbortController();
    const start = Date.now();
    const disarm = boundStop(sql, controller.signal, log, { graceMs: 300, hardMs: 700 }, 'test', (code) =>
      exits.push({ code, at: Date.now() - start }),
    );
    try {
      const sleeping = sql`select pg_sleep(60)`.then(
        () => 'finished',
        (e: { code?: string }) => e.code,
      );
      await waitFor(
        async () =>
          (await db.sql`select 1 from pg_stat_activity where query like 'select pg_sleep(60)%' and state = 'active'`)
            .length > 0,
        { what: 'the sleeping query' },
      );
      controller.abort();
      expect(await sleeping).toBe('57014');
      expect(Date.now() - start).toBeLessThan(5000);
      await waitFor(() => exits.length > 0, { timeoutMs: 5000, what: 'the hard bound' });
      expect(exits[0]!.code).toBe(EXIT_FORCED);
      expect(exits[0]!.at).toBeGreaterThanOrEqual(1000);
      expect(lines.join('\n')).toContain('test did not stop in time: exiting now');
    } finally {
      disarm();
      await sql.end({ timeout: 1 });
    }
  });
});
