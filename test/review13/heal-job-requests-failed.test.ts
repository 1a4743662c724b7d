import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { runsOf } from '../../src/scheduler/job-runs';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon } from '../faults/support/processes';

/**
 * `recon run hourly-healing` (and the scheduled job) when the PSP refuses or never answers the re-send
 * requests: healMissingWebhooks counts each as failed and returns, and the job recorded the run `succeeded`,
 * `recon run` exiting 0. `recon heal` exits 1 for the same ("heal requests failed", README exit codes), and
 * nothing alerted: the job_failed rule reads failed runs only, so a PSP that refused every re-send hour after
 * hour (revoked key, endpoint down) was never told to anyone.
 */

let db: TestDatabase;
let posId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  const scenario = scenarioFor({ seed: 11, payments: 120, month: '2025-01', timezone: 'UTC', subMerchants: 4 });
  posId = scenario.posIds[0]!;
  const store = createPostgresEventStore(db.sql);
  for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('the healing job with every re-send request failing', () => {
  it('is recorded failed and recon run exits 1', { timeout: 180_000 }, async () => {
    const project = {
      name: 'default',
      posId,
      baseUrl: 'http://127.0.0.1:9/',
      reportUrl: 'http://127.0.0.1:9/',
      apiKey: 'key_abcdefghijkl',
      apiSecret: 'secret_abcdefghijkl',
      endpointsKey: 'endpoints_abcdefghijkl',
      authScheme: 'PAY',
    };
    const p = spawnRecon(
      ['run', 'hourly-healing'],
      reconEnv({ databaseUrl: db.url, project, extra: { RECON_GRACE_HOURS: '0', RECON_PSP_TIMEOUT_MS: '500' } }),
    );
    const { code } = await p.exited;
    const [run] = await runsOf(db.sql, 'hourly-healing');
    // the PSP was asked (operations without a webhook, past a grace of 0 h) and every request failed
    expect(run!.error ?? '').toMatch(/^\d+ of \d+ webhook re-send requests failed/);
    expect({ status: run!.status, code }).toEqual({ status: 'failed', code: 1 });
    expect(p.stdout()).toContain('hourly-healing: failed');
  });
});
