import { describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { syncIncremental, syncRange, type SyncDeps } from '../../src/ingest/sync';
import { readMarks } from '../../src/ingest/watermark';
import { silentLogger } from '../../src/log';
import type { PspClient } from '../../src/psp/client';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { RecordedEvent } from '../../src/store/types';
import { useTestDatabases, type TestDatabase } from '../support/db';

/**
 * The incremental sync resumes from what was truly read (src/ingest/watermark.ts): a completed window counts
 * up to the moment it was read, a gap is not jumped over, a failed window is read again until windows
 * completed after it cover it. The watermark was the latest `window.to` of any completed
 * window, so a range run whose --to lay in the future, or a later window completed after a failed one,
 * moved it past data never read.
 */

const POS = '11111111-2222-4333-8444-555555555555';
const project: PspProject = {
  name: 'p',
  posId: POS,
  baseUrl: 'http://127.0.0.1:1',
  reportUrl: 'http://127.0.0.1:1',
  apiKey: 'pk_p',
  apiSecret: 'sk_p_secret',
  endpointsKey: 'ek_p',
} as PspProject;

interface Psp {
  clock: Date;
  records: { paymentId: string; at: Date }[];
  failStartsBefore?: Date;
  startedWindows: [string, string][];
}

/** A PSP stand-in: the register and the period list show the records of [from, to) that exist at `clock`. */
function stubClient(psp: Psp): PspClient {
  const visible = (from: Date, to: Date) => psp.records.filter((r) => r.at < psp.clock && r.at >= from && r.at < to);
  const row = (r: { paymentId: string; at: Date }) =>
    JSON.stringify({
      projectId: POS,
      orderId: `o-${r.paymentId}`,
      paymentId: r.paymentId,
      amount: '10.00',
      currency: 'UAH',
      method: 'purchase',
      status: 'success',
      dateTime: r.at.getTime(),
      cardMask: '444433******1111',
      payway: 'card',
      customerFee: '0.00',
      merchantFee: '0.20',
    });
  const reports = new Map<string, { from: Date; to: Date }>();
  return {
    project,
    async startRegisterReport(q) {
      psp.startedWindows.push([q.from.toISOString(), q.to.toISOString()]);
      if (psp.failStartsBefore && q.from < psp.failStartsBefore)
        throw Object.assign(new Error('PSP answered 502'), { code: 'PSP_HTTP_ERROR' });
      const id = `r${reports.size + 1}`;
      reports.set(id, { from: q.from, to: q.to });
      return { reportId: id, count: visible(q.from, q.to).length };
    },
    async fetchRegisterReport(id) {
      const { from, to } = reports.get(id)!;
      const rows = visible(from, to).map(row);
      return {
        ready: true as const,
        records: (async function* () {
          yield* rows;
        })(),
      };
    },
    periodTransactions(from, to) {
      const rows = visible(from, to).map((r) =>
        JSON.stringify({
          projectId: POS,
          orderId: `o-${r.paymentId}`,
          paymentId: r.paymentId,
          amount: '10.00',
          currency: 'UAH',
          method: 'purchase',
          status: 'success',
          dateTime: r.at.getTime(),
        }),
      );
      return (async function* () {
        yield* rows;
      })();
    },
  } as PspClient;
}

const freshDb = useTestDatabases();

function depsFor(db: TestDatabase, psp: Psp): SyncDeps {
  return {
    store: createPostgresEventStore(db.sql),
    projects: [project],
    log: silentLogger,
    timezone: 'UTC',
    reportMaxWaitMs: 1000,
    lookbackDays: 3,
    pollBaseMs: 1,
    pollMaxMs: 2,
    clientFor: () => stubClient(psp),
    now: () => psp.clock,
  };
}

async function storedPayments(db: TestDatabase): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    select distinct data->'record'->>'paymentId' as id from es_events where type = 'RegisterRecordObserved' order by 1`;
  return rows.map((r) => r.id);
}

describe('incremental sync after a range run and after a failed window', () => {
  it('a range run whose --to is in the future must not push the incremental watermark past now', async () => {
    const db = await freshDb();
    const psp: Psp = {
      clock: new Date('2025-01-20T12:00:00.000Z'),
      records: [
        { paymentId: 'pay-jan-10', at: new Date('2025-01-10T09:00:00.000Z') },
        { paymentId: 'pay-jan-22', at: new Date('2025-01-22T09:00:00.000Z') }, // happens after the range run
      ],
      startedWindows: [],
    };
    // An operator syncs "January" on the 20th (a documented command shape: --to is the exclusive day after).
    const range = await syncRange(depsFor(db, psp), { from: '2025-01-01', to: '2025-02-01' });
    expect(range.windows.map((w) => [w.window.from, w.window.to, w.status])).toEqual([
      ['2025-01-01T00:00:00.000Z', '2025-01-20T12:00:00.000Z', 'completed'], // cut at now: the future is neither read nor claimed
    ]);
    expect(await storedPayments(db)).toEqual(['pay-jan-10']);

    // The nightly incremental job on the 25th.
    psp.clock = new Date('2025-01-25T02:00:00.000Z');
    const inc = await syncIncremental(depsFor(db, psp));
    // From the instant truly read (the range run's now) minus the lookback, up to now.
    expect(inc.windows.map((w) => [w.window.from, w.window.to, w.status])).toEqual([
      ['2025-01-17T00:00:00.000Z', '2025-01-25T02:00:00.000Z', 'completed'],
    ]);
    expect(await storedPayments(db)).toEqual(['pay-jan-10', 'pay-jan-22']);
  });

  it('a window that failed in an incremental run is read again by the next incremental run', async () => {
    const db = await freshDb();
    const psp: Psp = {
      clock: new Date('2024-12-31T23:00:00.000Z'),
      records: [{ paymentId: 'pay-jan-15', at: new Date('2025-01-15T09:00:00.000Z') }],
      startedWindows: [],
    };
    // Synced up to 2025-01-01, then the nightly job did not run for seven weeks.
    await syncRange(depsFor(db, psp), { from: '2024-12-01', to: '2025-01-01' });
    psp.clock = new Date('2025-02-20T02:00:00.000Z');
    psp.failStartsBefore = new Date('2025-01-20T00:00:00.000Z'); // the PSP fails the first (older) window of this run
    const first = await syncIncremental(depsFor(db, psp));
    expect(first.windows.map((w) => w.status)).toEqual(['failed', 'completed']);

    // Next night the PSP is fine again. docs/ingest.md: a failed window "is read again on the next run".
    psp.clock = new Date('2025-02-21T02:00:00.000Z');
    psp.failStartsBefore = undefined;
    psp.startedWindows = [];
    await syncIncremental(depsFor(db, psp));
    // It starts at the failed window (the earlier of it and the watermark minus the lookback).
    expect(psp.startedWindows).toEqual([
      ['2024-12-28T00:00:00.000Z', '2025-01-28T00:00:00.000Z'],
      ['2025-01-28T00:00:00.000Z', '2025-02-21T02:00:00.000Z'],
    ]);
    expect(await storedPayments(db)).toEqual(['pay-jan-15']);

    // Read again, by windows cut otherwise than the failed one: the run after starts at the watermark minus the lookback.
    psp.clock = new Date('2025-02-22T02:00:00.000Z');
    psp.startedWindows = [];
    await syncIncremental(depsFor(db, psp));
    expect(psp.startedWindows).toEqual([['2025-02-18T00:00:00.000Z', '2025-02-22T02:00:00.000Z']]);
  });

  it('a range run entirely after now reads nothing and leaves the incremental start alone', async () => {
    const db = await freshDb();
    const psp: Psp = { clock: new Date('2025-01-20T12:00:00.000Z'), records: [], startedWindows: [] };
    await syncRange(depsFor(db, psp), { from: '2025-01-01', to: '2025-01-10' });
    const ahead = await syncRange(depsFor(db, psp), { from: '2025-02-01', to: '2025-03-01' });
    expect(ahead.windows).toEqual([]);
    psp.clock = new Date('2025-01-21T02:00:00.000Z');
    psp.startedWindows = [];
    await syncIncremental(depsFor(db, psp));
    expect(psp.startedWindows).toEqual([['2025-01-07T00:00:00.000Z', '2025-01-21T02:00:00.000Z']]);
  });
});

/** `sync-<pos>` events as a store returns them: `[type, from, to, recordedAt]`, in the stream's order. */
function syncEvents(rows: ['completed' | 'failed', string, string, string][]): RecordedEvent[] {
  const t = (d: string) => new Date(d).toISOString();
  return rows.map(([kind, from, to, at], revision) => ({
    id: `e${revision}`,
    stream: `sync-${POS}`,
    revision,
    position: revision as unknown as RecordedEvent['position'],
    appendId: String(revision),
    version: 1,
    metadata: {},
    recordedAt: new Date(at),
    ...(kind === 'completed'
      ? {
          type: 'SyncWindowCompleted',
          data: {
            posId: POS,
            window: { from: t(from), to: t(to) },
            reportId: 'r',
            announcedCount: 0,
            registerRecords: 0,
            periodRecords: 0,
            rejected: 0,
            appended: 0,
            durationMs: 1,
            completedAt: t(at),
          },
        }
      : {
          type: 'SyncWindowFailed',
          data: { posId: POS, window: { from: t(from), to: t(to) }, reason: 'PSP_HTTP_ERROR: 502', failedAt: t(at) },
        }),
  }));
}

const marks = (rows: Parameters<typeof syncEvents>[0]) => {
  const m = readMarks(syncEvents(rows));
  return { watermark: m.watermark?.toISOString(), unreadFrom: m.unreadFrom?.toISOString() };
};

describe('readMarks: what the sync stream says was truly read', () => {
  it('knows nothing of a project never synced', () => {
    expect(marks([])).toEqual({ watermark: undefined, unreadFrom: undefined });
  });

  it('counts a window only up to the moment it was recorded (windows of older runs ending in the future)', () => {
    expect(
      marks([
        ['completed', '2025-01-01', '2025-02-01', '2025-01-20T12:00:00Z'],
        ['completed', '2025-02-01', '2025-03-01', '2025-01-20T12:05:00Z'], // began after it was recorded: read nothing
      ]),
    ).toEqual({ watermark: '2025-01-20T12:00:00.000Z', unreadFrom: undefined });
  });

  it('does not jump over a gap, whatever completed beyond it; a gap read later joins what lies beyond', () => {
    const before = [
      ['completed', '2025-01-01', '2025-01-20', '2025-01-20T02:00:00Z'],
      ['completed', '2025-02-01', '2025-02-10', '2025-02-10T02:00:00Z'],
    ] as Parameters<typeof syncEvents>[0];
    expect(marks(before).watermark).toBe('2025-01-20T00:00:00.000Z');
    expect(marks([...before, ['completed', '2025-01-17', '2025-02-02', '2025-02-11T02:00:00Z']]).watermark).toBe(
      '2025-02-10T00:00:00.000Z',
    );
  });

  it('ignores a backfill of older days that does not touch what the incremental sync reads', () => {
    expect(
      marks([
        ['completed', '2025-06-01', '2025-06-30', '2025-06-30T02:00:00Z'],
        ['completed', '2025-01-01', '2025-02-01', '2025-07-01T09:00:00Z'],
      ]).watermark,
    ).toBe('2025-06-30T00:00:00.000Z');
  });

  it('keeps a failed window unread until windows completed after it cover it, however they are cut', () => {
    const failedRun = [
      ['completed', '2024-12-01', '2024-12-31T23:00:00Z', '2024-12-31T23:00:00Z'],
      ['failed', '2024-12-28', '2025-01-28', '2025-02-20T02:00:00Z'],
      ['completed', '2025-01-28', '2025-02-20T02:00:00Z', '2025-02-20T02:10:00Z'],
    ] as Parameters<typeof syncEvents>[0];
    expect(marks(failedRun)).toEqual({ watermark: '2024-12-31T23:00:00.000Z', unreadFrom: '2024-12-28T00:00:00.000Z' });
    // Covered in part only: still unread.
    expect(marks([...failedRun, ['completed', '2024-12-25', '2025-01-20', '2025-02-21T02:00:00Z']]).unreadFrom).toBe(
      '2024-12-28T00:00:00.000Z',
    );
    // Covered by two windows cut otherwise: read.
    expect(
      marks([
        ...failedRun,
        ['completed', '2024-12-25', '2025-01-25', '2025-02-21T02:00:00Z'],
        ['completed', '2025-01-25', '2025-02-21T02:00:00Z', '2025-02-21T02:10:00Z'],
      ]),
    ).toEqual({ watermark: '2025-02-21T02:00:00.000Z', unreadFrom: undefined });
  });

  it('does not count windows completed before the failure as reading it again', () => {
    expect(
      marks([
        ['completed', '2024-01-01', '2024-02-01', '2024-02-01T02:00:00Z'],
        ['completed', '2024-02-01', '2025-03-01T02:00:00Z', '2025-03-01T02:00:00Z'],
        ['failed', '2024-01-01', '2024-02-01', '2025-03-02T09:00:00Z'], // an operator's re-read of January 2024
      ]),
    ).toEqual({ watermark: '2025-03-01T02:00:00.000Z', unreadFrom: '2024-01-01T00:00:00.000Z' });
  });
});
