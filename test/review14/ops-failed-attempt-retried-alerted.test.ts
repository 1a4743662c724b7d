import { describe, expect, it, vi } from 'vitest';
import { type AlertDeps, evaluateAlerts } from '../../src/alerts/evaluate';
import { alertsConfigFrom } from '../../src/config/alerts';
import { silentLogger } from '../../src/log';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type RunOutcome } from '../../src/scheduler/scheduler';
import { createFakeClock } from '../support/fake-clock';
import { useTestStore } from '../support/db';

/**
 * docs/exceptions.md: `job_failed` raises "one alert per failed attempt of a scheduled job". A job_runs row is one
 * per occurrence, and its retry (at the job's next tick) overwrote the failure: status back to running, the error
 * cleared. An attempt that failed and was retried before the next evaluation was told to nobody: a job scheduled
 * more often than the alerts (RECON_CRON_HEALING every 5 minutes, alerts every 15), and with the default
 * schedules the alerts job's own failures, whose retry runs before the tick's evaluation. Each failed attempt is
 * now kept (job_run_failures) and alerted, whatever became of the occurrence since.
 */

const fx = useTestStore();

function alertDeps(clock: { now(): Date }): AlertDeps {
  const r = alertsConfigFrom(
    {
      channels: { team: { type: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 'env:R14_OPS_HOOK_SECRET' } },
      rules: [{ name: 'jobs', on: 'job_failed', channels: ['team'] }],
    },
    { R14_OPS_HOOK_SECRET: 'whsec_review14_ops' },
  );
  expect(r.problems).toEqual([]);
  return {
    sql: fx.db.sql,
    store: fx.store,
    log: silentLogger,
    config: r.config,
    timezone: 'UTC',
    projects: [],
    channelDeps: { mail: undefined },
    now: () => clock.now(),
  };
}

describe('a failed attempt whose retry succeeded before the next evaluation', () => {
  it('is alerted once all the same', async () => {
    const clock = createFakeClock('2026-03-10T10:01:00Z');
    const outcomes: RunOutcome[] = [];
    let calls = 0;
    const deps = alertDeps(clock);
    const s = createScheduler({
      sql: fx.db.sql,
      timezone: 'UTC',
      clock,
      onOutcome: (o) => outcomes.push(o),
      jobs: [
        {
          name: 'r14-every-5-min',
          description: 'fails its first attempt only',
          cron: '*/5 * * * *',
          run: async () => {
            calls++;
            if (calls === 1) throw new Error('PSP_NETWORK: PSP unreachable on POST /resend: ECONNRESET');
            return {};
          },
        },
      ],
    });
    s.start();
    await clock.advanceTo('2026-03-10T10:05:00Z');
    await vi.waitFor(() => expect(outcomes).toHaveLength(1), { timeout: 15_000 });
    expect(outcomes[0]).toMatchObject({ status: 'failed', attempt: 1 });
    await clock.advanceTo('2026-03-10T10:10:00Z'); // the retry of 10:05, then 10:10's own run
    await vi.waitFor(() => expect(outcomes).toHaveLength(3), { timeout: 15_000 });
    await s.stop();
    const rows = await runsOf(fx.db.sql, 'r14-every-5-min');
    expect(rows.map((r) => [r.scheduledFor.toISOString(), r.status, r.attempt])).toEqual([
      ['2026-03-10T10:05:00.000Z', 'succeeded', 2],
      ['2026-03-10T10:10:00.000Z', 'succeeded', 1],
    ]);

    await clock.advanceTo('2026-03-10T10:15:00Z'); // the alerts' tick
    const report = await evaluateAlerts(deps, { dryRun: true });
    expect(report.raised.map((a) => [a.kind, a.subject])).toEqual([
      ['job_failed', 'r14-every-5-min@2026-03-10T10:05:00.000Z#1'],
    ]);
  });
});
