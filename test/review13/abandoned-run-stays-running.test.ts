import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failedRuns } from '../../src/alerts/evaluate';
import { connect } from '../../src/db/connect';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type JobDefinition } from '../../src/scheduler/scheduler';
import { createFakeClock } from '../support/fake-clock';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A run whose process died (kill -9, the stop's hard bound, a lost host) leaves its job_runs row "running".
 * The scheduler takes such a row back only when it is a scheduled occurrence with attempts left. A manual run
 * (`recon run JOB`, the console's "run now") and the last attempt of an occurrence were never looked at again:
 * `recon jobs` showed them running for ever, and the job_failed alert (status 'failed' only) never told anyone.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const TZ = 'Europe/Kyiv';

/** Starts `name` on a connection of its own and kills that connection mid-run, as kill -9 of its process does. */
async function abandon(name: string, at: string): Promise<void> {
  const dying = connect(db.url, { max: 1 });
  const worker = createScheduler({
    sql: dying,
    timezone: TZ,
    clock: createFakeClock(at),
    jobs: [{ name, description: 'hangs', cron: '15 * * * *', run: () => new Promise(() => {}) }],
  });
  void worker.runNow(name).catch(() => {});
  await vi.waitFor(async () => expect((await runsOf(db.sql, name)).map((r) => r.status)).toEqual(['running']), {
    timeout: 15_000,
  });
  await dying.end({ timeout: 0 });
}

const job = (name: string): JobDefinition => ({ name, description: 'fine', cron: '15 * * * *', run: async () => ({}) });

async function workerThrough(name: string, from: string, to: string): Promise<void> {
  const clock = createFakeClock(from);
  const s = createScheduler({ sql: db.sql, timezone: TZ, clock, jobs: [job(name)] });
  s.start();
  await clock.advanceTo(to);
  await new Promise((r) => setTimeout(r, 500));
  await s.stop();
}

describe('a run abandoned by a process that died', () => {
  it('a manual run (recon run) killed mid-run is not left "running" once a worker has started', async () => {
    await abandon('r13-manual-killed', '2025-03-10T10:00:00Z');
    await workerThrough('r13-manual-killed', '2025-03-10T10:05:00Z', '2025-03-10T13:30:00Z');
    const rows = await runsOf(db.sql, 'r13-manual-killed');
    const manual = rows.filter((r) => r.trigger === 'manual');
    expect(manual.map((r) => r.status)).toEqual(['failed']);
    expect((await failedRuns(db.sql, new Date('2025-03-01T00:00:00Z'))).map((r) => r.job)).toContain(
      'r13-manual-killed',
    );
  });

  it('the last attempt of a scheduled occurrence killed mid-run is not left "running"', async () => {
    await abandon('r13-last-attempt-killed', '2025-03-10T08:15:00Z');
    // the row is the occurrence of 10:15 (08:15Z), on its third and last attempt
    await db.sql`update job_runs set trigger = 'schedule', attempt = 3 where job = 'r13-last-attempt-killed'`;
    await workerThrough('r13-last-attempt-killed', '2025-03-10T08:20:00Z', '2025-03-10T11:30:00Z');
    const rows = await runsOf(db.sql, 'r13-last-attempt-killed');
    expect(rows.filter((r) => r.status === 'running')).toEqual([]);
    expect(rows[0]).toMatchObject({ status: 'failed', attempt: 3 });
  });
});
