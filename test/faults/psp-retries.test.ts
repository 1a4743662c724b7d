import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncRange, type SyncDeps, type SyncReport } from '../../src/ingest/sync';
import { DEFAULT_FAULTS, startSandbox, type Faults, type Sandbox } from '../../src/sandbox/server';
import { useTestDatabases, type TestDatabase } from '../support/db';
import { sandboxSyncDeps } from '../support/sync-deps';
import { faultFreeObservations } from './support/scenario';
import { failuresRecorded, observationIds } from './support/store-checks';

/**
 * Transient PSP faults against the sandbox's fault knobs, through the real client and sync: 5xx and 429
 * bursts, connection resets, answers slower than the client's timeout. A burst shorter than the client's
 * retries ends in success; a longer one ends in a window recorded as failed with a clear reason, which
 * the next run (faults off) repairs: the final events equal those of a fault-free sync.
 */

const RANGE = { from: '2025-01-01', to: '2025-02-23' }; // January plus the lag of late operations: two windows
const TIMEOUT_MS = 400;
const freshDb = useTestDatabases();
let sandbox: Sandbox;
let reference: string[];

const START = (r: { path: string }) => r.path.endsWith('/streaming-report/start');
const PERIOD = (r: { path: string }) => r.path.endsWith('/transactions');

/** `n` requests matching `match` (every request by default) get the fault, then none. */
function burst(n: number, match: (r: { method: string; path: string }) => boolean = () => true) {
  let left = n;
  return (r: { method: string; path: string }) => match(r) && left-- > 0;
}

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'faults-psp-retries', month: '2025-01', timezone: 'UTC', payments: 60 },
    faults: { reportNotReadyPolls: 0 },
  });
  const db = await freshDb();
  reference = await faultFreeObservations(db.sql, depsFor(db), RANGE);
});
afterAll(async () => {
  await sandbox?.close();
});

// The real client with its default retry count (3); short waits keep the test fast.
const depsFor = (db: TestDatabase): SyncDeps =>
  sandboxSyncDeps(db, sandbox, {
    pollMaxMs: 20,
    client: { timeoutMs: TIMEOUT_MS, retryBaseMs: 5, retryMaxMs: 40, retryAfterMaxMs: 3_000 },
  });

/** Runs a sync under `faults`, then checks its outcome and, when a window failed, that a fault-free run repairs it. */
async function syncUnder(
  faults: Partial<Faults>,
): Promise<{ first: SyncReport; db: TestDatabase; served: Sandbox['stats']['faults'] }> {
  const db = await freshDb();
  const before = structuredClone(sandbox.stats.faults);
  sandbox.setFaults({ ...DEFAULT_FAULTS, reportNotReadyPolls: 0, ...faults });
  let first: SyncReport;
  try {
    first = await syncRange(depsFor(db), RANGE);
  } finally {
    sandbox.setFaults({ ...DEFAULT_FAULTS, reportNotReadyPolls: 0 });
  }
  const after = sandbox.stats.faults;
  const served = {
    serverErrors: after.serverErrors - before.serverErrors,
    tooManyRequests: after.tooManyRequests - before.tooManyRequests,
    resets: after.resets - before.resets,
    slow: after.slow - before.slow,
    truncated: after.truncated - before.truncated,
    notReady: after.notReady - before.notReady,
  };
  // Every window either completed or was recorded as failed, with its reason, in the sync stream.
  const failed = first.windows.filter((w) => w.status === 'failed');
  expect(first.windows.every((w) => w.status === 'completed' || w.status === 'failed')).toBe(true);
  const recorded = await failuresRecorded(db.sql, sandbox.projects[0]!.posId);
  expect(recorded.map((f) => f.window)).toEqual(failed.map((w) => w.window));
  expect(recorded.map((f) => f.reason)).toEqual(failed.map((w) => w.reason));
  if (failed.length > 0) {
    const repair = await syncRange(depsFor(db), RANGE);
    expect(repair.windows.map((w) => w.status)).toEqual(['completed', 'completed']);
  }
  expect(await observationIds(db.sql)).toEqual(reference);
  return { first, db, served };
}

