import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { syncRange, type SyncDeps, type SyncReport } from '../../src/ingest/sync';
import { createPspClient, type PspClient } from '../../src/psp/client';
import { DEFAULT_FAULTS, startSandbox, type Faults, type Sandbox } from '../../src/sandbox/server';
import { useTestDatabases, type TestDatabase } from '../support/db';
import { sandboxSyncDeps } from '../support/sync-deps';
import { pspEnv } from '../../fixtures/psp-env';
import { faultFreeObservations } from './support/scenario';
import { failuresRecorded, observationIds } from './support/store-checks';

/**
 * PSP answers that are wrong rather than late: a register report that never becomes ready, truncated
 * JSON (report start, register stream, period stream), a register page whose content changes between
 * two fetches; and `recon sync` as a process facing a fault (exit code, message naming the window),
 * then run again with the fault gone.
 */

const BIN = path.resolve('bin/recon.mjs');
const RANGE = { from: '2025-01-01', to: '2025-02-23' };
const WINDOWS = [
  { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' },
  { from: '2025-02-01T00:00:00.000Z', to: '2025-02-23T00:00:00.000Z' },
];
const freshDb = useTestDatabases();
let sandbox: Sandbox;
let reference: string[];

const START = (r: { path: string }) => r.path.endsWith('/streaming-report/start');
const FETCH = (r: { path: string }) => r.path.includes('/streaming-report/fetch/');
const PERIOD = (r: { path: string }) => r.path.endsWith('/transactions');
const CALM: Partial<Faults> = { ...DEFAULT_FAULTS, reportNotReadyPolls: 0 };

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'faults-psp-data', month: '2025-01', timezone: 'UTC', payments: 80 },
    faults: CALM,
  });
  const db = await freshDb();
  reference = await faultFreeObservations(db.sql, depsFor(db), RANGE);
});
afterAll(async () => {
  await sandbox?.close();
});

const CLIENT = { timeoutMs: 5_000, retryBaseMs: 5, retryMaxMs: 40 };
const clientOf = (p: PspProject) => createPspClient(p, CLIENT);
const depsFor = (db: TestDatabase, over: Partial<SyncDeps> = {}): SyncDeps =>
  sandboxSyncDeps(db, sandbox, { pollMaxMs: 50, client: CLIENT }, over);

/** A sync under `faults` (failures recorded as reported), then a fault-free run that must repair it. */
async function failThenRepair(
  faults: Partial<Faults>,
  over: Partial<SyncDeps> = {},
): Promise<{ first: SyncReport; db: TestDatabase; partial: number }> {
  const db = await freshDb();
  sandbox.setFaults({ ...CALM, ...faults });
  let first: SyncReport;
  try {
    first = await syncRange(depsFor(db, over), RANGE);
  } finally {
    sandbox.setFaults(CALM);
  }
  const failed = first.windows.filter((w) => w.status === 'failed');
  expect(failed.length).toBeGreaterThan(0);
  expect(await failuresRecorded(db.sql, sandbox.projects[0]!.posId)).toEqual(
    failed.map((w) => ({ window: w.window, reason: w.reason })),
  );
  const partial = (await observationIds(db.sql)).length;
  const repair = await syncRange(depsFor(db), RANGE);
  expect(repair.windows.map((w) => w.status)).toEqual(['completed', 'completed']);
  expect(await observationIds(db.sql)).toEqual(reference);
  return { first, db, partial };
}

describe('a register report that never becomes ready', () => {
  it('fails each window after the longest wait, saying so, and the next run reads them', async () => {
    const { first } = await failThenRepair({ reportNeverReady: true }, { reportMaxWaitMs: 300 });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'failed']);
    for (const w of first.windows) {
      expect(w.reason).toMatch(
        /^SYNC_REPORT_NOT_READY: register report \S+ was not ready after 0 s \(\d+ polls; RECON_REPORT_MAX_WAIT_MS=300\)$/,
      );
    }
  });

  it('also when the not-ready answer comes with an HTTP error status', async () => {
    const { first } = await failThenRepair({ reportNeverReady: true, notReadyStatus: 503 }, { reportMaxWaitMs: 300 });
    for (const w of first.windows) expect(w.reason).toMatch(/^SYNC_REPORT_NOT_READY: /);
  });
});

