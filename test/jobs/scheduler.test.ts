import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect, type Sql } from '../../src/db/connect';
import { createFakeClock } from '../support/fake-clock';
import { nextRuns, parseCron, validateCron } from '../../src/scheduler/cron';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type JobDefinition, type RunOutcome } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';

let db: TestDatabase;
let second: Sql;
beforeAll(async () => {
  db = await createTestDatabase();
  second = connect(db.url, { max: 4 });
});
afterAll(async () => {
  await second.end({ timeout: 5 });
  await db.drop();
});

const iso = (d: Date) => d.toISOString();

describe('cron evaluation in the business zone', () => {
  it('accepts what node-cron accepts and refuses the rest with a reason', () => {
    expect(validateCron('30 2 * * *')).toBe(true);
    expect(validateCron('*/15 * * * *')).toBe(true);
    expect(validateCron('61 * * * *')).toBe(false);
    expect(validateCron('0 6 * * 5#2')).toBe(false);
    const p = parseCron('0 25 * * *', 'UTC');
    expect(p.ok).toBe(false);
  });

  it('runs a nonexistent wall time once, after the spring-forward gap, and an ambiguous one once', () => {
    const s = parseCron('30 3 * * *', 'Europe/Kyiv');
    if (!s.ok) throw new Error(s.reason);
    // 2024-03-31 03:00 Kyiv jumps to 04:00: 03:30 is read with the old offset (+02) → 01:30Z (04:30 local)
    expect(nextRuns(s.schedule, new Date('2024-03-29T00:00:00Z'), 4).map(iso)).toEqual([
      '2024-03-29T01:30:00.000Z',
      '2024-03-30T01:30:00.000Z',
      '2024-03-31T01:30:00.000Z',
      '2024-04-01T00:30:00.000Z',
    ]);
    // 2024-10-27 04:00 Kyiv falls back to 03:00: 03:30 happens twice, runs at the first (00:30Z) only
    expect(nextRuns(s.schedule, new Date('2024-10-26T01:00:00Z'), 2).map(iso)).toEqual([
      '2024-10-27T00:30:00.000Z',
      '2024-10-28T01:30:00.000Z',
    ]);
    const monthly = parseCron('0 6 1 * *', 'Europe/Kyiv');
    if (!monthly.ok) throw new Error(monthly.reason);
    expect(nextRuns(monthly.schedule, new Date('2024-02-15T00:00:00Z'), 2).map(iso)).toEqual([
      '2024-03-01T04:00:00.000Z',
      '2024-04-01T03:00:00.000Z',
    ]);
  });
});

function job(name: string, cron: string, run: JobDefinition['run']): JobDefinition {
  return { name, description: `test job ${name}`, cron, run };
}

