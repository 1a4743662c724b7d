import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The worker stops its scheduler (`scheduler.stop()`: "aborts running jobs' signals and waits for them to
 * finish"), then closes the database. A run started from the console ("Run now", scheduler.runNow) was not
 * among the runs stop() waited for: stop() returned at once, the worker closed the pool under the job, and
 * its job_runs row stayed "running" (the update recording how it ended had no connection left).
 * src/cli/worker.ts says of stop(): "it waits for a run started from the console".
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('scheduler.stop() with a run started by runNow', () => {
  it('waits for it to finish and record how it ended', async () => {
    let finished = false;
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      jobs: [
        {
          name: 'r13-console-run',
          description: 'takes a while',
          cron: '0 3 1 1 *',
          run: async () => {
            await new Promise((r) => setTimeout(r, 1500));
            finished = true;
            return {};
          },
        },
      ],
    });
    const run = s.runNow('r13-console-run').catch(() => undefined);
    await vi.waitFor(
      async () => expect((await runsOf(db.sql, 'r13-console-run')).map((r) => r.status)).toEqual(['running']),
      { timeout: 10_000 },
    );
    await s.stop();
    const afterStop = { finished, statuses: (await runsOf(db.sql, 'r13-console-run')).map((r) => r.status) };
    await run;
    expect(afterStop.finished).toBe(true);
    expect(afterStop.statuses).not.toContain('running');
  });
});
