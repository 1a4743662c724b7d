import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { connect, type Sql } from '../../src/db/connect';
import { runsOf } from '../../src/scheduler/job-runs';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon, waitFor } from '../faults/support/processes';

/**
 * `recon run nightly-reconciliation` stopped by SIGTERM (or Ctrl-C) while its projections catch up. The runner
 * stops between batches and returns as if caught up, and the job went on: it wrote the nightly report from read
 * models that had not caught up, recorded the occurrence `succeeded` (so never run again) and `recon run`
 * exited 0. The README: 130 "stopped by SIGINT or SIGTERM before it finished, nothing half-applied: run it
 * again". In `recon start` the same: a stop during the nightly run recorded it done, its report short.
 */

let db: TestDatabase;
let holder: Sql;
const out = mkdtempSync(path.join(tmpdir(), 'r13-run-int-'));
beforeAll(async () => {
  db = await createTestDatabase();
  holder = connect(db.url, { max: 1 });
});
afterAll(async () => {
  await killAll();
  await holder?.end({ timeout: 5 });
  await db?.drop();
  rmSync(out, { recursive: true, force: true });
});

const env = () => reconEnv({ databaseUrl: db.url, extra: { RECON_OUT_DIR: out } });

const stuck = (pid: number) =>
  waitFor(
    async () =>
      (
        await db.sql`
        select 1 from pg_stat_activity where application_name = ${`recon:${pid}`} and wait_event_type = 'Lock'`
      ).length > 0,
    { timeoutMs: 60_000, intervalMs: 50, what: `recon (pid ${pid}) waiting on the lock` },
  );

describe('recon run JOB stopped by SIGTERM', () => {
  it('exits 130, writes no report and does not record the occurrence succeeded', { timeout: 120_000 }, async () => {
    const built = spawnRecon(['project'], env());
    expect((await built.exited).code, built.stderr()).toBe(0);
    const conn = await holder.reserve();
    await conn`begin`;
    await conn`lock table projection_builds in access exclusive mode`;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await conn`rollback`;
      conn.release();
    };
    try {
      const p = spawnRecon(['run', 'nightly-reconciliation'], env());
      await stuck(p.pid);
      p.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 1500));
      await release(); // the projections go on, see the signal and stop between batches
      const { code } = await p.exited;
      const runs = await runsOf(db.sql, 'nightly-reconciliation');
      expect(runs.map((r) => r.status)).not.toContain('succeeded');
      expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
      expect({ code, stdout: p.stdout() }).toEqual({ code: 130, stdout: expect.not.stringContaining('succeeded') });
    } finally {
      await release();
    }
  });
});