describe('truncated JSON', () => {
  it('in the report start answer: the window fails as a bad answer naming the endpoint', async () => {
    const { first } = await failThenRepair({ truncateRate: 1, appliesTo: START });
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'failed']);
    for (const w of first.windows)
      expect(w.reason).toMatch(/^PSP_BAD_RESPONSE: PSP answer on POST \/streaming-report\/start is not JSON/);
  });

  it('inside the streamed register report: the window fails, is not recorded as completed, and is read again', async () => {
    const { first, db } = await failThenRepair({ truncateRate: 1, appliesTo: FETCH });
    // The sandbox cuts inside the second record: a report of fewer records is served whole.
    expect(first.windows[0]!.status).toBe('failed');
    for (const w of first.windows) {
      if (w.status === 'failed')
        expect(w.reason).toMatch(/^PSP_BAD_RESPONSE: PSP answer on GET \/streaming-report\/fetch\/:report_id: /);
      else expect(w.registerRecords).toBeLessThan(2);
    }
    const completed = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from es_events where type = 'SyncWindowCompleted'`;
    // The repair's two, and none for a window of the failed run that failed.
    expect(completed[0]!.n).toBe(2 + first.completed);
  });

  it('inside the streamed period transactions, after the register was read: failed, then completed without doubles', async () => {
    const { first, partial } = await failThenRepair({ truncateRate: 1, appliesTo: PERIOD });
    expect(first.windows[0]!.status).toBe('failed');
    for (const w of first.windows) {
      if (w.status === 'failed')
        expect(w.reason).toMatch(/^PSP_BAD_RESPONSE: PSP answer on GET \/api\/v1\/pos\/:pos_id\/transactions: /);
      else expect(w.periodRecords).toBeLessThan(2);
    }
    // The failed run had stored the register records already: the repair added only what was missing.
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(reference.length);
  });
});

describe('a register page that changes between two fetches', () => {
  it('keeps both versions as observations (late status change), with no conflict, and a re-read adds nothing', async () => {
    const db = await freshDb();
    const firstFetch: string[] = [];
    // A client that fetches every ready report twice, as after a page read that was thrown away, and
    // hands the sync the second fetch.
    const refetching = (p: PspProject): PspClient => {
      const base = clientOf(p);
      return {
        ...base,
        async fetchRegisterReport(id) {
          const a = await base.fetchRegisterReport(id);
          if (!a.ready) return a;
          for await (const text of a.records) firstFetch.push(text);
          return base.fetchRegisterReport(id);
        },
      };
    };
    sandbox.setFaults({ ...CALM, registerChangesBetweenFetches: true });
    let changed: SyncReport;
    try {
      changed = await syncRange(depsFor(db, { clientFor: refetching }), RANGE);
    } finally {
      sandbox.setFaults(CALM);
    }
    expect(changed.windows.map((w) => w.status)).toEqual(['completed', 'completed']);

    // The page did change: the first fetch shows operations pending that the second shows as successful.
    const stored = await db.sql<
      { raw: string }[]
    >`select data->>'raw' as raw from es_events where type = 'RegisterRecordObserved'`;
    const secondFetch = new Set(stored.map((r) => r.raw));
    const onlyFirst = firstFetch.filter((t) => !secondFetch.has(t));
    expect(onlyFirst.length).toBeGreaterThan(0);
    for (const t of onlyFirst) expect(JSON.parse(t).status).toBe('pending');
    const lateSuccess = [...secondFetch].filter((t) => !firstFetch.includes(t));
    expect(lateSuccess.length).toBe(onlyFirst.length);
    for (const t of lateSuccess) expect(JSON.parse(t).status).toBe('success');

    // A later run reads the page as it was (pending): both versions are kept, each once.
    const again = await syncRange(depsFor(db), RANGE);
    expect(again.windows.map((w) => w.status)).toEqual(['completed', 'completed']);
    const ids = await observationIds(db.sql);
    expect(ids.filter((id) => !reference.includes(id)).length).toBe(lateSuccess.length);
    expect(reference.every((id) => ids.includes(id))).toBe(true);
    const third = await syncRange(depsFor(db), RANGE);
    expect(third.appended).toBe(0);
    expect(await observationIds(db.sql)).toEqual(ids);
  });
});

describe('recon sync as a process facing a PSP fault', () => {
  function runSync(db: TestDatabase): Promise<{ code: number | null; out: string; err: string }> {
    const child = spawn(process.execPath, [BIN, 'sync', '--from', RANGE.from, '--to', RANGE.to], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        RECON_TIMEZONE: 'UTC',
        RECON_LOG_LEVEL: 'error',
        RECON_REPORT_MAX_WAIT_MS: '1000',
        RECON_PSP_TIMEOUT_MS: '5000',
        ...pspEnv(sandbox.projects[0]!),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c) => (out += c));
    child.stderr!.on('data', (c) => (err += c));
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    return new Promise((resolve) =>
      child.once('exit', (code) => {
        clearTimeout(killer);
        resolve({ code, out, err });
      }),
    );
  }

  it('exits non-zero naming the failed window and why; run again without the fault it exits 0 with the full event set', async () => {
    const db = await freshDb();
    const posId = sandbox.projects[0]!.posId;
    // The first window's register report never becomes ready; the second is served.
    // reportNeverReady is not rate-based: it is switched off when the second window's report is started.
    let started = 0;
    const watch = (r: { method: string; path: string }) => {
      if (START(r) && ++started === 2) sandbox.setFaults({ reportNeverReady: false });
      return false;
    };
    sandbox.setFaults({ ...CALM, reportNeverReady: true, appliesTo: watch });
    let first: Awaited<ReturnType<typeof runSync>>;
    try {
      first = await runSync(db);
    } finally {
      sandbox.setFaults(CALM);
    }
    expect(first.code, first.err).toBe(1);
    expect(first.out).toContain(
      `${posId} ${WINDOWS[0]!.from} .. ${WINDOWS[0]!.to}: FAILED (SYNC_REPORT_NOT_READY: register report `,
    );
    expect(first.out).toMatch(
      /was not ready after 1 s \(\d+ polls; RECON_REPORT_MAX_WAIT_MS=1000\)\); it will be read again on the next run/,
    );
    expect(first.out).toContain(`${posId} ${WINDOWS[1]!.from} .. ${WINDOWS[1]!.to}: report `);
    expect(first.out).toMatch(/sync: 1 windows completed, 1 failed/);
    expect((await failuresRecorded(db.sql, sandbox.projects[0]!.posId)).map((f) => f.window)).toEqual([WINDOWS[0]]);

    const second = await runSync(db);
    expect(second.code, second.err).toBe(0);
    expect(second.out).toMatch(/sync: 2 windows completed, 0 failed/);
    expect(await observationIds(db.sql)).toEqual(reference);
  });
});
