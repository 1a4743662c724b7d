import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { syncIncremental, syncRange, type SyncDeps } from '../../src/ingest/sync';
import { createPspClient, type PspClient } from '../../src/psp/client';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { isStoreError } from '../../src/store/errors';
import { useTestDatabases, type TestDatabase } from '../support/db';
import { storeEventAheadOfCounter } from '../support/logical-restore';
import { sandboxSyncDeps } from '../support/sync-deps';
import { ev } from '../store/contract';

const scenarioOptions = { seed: 'ingest-sync', month: '2025-01', timezone: 'UTC', payments: 160 };
// January plus the longest lag of a secondary operation (21 days): two windows.
const RANGE = { from: '2025-01-01', to: '2025-02-23' };

const freshDb = useTestDatabases();
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ scenario: scenarioOptions, faults: { reportNotReadyPolls: 2 } });
});
afterAll(async () => {
  await sandbox.close();
});

const depsFor = (db: TestDatabase, over: Partial<SyncDeps> = {}): SyncDeps =>
  sandboxSyncDeps(db, sandbox, { pollMaxMs: 20, client: { timeoutMs: 5_000, retryBaseMs: 5, retryMaxMs: 20 } }, over);

async function countByType(db: TestDatabase): Promise<Record<string, number>> {
  const rows = await db.sql<
    { type: string; n: number }[]
  >`select type, count(*)::int as n from es_events group by type`;
  return Object.fromEntries(rows.map((r) => [r.type, r.n]));
}

