import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFakeClock } from '../support/fake-clock';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type RunOutcome } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * More owed occurrences than one tick runs (40): the tick's own occurrence waits too, so that it does not
 * become the latest recorded one and hide the owed ones after the first 40 (a worker down for
 * a weekend lost 5 hourly runs for good).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('scheduler: owed occurrences beyond the 40 a tick runs', () => {
  it('a worker down for a weekend (85 hourly occurrences missed) runs every missed occurrence over its next ticks', async () => {
    // hourly healing ('15 * * * *'), last run Friday 10:15Z; the worker is down until Tuesday 00:00Z.
    await db.sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at)
      values ('owed-hourly', '2025-03-07T10:15:00Z', 'schedule', 'succeeded', 1, 'old', '2025-03-07T10:15:00Z', '2025-03-07T10:16:00Z')`;
    const ran: string[] = [];
    const outcomes: RunOutcome[] = [];
    const clock = createFakeClock('2025-03-11T00:00:00Z');
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        {
          name: 'owed-hourly',
          description: 'healing stand-in',
          cron: '15 * * * *',
          async run(ctx) {
            ran.push(ctx.scheduledFor.toISOString());
            return {};
          },
        },
      ],
    });
    s.start();
    // start: 40 owed
    await vi.waitFor(() => expect(outcomes.length).toBeGreaterThanOrEqual(40), { timeout: 30_000 });
    // the next ticks: "the rest by the next ones" (MAX_OWED's comment)
    let expected = 40;
    for (const at of ['2025-03-11T00:15:00Z', '2025-03-11T01:15:00Z', '2025-03-11T02:15:00Z', '2025-03-11T03:15:00Z']) {
      await clock.advanceTo(at);
      await vi.waitFor(() => expect(outcomes.length).toBeGreaterThan(expected), { timeout: 30_000 });
      await new Promise((r) => setTimeout(r, 300));
      expected = outcomes.length;
    }
    await s.stop();

    const want: string[] = [];
    for (let t = Date.parse('2025-03-07T10:15:00Z'); t <= Date.parse('2025-03-11T03:15:00Z'); t += 3_600_000)
      want.push(new Date(t).toISOString());
    const rows = await runsOf(db.sql, 'owed-hourly');
    const have = rows
      .filter((r) => r.status === 'succeeded')
      .map((r) => r.scheduledFor.toISOString())
      .sort();
    const missing = want.filter((w) => !have.includes(w));
    expect(missing).toEqual([]);
    expect(ran.length).toBe(want.length - 1);
  });
});
