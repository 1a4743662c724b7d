import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { runsOf } from '../../src/scheduler/job-runs';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * The nightly run heals missing webhooks as the hourly job does, and counted the re-send requests the PSP refused
 * (healFailed) in a run recorded `succeeded`, `recon run` exiting 0: the hourly job fails for the same (review 13),
 * the nightly, the run an operator reads each morning, said all was well. Now, as for a failed sync window, the
 * report is written and then the run fails naming the failed requests, so that it is alerted and tried again.
 */

let db: TestDatabase;
let sandbox: Sandbox;
const out = mkdtempSync(path.join(tmpdir(), 'r15-nightly-heal-'));
beforeAll(async () => {
  db = await createTestDatabase();
  const scenario = scenarioFor({ seed: 15, payments: 20, month: '2025-01', timezone: 'UTC', subMerchants: 2 });
  const store = createPostgresEventStore(db.sql);
  for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
  // the register answers; every re-send request (GET …/orders/:id/:operation) is refused
  sandbox = await startSandbox({
    scenario,
    faults: {
      reportNotReadyPolls: 0,
      serverErrorRate: 1,
      appliesTo: (req) => /\/orders\/[^/]+\/[^/]+$/.test(req.path),
    },
  });
});
afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await db?.drop();
  rmSync(out, { recursive: true, force: true });
});

describe('the nightly run with every webhook re-send request refused', () => {
  it('writes its report, then is recorded failed naming the requests, and recon run exits 1', {
    timeout: 180_000,
  }, async () => {
    const r = await runRecon(
      ['run', 'nightly-reconciliation'],
      reconEnv({
        databaseUrl: db.url,
        project: sandbox.projects[0]!,
        extra: { RECON_GRACE_HOURS: '0', RECON_PSP_TIMEOUT_MS: '2000', RECON_OUT_DIR: out },
      }),
      150_000,
    );
    const [run] = await runsOf(db.sql, 'nightly-reconciliation');
    // the PSP was asked (operations without a webhook past a grace of 0 h) and every request refused
    expect(run?.error ?? '', r.stderr.slice(-3000)).toMatch(
      /\b(\d+) of \1 webhook re-send requests failed \(0 requested\)/,
    );
    expect(run?.error ?? '').toContain(`report written to ${path.join(out, 'nightly-')}`);
    expect(r.stdout).toContain('nightly-reconciliation: failed');
    expect({ status: run?.status, code: r.code }).toEqual({ status: 'failed', code: 1 });
  });
});