describe('scheduler with a fake clock', () => {
  it('fires at the right local times across a DST change and records every run', async () => {
    const clock = createFakeClock('2024-03-29T00:00:00Z');
    const seen: Array<{ at: string; local: string }> = [];
    const outcomes: RunOutcome[] = [];
    const s = createScheduler({
      sql: db.sql,
      timezone: 'Europe/Kyiv',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        job('dst-nightly', '30 3 * * *', async (ctx) => {
          seen.push({
            at: iso(ctx.scheduledFor),
            local: new Intl.DateTimeFormat('en-GB', {
              timeZone: 'Europe/Kyiv',
              dateStyle: 'short',
              timeStyle: 'short',
            }).format(ctx.scheduledFor),
          });
          return { day: seen.length };
        }),
      ],
    });
    s.start();
    const expected = [
      '2024-03-29T01:30:00.000Z',
      '2024-03-30T01:30:00.000Z',
      '2024-03-31T01:30:00.000Z',
      '2024-04-01T00:30:00.000Z',
      '2024-04-02T00:30:00.000Z',
    ];
    for (const [i, at] of expected.entries()) {
      await clock.advanceTo(at);
      await vi.waitFor(() => expect(outcomes).toHaveLength(i + 1), { timeout: 15_000 });
    }
    await s.stop();
    // 03:30 local every day (+02 before the change, +03 after it); on 31 March 03:30 does not exist
    // (03:00 → 04:00) and the run happens once, at 04:30 local
    expect(seen.map((x) => x.at)).toEqual(expected);
    expect(seen.map((x) => x.local)).toEqual([
      '29/03/2024, 03:30',
      '30/03/2024, 03:30',
      '31/03/2024, 04:30',
      '01/04/2024, 03:30',
      '02/04/2024, 03:30',
    ]);
    const rows = await runsOf(db.sql, 'dst-nightly');
    expect(rows.map((r) => [iso(r.scheduledFor), r.status, r.trigger, r.attempt])).toEqual(
      expected.map((at) => [at, 'succeeded', 'schedule', 1]),
    );
    expect(rows[4]!.counters).toEqual({ day: 5 });
    expect(rows.every((r) => r.finishedAt !== null && r.error === null)).toBe(true);
  });

  it('skips a tick that would overlap the run still going, and records the skip', async () => {
    const clock = createFakeClock('2024-05-01T00:00:00Z');
    const outcomes: RunOutcome[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        job('slow-hourly', '0 * * * *', async () => {
          runs++;
          if (runs === 1) await gate;
        }),
      ],
    });
    s.start();
    await clock.advanceTo('2024-05-01T01:00:00Z');
    await vi.waitFor(
      async () => expect((await runsOf(db.sql, 'slow-hourly')).map((r) => r.status)).toEqual(['running']),
      { timeout: 15_000 },
    );
    await clock.advanceTo('2024-05-01T02:00:00Z');
    await vi.waitFor(() => expect(outcomes.map((o) => o.status)).toEqual(['skipped']), { timeout: 15_000 });
    release();
    await vi.waitFor(() => expect(outcomes.map((o) => o.status)).toEqual(['skipped', 'succeeded']), {
      timeout: 15_000,
    });
    await clock.advanceTo('2024-05-01T03:00:00Z');
    await vi.waitFor(() => expect(outcomes).toHaveLength(3), { timeout: 15_000 });
    await s.stop();
    expect(runs).toBe(2);
    const rows = await runsOf(db.sql, 'slow-hourly');
    expect(rows.map((r) => [iso(r.scheduledFor), r.status])).toEqual([
      ['2024-05-01T01:00:00.000Z', 'succeeded'],
      ['2024-05-01T02:00:00.000Z', 'skipped'],
      ['2024-05-01T03:00:00.000Z', 'succeeded'],
    ]);
  });

  it('two schedulers on one database: each occurrence executes exactly once', async () => {
    const clock = createFakeClock('2024-06-01T00:00:00Z');
    const executions: string[] = [];
    const outcomes: RunOutcome[] = [];
    const make = (sql: Sql, worker: string) =>
      createScheduler({
        sql,
        timezone: 'Europe/Kyiv',
        clock,
        worker,
        onOutcome: (o) => outcomes.push(o),
        jobs: [
          job('shared-healing', '15 * * * *', async (ctx) => {
            executions.push(iso(ctx.scheduledFor));
            // hold the run open for a while so that the other worker meets it in progress
            await new Promise((r) => setTimeout(r, 30));
            return { worker };
          }),
        ],
      });
    const a = make(db.sql, 'worker-a');
    const b = make(second, 'worker-b');
    a.start();
    b.start();
    const ticks = ['2024-06-01T00:15:00.000Z', '2024-06-01T01:15:00.000Z', '2024-06-01T02:15:00.000Z'];
    for (const [i, t] of ticks.entries()) {
      await clock.advanceTo(t);
      await vi.waitFor(() => expect(outcomes).toHaveLength(2 * (i + 1)), { timeout: 15_000 });
    }
    await Promise.all([a.stop(), b.stop()]);
    expect(executions).toEqual(ticks);
    const rows = await runsOf(db.sql, 'shared-healing');
    expect(rows.map((r) => [iso(r.scheduledFor), r.status, r.attempt])).toEqual(ticks.map((t) => [t, 'succeeded', 1]));
    expect(outcomes.filter((o) => o.status === 'succeeded')).toHaveLength(3);
    expect(
      outcomes
        .filter((o) => o.status !== 'succeeded')
        .every((o) => o.status === 'skipped' || o.status === 'already-done'),
    ).toBe(true);
  });

  it('retries a failed run at the next tick, then runs that tick', async () => {
    const clock = createFakeClock('2024-07-01T00:00:00Z');
    const outcomes: RunOutcome[] = [];
    const calls: string[] = [];
    let fail = true;
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        job('flaky-daily', '0 3 * * *', async (ctx) => {
          calls.push(`${iso(ctx.scheduledFor)}#${ctx.attempt}`);
          if (fail) {
            fail = false;
            throw new Error('PSP unreachable');
          }
          return { ok: 1 };
        }),
      ],
    });
    s.start();
    await clock.advanceTo('2024-07-01T03:00:00Z');
    await vi.waitFor(() => expect(outcomes).toHaveLength(1), { timeout: 15_000 });
    expect(outcomes[0]).toMatchObject({ status: 'failed', error: 'PSP unreachable', attempt: 1 });
    const failed = await runsOf(db.sql, 'flaky-daily');
    expect(failed.map((r) => [r.status, r.error])).toEqual([['failed', 'PSP unreachable']]);
    await clock.advanceTo('2024-07-02T03:00:00Z');
    await vi.waitFor(() => expect(outcomes).toHaveLength(3), { timeout: 15_000 });
    await s.stop();
    expect(calls).toEqual(['2024-07-01T03:00:00.000Z#1', '2024-07-01T03:00:00.000Z#2', '2024-07-02T03:00:00.000Z#1']);
    const rows = await runsOf(db.sql, 'flaky-daily');
    expect(rows.map((r) => [iso(r.scheduledFor), r.status, r.attempt, r.error])).toEqual([
      ['2024-07-01T03:00:00.000Z', 'succeeded', 2, null],
      ['2024-07-02T03:00:00.000Z', 'succeeded', 1, null],
    ]);
  });

  it('runs a job now on request, recorded as manual, and refuses unknown jobs', async () => {
    const clock = createFakeClock('2024-08-01T10:20:30.456Z');
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      jobs: [job('manual-one', '0 0 1 1 *', async () => ({ n: 7 }))],
    });
    const o = await s.runNow('manual-one');
    expect(o).toMatchObject({ status: 'succeeded', counters: { n: 7 } });
    const rows = await runsOf(db.sql, 'manual-one');
    expect(rows.map((r) => [iso(r.scheduledFor), r.trigger, r.status])).toEqual([
      ['2024-08-01T10:20:30.000Z', 'manual', 'succeeded'],
    ]);
    await expect(s.runNow('nope')).rejects.toMatchObject({ code: 'SCHEDULER_UNKNOWN_JOB' });
    expect(s.schedules()).toEqual([
      {
        name: 'manual-one',
        description: 'test job manual-one',
        cron: '0 0 1 1 *',
        nextRun: new Date('2025-01-01T00:00:00Z'),
      },
    ]);
    expect(() =>
      createScheduler({ sql: db.sql, timezone: 'UTC', jobs: [job('bad', '99 * * * *', async () => {})] }),
    ).toThrow(/invalid cron/);
  });
});
