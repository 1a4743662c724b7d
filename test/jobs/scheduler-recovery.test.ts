import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect, type Sql } from '../../src/db/connect';
import { previousMonth } from '../../src/export/nightly/report';
import { createLogger } from '../../src/log';
import { createFakeClock } from '../support/fake-clock';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type JobDefinition, type RunOutcome } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * What happens to an occurrence of a scheduled job that a worker never finished (killed mid-run), never
 * started (down at the scheduled time, or its tick met a database outage), or that failed twice in a row
 * (only the latest earlier occurrence was retried, and only when `failed`).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const iso = (d: Date) => d.toISOString();
const TZ = 'Europe/Kyiv';

function monthlyJob(name: string, issued: string[]): JobDefinition {
  // Stands in for jobs/monthly-statements.ts: issues previousMonth(scheduledFor) in the business zone.
  return {
    name,
    description: 'monthly statements stand-in',
    cron: '0 6 1 * *',
    async run(ctx) {
      const month = previousMonth(ctx.scheduledFor, TZ);
      issued.push(`${month}#${ctx.attempt}`);
      return { month };
    },
  };
}

describe('scheduler: abandoned and missed occurrences', () => {
  it('an occurrence abandoned by a worker killed mid-run (row left "running", no lock held) is run again at the next tick', async () => {
    // A worker started the monthly run of 1 February (06:00 Kyiv = 04:00Z) and was killed -9: its session
    // (and advisory locks) died with it and job_runs keeps the row it claimed, status 'running'.
    // This is exactly what execute() leaves behind when the process dies inside job.run().
    const dying = connect(db.url, { max: 1 });
    const worker = createScheduler({
      sql: dying,
      timezone: TZ,
      clock: createFakeClock('2025-02-01T03:59:00Z'),
      jobs: [
        { name: 'rec-monthly-abandoned', description: 'hangs', cron: '0 6 1 * *', run: () => new Promise(() => {}) },
      ],
    });
    void worker.runNow('rec-monthly-abandoned').catch(() => {});
    await vi.waitFor(
      async () => expect((await runsOf(db.sql, 'rec-monthly-abandoned')).map((r) => r.status)).toEqual(['running']),
      { timeout: 15_000 },
    );
    // kill -9: the connection (and the locks it holds) goes away; the row stays.
    await dying.end({ timeout: 0 });
    // Make the abandoned row the scheduled occurrence of 1 February (runNow stamped it with the fake clock's now).
    await db.sql`update job_runs set scheduled_for = '2025-02-01T04:00:00Z', trigger = 'schedule' where job = 'rec-monthly-abandoned'`;

    // The worker is restarted the same morning and keeps running through the next tick (1 March).
    const issued: string[] = [];
    const outcomes: RunOutcome[] = [];
    const clock = createFakeClock('2025-02-01T05:00:00Z');
    const s = createScheduler({
      sql: db.sql,
      timezone: TZ,
      clock,
      jobs: [monthlyJob('rec-monthly-abandoned', issued)],
      onOutcome: (o) => outcomes.push(o),
    });
    s.start();
    await clock.advanceTo('2025-03-01T04:00:00Z'); // 06:00 Kyiv on 1 March
    await vi.waitFor(() => expect(outcomes.length).toBeGreaterThanOrEqual(1), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();

    const rows = await runsOf(db.sql, 'rec-monthly-abandoned');
    // January's statements are issued (retry of the abandoned occurrence, attempt 2) before February's.
    expect(issued).toEqual(['2025-01#2', '2025-02#1']);
    expect(rows.map((r) => [iso(r.scheduledFor), r.status])).toEqual([
      ['2025-02-01T04:00:00.000Z', 'succeeded'],
      ['2025-03-01T04:00:00.000Z', 'succeeded'],
    ]);
  });

  it('an occurrence whose time passed while the worker was down is run when the worker starts', async () => {
    // January's run (1 January 06:00 Kyiv) succeeded; the worker was stopped for a deploy on the morning of
    // 1 February and started again at 07:00 Kyiv, one hour after the monthly job's time.
    await db.sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at)
      values ('rec-monthly-down', '2025-01-01T04:00:00Z', 'schedule', 'succeeded', 1, 'old', '2025-01-01T04:00:00Z', '2025-01-01T04:01:00Z')`;
    const issued: string[] = [];
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    const clock = createFakeClock('2025-02-01T05:00:00Z'); // 07:00 Kyiv, 1 February
    const s = createScheduler({
      sql: db.sql,
      timezone: TZ,
      clock,
      log,
      jobs: [monthlyJob('rec-monthly-down', issued)],
    });
    s.start();
    await clock.advanceTo('2025-02-27T00:00:00Z'); // nearly a month later, before the next tick
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();

    const rows = await runsOf(db.sql, 'rec-monthly-down');
    expect(issued).toEqual(['2025-01#1']);
    expect(rows.map((r) => [iso(r.scheduledFor), r.status])).toEqual([
      ['2025-01-01T04:00:00.000Z', 'succeeded'],
      ['2025-02-01T04:00:00.000Z', 'succeeded'],
    ]);
    expect(lines.some((l) => l.includes('running an owed job occurrence') && l.includes('missed'))).toBe(true);
  });

  it('a failed occurrence gets its 3 attempts even when the next tick fails too', async () => {
    // docs/outputs.md: "a failed occurrence is run again at the job's next tick ..., up to 3 attempts in all".
    const calls: string[] = [];
    const outcomes: RunOutcome[] = [];
    const clock = createFakeClock('2024-09-01T00:00:00Z');
    let failing = 3; // the PSP is down for three runs (1st night, its retry and 2nd night)
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        {
          name: 'rec-daily-retries',
          description: 'fails for a while',
          cron: '0 3 * * *',
          async run(ctx) {
            calls.push(`${iso(ctx.scheduledFor).slice(0, 10)}#${ctx.attempt}`);
            if (failing-- > 0) throw new Error('PSP unreachable');
            return {};
          },
        },
      ],
    });
    s.start();
    for (const [i, [at, n]] of (
      [
        ['2024-09-01T03:00:00Z', 1],
        ['2024-09-02T03:00:00Z', 3],
        ['2024-09-03T03:00:00Z', 5],
      ] as const
    ).entries()) {
      await clock.advanceTo(at);
      await vi.waitFor(() => expect(outcomes.length).toBeGreaterThanOrEqual(n), { timeout: 15_000 });
      void i;
    }
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();
    const rows = await runsOf(db.sql, 'rec-daily-retries');
    // 1 September's occurrence is tried a third time (attempt 3) on 3 September.
    expect(calls).toContain('2024-09-01#3');
    expect(rows.map((r) => [iso(r.scheduledFor).slice(0, 10), r.status])).toEqual([
      ['2024-09-01', 'succeeded'],
      ['2024-09-02', 'succeeded'],
      ['2024-09-03', 'succeeded'],
    ]);
  });

  it('an occurrence whose tick met a short PostgreSQL outage is retried at the next tick (or at least recorded)', async () => {
    // The database is unreachable for a few minutes around 03:00 (the outage docs/reliability.md says the
    // worker survives); the scheduler's first query of the tick fails.
    let down = false;
    const refused = () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const flaky = new Proxy(db.sql, {
      apply(target, thisArg, args) {
        return down ? refused() : Reflect.apply(target as never, thisArg, args);
      },
      get(target, prop) {
        if (prop === 'reserve' && down) return refused;
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as Sql;
    const calls: string[] = [];
    const lines: string[] = [];
    const clock = createFakeClock('2024-10-01T00:00:00Z');
    const s = createScheduler({
      sql: flaky,
      timezone: 'UTC',
      clock,
      log: createLogger({ level: 'debug', write: (l) => lines.push(l) }),
      jobs: [
        {
          name: 'rec-daily-outage',
          description: 'nightly stand-in',
          cron: '0 3 * * *',
          async run(ctx) {
            calls.push(iso(ctx.scheduledFor).slice(0, 10));
            return {};
          },
        },
      ],
    });
    s.start();
    down = true;
    await clock.advanceTo('2024-10-01T03:00:00Z');
    await vi.waitFor(() => expect(lines.some((l) => l.includes('job tick failed'))).toBe(true), { timeout: 15_000 });
    down = false; // back a few minutes later
    await clock.advanceTo('2024-10-02T03:00:00Z');
    await vi.waitFor(() => expect(calls).toContain('2024-10-02'), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();
    const rows = await runsOf(db.sql, 'rec-daily-outage');
    // 1 October is run at the next tick like a failed occurrence (it never ran), or is in job_runs.
    expect(calls).toEqual(['2024-10-01', '2024-10-02']);
    expect(rows.map((r) => iso(r.scheduledFor).slice(0, 10))).toEqual(['2024-10-01', '2024-10-02']);
  });
});