describe('PSP faults that retries absorb', () => {
  it('a 5xx burst shorter than the retries: every window completes, nothing missing or doubled', async () => {
    const { first, served } = await syncUnder({ serverErrorRate: 1, appliesTo: burst(3) });
    expect(served.serverErrors).toBe(3);
    expect(first.windows.map((w) => w.status)).toEqual(['completed', 'completed']);
  });

  it('a 429 burst with Retry-After: waited out, then completed', async () => {
    const { first, served } = await syncUnder({
      tooManyRequestsRate: 1,
      retryAfterSeconds: 1,
      appliesTo: burst(2, PERIOD),
    });
    expect(served.tooManyRequests).toBe(2);
    expect(first.failed).toBe(0);
  });

  it('connections reset without an answer: retried, then completed', async () => {
    const { first, served } = await syncUnder({ resetRate: 1, appliesTo: burst(3, (r) => START(r) || PERIOD(r)) });
    expect(served.resets).toBe(3);
    expect(first.failed).toBe(0);
  });

  it('an answer slower than the timeout: abandoned, asked again, completed', async () => {
    const { first, served } = await syncUnder({ slowRate: 1, slowMs: TIMEOUT_MS * 3, appliesTo: burst(2, PERIOD) });
    expect(served.slow).toBe(2);
    expect(first.failed).toBe(0);
  });

  it('random 5xx, 429, resets and slow answers mixed: each window completes or is recorded as failed, and the next run repairs', async () => {
    const { first, served } = await syncUnder({
      serverErrorRate: 0.25,
      tooManyRequestsRate: 0.1,
      retryAfterSeconds: 0,
      resetRate: 0.1,
      slowRate: 0.05,
      slowMs: TIMEOUT_MS * 2,
    });
    expect(served.serverErrors + served.tooManyRequests + served.resets + served.slow).toBeGreaterThan(0);
    for (const w of first.windows.filter((x) => x.status === 'failed'))
      expect(w.reason).toMatch(/PSP (answered|unreachable|did not answer)/);
  });
});

describe('PSP faults that outlast the retries: a recorded failure, repaired by the next run', () => {
  it('a 5xx burst longer than the retries fails the first window with the status and endpoint', async () => {
    const { first, db } = await syncUnder({ serverErrorRate: 1, appliesTo: burst(4, START) });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'completed']);
    expect(first.windows[0]!.reason).toMatch(
      /^PSP_HTTP_ERROR: PSP answered 50[023] on POST \/streaming-report\/start \(internal_error\)/,
    );
    expect((await failuresRecorded(db.sql, sandbox.projects[0]!.posId))[0]!.window).toEqual({
      from: '2025-01-01T00:00:00.000Z',
      to: '2025-02-01T00:00:00.000Z',
    });
  });

  it('429 for longer than the retries: failed with too_many_requests', async () => {
    const { first } = await syncUnder({ tooManyRequestsRate: 1, retryAfterSeconds: 0, appliesTo: burst(4, START) });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'completed']);
    expect(first.windows[0]!.reason).toMatch(
      /PSP answered 429 on POST \/streaming-report\/start \(too_many_requests\)/,
    );
  });

  it('connections reset on every try: failed as unreachable', async () => {
    const { first } = await syncUnder({ resetRate: 1, appliesTo: PERIOD });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'failed']);
    for (const w of first.windows)
      expect(w.reason).toMatch(/^PSP_NETWORK: PSP unreachable on GET \/api\/v1\/pos\/:pos_id\/transactions/);
  });

  it('every answer slower than the timeout: failed naming the timeout', async () => {
    const { first } = await syncUnder({ slowRate: 1, slowMs: TIMEOUT_MS * 3, appliesTo: PERIOD });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'failed']);
    for (const w of first.windows)
      expect(w.reason).toBe(
        `PSP_TIMEOUT: PSP did not answer GET /api/v1/pos/:pos_id/transactions within ${TIMEOUT_MS} ms`,
      );
  });
});
