import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { connect, type Sql } from '../../src/db/connect';
import { runsOf } from '../../src/scheduler/job-runs';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon, waitFor } from '../faults/support/processes';

/**
 * `recon run JOB` waiting on PostgreSQL (a lock another session holds: a long migration, a rebuild, an
 * operator's transaction) ignored SIGTERM for as long as the wait lasted: the job's signal is only seen
 * between steps, and `recon run` had none of the stop bounds `recon start` and `recon project` have
 * (src/cli/shutdown.ts, RECON_STOP_GRACE_MS). A supervisor's stop, or a deploy, waited for ever or killed it -9.
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

describe('recon run JOB with a query that does not end', () => {
  it('stops within RECON_STOP_GRACE_MS and the hard bound of SIGTERM, exit 130', { timeout: 120_000 }, async () => {
    const conn = await holder.reserve();
    await conn`begin`;
    await conn`lock table projection_builds in access exclusive mode`;
    try {
      const p = spawnRecon(
        ['run', 'nightly-reconciliation'],
        reconEnv({ databaseUrl: db.url, extra: { RECON_STOP_GRACE_MS: String(GRACE_MS) } }),
      );
      await waitFor(
        async () =>
          (
            await db.sql`select 1 from pg_stat_activity
              where application_name = ${`recon:${p.pid}`} and wait_event_type = 'Lock'`
          ).length > 0,
        { timeoutMs: 60_000, intervalMs: 50, what: 'recon run waiting on the lock' },
      );
      const sent = Date.now();
      p.kill('SIGTERM');
      const exited = await Promise.race([
        p.exited.then((e) => e.code),
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), GRACE_MS + 10_000)),
      ]);
      expect({ exited, took: Date.now() - sent < GRACE_MS + 10_000 }).toEqual({ exited: 130, took: true });
      expect((await runsOf(db.sql, 'nightly-reconciliation')).map((r) => r.status)).not.toContain('running');
    } finally {
      await conn`rollback`;
      conn.release();
    }
  });
});
