import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/scheduler/clock';
import { createScheduler, type RunOutcome } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A worker woken a week late (a suspended VM, a clock moved on): its loop looked for the latest occurrence due by
 * stepping through every occurrence missed, one `nextRun` at a time, on the event loop. For a 6-field schedule
 * (docs/reliability.md runs every 5 s) a week is 120,960 steps (~20 s with nothing else answering: no webhook,
 * no /readyz); a year's clock jump on `* * * * *` as long. Found in review 14; now bounded (a bisection).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

/** A clock whose first sleep wakes when the test says, at whatever time the test has set by then. */
function suspendableClock(start: string) {
  let now = Date.parse(start);
  let wake: (() => void) | undefined;
  const clock: Clock = {
    now: () => new Date(now),
    sleepUntil: (_at, signal) =>
      new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        wake = resolve;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  };
  return {
    clock,
    resumeAt(at: string) {
      now = Date.parse(at);
      wake?.();
    },
    get sleeping() {
      return wake !== undefined;
    },
  };
}

describe('scheduler woken long after its tick', () => {
  it('finds the latest occurrence due without stepping through every one missed', async () => {
    const c = suspendableClock('2025-03-01T00:00:00Z');
    const outcomes: RunOutcome[] = [];
    const s = createScheduler({
      sql: db.sql,
      timezone: 'Europe/Kyiv',
      clock: c.clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [{ name: 'every-5s', description: 'dense', cron: '*/5 * * * * *', run: async () => ({}) }],
    });
    s.start();
    await vi.waitFor(() => expect(c.sleeping).toBe(true), { timeout: 10_000 });
    const woken = Date.now();
    c.resumeAt('2025-03-08T00:00:02Z');
    await vi.waitFor(() => expect(outcomes.length).toBe(1), { timeout: 60_000, interval: 20 });
    const took = Date.now() - woken;
    await s.stop();
    // the tick's own occurrence is the latest due at wake-up (a job that never ran owes nothing before it)
    expect(outcomes[0]).toMatchObject({ status: 'succeeded', job: 'every-5s' });
    expect(outcomes[0]!.scheduledFor.toISOString()).toBe('2025-03-08T00:00:00.000Z');
    expect(took).toBeLessThan(3_000);
  }, 90_000);
});