async function observationIds(db: TestDatabase): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    select event_id::text as id from es_events where stream_id like 'payment-%' or stream_id like 'rejections-%' order by 1`;
  return rows.map((r) => r.id);
}

describe('sync against the sandbox', () => {
  let reference: TestDatabase;

  it('reads a multi-window range: polls until ready, appends every register and period record, checks counts', async () => {
    reference = await freshDb();
    const before = structuredClone(sandbox.stats);
    const progress: string[] = [];
    const report = await syncRange(depsFor(reference), { ...RANGE, onProgress: (p) => progress.push(p.phase) });

    expect(report.windows.map((w) => [w.window.from, w.window.to, w.status])).toEqual([
      ['2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z', 'completed'],
      ['2025-02-01T00:00:00.000Z', '2025-02-23T00:00:00.000Z', 'completed'],
    ]);
    // Each report answered report_not_ready twice before it was served.
    expect(sandbox.stats.faults.notReady - before.faults.notReady).toBe(4);
    const served = sandbox.stats.registerRowsServed - before.registerRowsServed;
    const periodServed = sandbox.stats.periodRecordsServed - before.periodRecordsServed;
    const counts = await countByType(reference);
    const rejected = await reference.sql<{ source: string; n: number }[]>`
      select data->>'source' as source, count(*)::int as n from es_events where type = 'SourceRecordRejected' group by 1`;
    const rejectedOf = (src: string) => rejected.find((r) => r.source === src)?.n ?? 0;
    expect(counts.RegisterRecordObserved! + rejectedOf('register')).toBe(served);
    expect(counts.PeriodRecordObserved! + rejectedOf('period')).toBe(periodServed);
    expect(counts.RegisterRecordObserved).toBeGreaterThan(150);
    expect(report.windows.reduce((s, w) => s + w.registerRecords!, 0)).toBe(served);
    expect(counts.SyncWindowCompleted).toBe(2);
    // period records carry their window's register report id: one fetch's records belong together
    const periodReports = await reference.sql<{ period: string | null; register: string }[]>`
      select distinct p.metadata->>'reportId' as period, c.data->>'reportId' as register
      from es_events p join es_events c on c.type = 'SyncWindowCompleted' and c.data->'window'->>'from' = p.metadata->'window'->>'from'
      where p.type = 'PeriodRecordObserved'`;
    expect(periodReports.length).toBeGreaterThan(0);
    for (const r of periodReports) expect(r.period).toBe(r.register);

    // The scenario's count fault: the window holding that day announces one record more than it sends.
    const mismatchDay = sandbox.scenario.countMismatchDays[0]!;
    const flagged = report.windows.filter((w) => w.countMismatch);
    expect(
      flagged.map(
        (w) => w.window.from <= `${mismatchDay}T12:00:00.000Z` && `${mismatchDay}T12:00:00.000Z` < w.window.to,
      ),
    ).toEqual([true]);
    expect(flagged[0]!.announcedCount).toBe(flagged[0]!.registerRecords! + 1);
    const [mismatch] = await reference.sql<{ data: { announcedCount: number; receivedCount: number } }[]>`
      select data from es_events where type = 'RegisterCountMismatched'`;
    expect(mismatch!.data.announcedCount - mismatch!.data.receivedCount).toBe(1);

    // Observation metadata: report id and window, not part of the id.
    const [obs] = await reference.sql<{ metadata: Record<string, unknown> }[]>`
      select metadata from es_events where type = 'RegisterRecordObserved' limit 1`;
    expect(obs!.metadata).toMatchObject({
      source: 'register',
      reportId: expect.any(String),
      window: { from: expect.any(String), to: expect.any(String) },
    });
    expect(progress).toContain('completed');
  });

  it('resumes a run aborted mid-window: nothing missing, nothing doubled', async () => {
    const db = await freshDb();
    const controller = new AbortController();
    await expect(
      syncRange(depsFor(db, { batchSize: 25 }), {
        ...RANGE,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.records >= 120) controller.abort(new Error('killed'));
        },
      }),
    ).rejects.toThrow('killed');
    const partial = await observationIds(db);
    expect(partial.length).toBeGreaterThan(0);
    expect((await countByType(db)).SyncWindowCompleted ?? 0).toBe(0);

    const resumed = await syncRange(depsFor(db), RANGE);
    expect(resumed.completed).toBe(2);
    const full = await observationIds(db);
    // Identical to the uninterrupted run (the reference, before its data changed): same deterministic ids.
    expect(full).toEqual(await observationIds(reference));
    expect(resumed.appended).toBe(full.length - partial.length);
  });

  it("keeps each payment stream in the report's order with small batches and several appends in flight", async () => {
    const db = await freshDb();
    await syncRange(depsFor(db, { batchSize: 7, appendsInFlight: 3 }), RANGE);
    const streams = (d: TestDatabase) => d.sql<{ stream: string; ids: string[] }[]>`
      select stream_id as stream, array_agg(event_id::text order by stream_revision) as ids
      from es_events where stream_id like 'payment-%' or stream_id like 'rejections-%' group by 1 order by 1`;
    const concurrent = await streams(db);
    expect(concurrent.length).toBeGreaterThan(100);
    expect(concurrent).toEqual(await streams(reference));
  });

  it('appends no new observation when a finished range is read again, and appends changed records as new observations', async () => {
    const ids = await observationIds(reference);
    const again = await syncRange(depsFor(reference), RANGE);
    expect(again.completed).toBe(2);
    expect(again.appended).toBe(0);
    expect(await observationIds(reference)).toEqual(ids);
    expect((await countByType(reference)).SyncWindowCompleted).toBe(4);

    // The PSP's data changes: the register page read a second time shows pending operations as success.
    sandbox.setFaults({ registerChangesBetweenFetches: true });
    try {
      const refetching = (p: PspProject): PspClient => {
        const real = createPspClient(p, { timeoutMs: 5_000 });
        return {
          ...real,
          async fetchRegisterReport(id) {
            const first = await real.fetchRegisterReport(id);
            if (!first.ready) return first;
            for await (const _ of first.records) void _; // the first read is lost; the report is fetched again
            return real.fetchRegisterReport(id);
          },
        };
      };
      const changed = await syncRange(depsFor(reference, { clientFor: refetching }), RANGE);
      const pendingRows = await reference.sql<{ n: number }[]>`
        select count(*)::int as n from es_events where type = 'RegisterRecordObserved' and data->'record'->>'status' = 'pending'`;
      expect(pendingRows[0]!.n).toBeGreaterThan(0);
      expect(changed.appended).toBe(pendingRows[0]!.n);
      const successNow = await reference.sql<{ n: number }[]>`
        select count(*)::int as n from es_events a where type = 'RegisterRecordObserved' and data->'record'->>'status' = 'pending'
          and exists (select 1 from es_events b where b.stream_id = a.stream_id and b.type = 'RegisterRecordObserved'
                      and b.data->'record'->>'status' = 'success' and b.data->'record'->>'method' = a.data->'record'->>'method')`;
      expect(successNow[0]!.n).toBe(pendingRows[0]!.n);
    } finally {
      sandbox.setFaults({ registerChangesBetweenFetches: false });
    }
  });

  it('fails a window whose report never becomes ready, records why, and reads it on the next run', async () => {
    const db = await freshDb();
    sandbox.setFaults({ reportNeverReady: true });
    let failed: Awaited<ReturnType<typeof syncRange>> | undefined;
    try {
      failed = await syncRange(depsFor(db, { reportMaxWaitMs: 60 }), { from: '2025-01-01', to: '2025-01-10' });
    } finally {
      sandbox.setFaults({ reportNeverReady: false });
    }
    expect(failed.failed).toBe(1);
    expect(failed.windows[0]!.reason).toMatch(/SYNC_REPORT_NOT_READY: register report .* was not ready after/);
    const [f] = await db.sql<
      { data: { reason: string } }[]
    >`select data from es_events where type = 'SyncWindowFailed'`;
    expect(f!.data.reason).toMatch(/not ready/);
    expect((await countByType(db)).RegisterRecordObserved ?? 0).toBe(0);

    const retried = await syncRange(depsFor(db), { from: '2025-01-01', to: '2025-01-10' });
    expect(retried.completed).toBe(1);
    expect((await countByType(db)).RegisterRecordObserved).toBeGreaterThan(0);
  });

  it('incremental mode starts at the last completed window minus the lookback and stops at now', async () => {
    const db = await freshDb();
    await syncRange(depsFor(db), { from: '2025-01-01', to: '2025-01-20' });
    const now = new Date('2025-01-25T12:00:00.000Z');
    const inc = await syncIncremental(depsFor(db, { lookbackDays: 3, now: () => now }));
    expect(inc.windows.map((w) => [w.window.from, w.window.to, w.status])).toEqual([
      ['2025-01-17T00:00:00.000Z', '2025-01-25T12:00:00.000Z', 'completed'],
    ]);
    // --skip-completed on a range already read: nothing is fetched again.
    const started = sandbox.stats.reportsStarted;
    const skipped = await syncRange(depsFor(db), { from: '2025-01-01', to: '2025-01-20', skipCompleted: true });
    expect(skipped.skipped).toBe(1);
    expect(sandbox.stats.reportsStarted).toBe(started);
  });

  it('stops with TRANSACTION_COUNTER_BEHIND, appending nothing, while the store refuses appends after a logical restore', async () => {
    const db = await freshDb();
    await storeEventAheadOfCounter(db);
    const err = await syncRange(depsFor(db), { from: '2025-01-01', to: '2025-01-08' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreError(err, 'TRANSACTION_COUNTER_BEHIND'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/recon store advance-xid/);
    expect(await countByType(db)).toEqual({ [ev('x', 0).type]: 1 }); // the restored event alone
  });
});
