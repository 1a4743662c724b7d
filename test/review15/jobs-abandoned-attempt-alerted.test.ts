import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failedRuns } from '../../src/alerts/evaluate';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type RunOutcome } from '../../src/scheduler/scheduler';
import { createFakeClock } from '../support/fake-clock';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A worker killed -9 in the middle of a scheduled run leaves its job_runs row `running`. With attempts left, the
 * next tick claimed that row again (attempt 2) and nothing kept attempt 1: job_run_failures, which the job_failed
 * alert reads, never had it, so a nightly run killed half-way (OOM, a deploy) and retried was told to nobody — when
 * a manual run or a last attempt left the same way is recorded failed ("abandoned") and alerted. Now the claim
 * records the dead attempt as failed, abandoned, before taking the occurrence again.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a scheduled attempt abandoned by a killed worker, retried by the next one', () => {
  it('is kept as a failed attempt (abandoned) for the job_failed alert, and the occurrence runs again', async () => {
    const job = 'r15-abandoned-nightly';
    const at = new Date('2025-03-10T00:30:00Z');
    // what a worker killed inside job.run() leaves: its row claimed, its session (and advisory locks) gone
    await db.sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at)
      values (${job}, ${at}, 'schedule', 'running', 1, 'dead-host:123', ${new Date('2025-03-10T00:30:01Z')})`;

    const clock = createFakeClock('2025-03-10T01:00:00Z');
    const outcomes: RunOutcome[] = [];
    const attempts: number[] = [];
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      jobs: [
        {
          name: job,
          description: 'nightly stand-in',
          cron: '30 0 * * *',
          async run(ctx) {
            attempts.push(ctx.attempt);
            return { ok: 1 };
          },
        },
      ],
      onOutcome: (o) => outcomes.push(o),
    });
    s.start();
    await vi.waitFor(() => expect(outcomes).toHaveLength(1), { timeout: 15_000 });
    await s.stop();

    expect(attempts).toEqual([2]);
    expect((await runsOf(db.sql, job)).map((r) => [r.status, r.attempt])).toEqual([['succeeded', 2]]);
    const failed = (await failedRuns(db.sql, new Date('2025-03-01T00:00:00Z'))).filter((f) => f.job === job);
    expect(failed.map((f) => [f.scheduledFor.toISOString(), f.attempt])).toEqual([[at.toISOString(), 1]]);
    expect(failed[0]?.error).toMatch(/abandoned/);
  });
});
