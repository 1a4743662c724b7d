import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { newEvent } from '../../src/events/catalog';
import { SyncWindowFailed, syncStream } from '../../src/events/ingest-events';
import { liveSchema } from '../support/live-schema';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import {
  POS,
  at,
  discrepancies,
  periodRow,
  project,
  registerRows,
  syncCompleted,
  webhook,
  rebuildInBatches,
  viewsDigest,
} from './fixtures';

/**
 * `syncWindow` (src/ingest/sync.ts) appends a window's register rows, then — in other appends — its period
 * records, then SyncWindowCompleted. An operation the PSP lists only in a later (lookback) sync of a window that
 * was already synced past the operation's grace used to get a missing_in_period opened at the register append
 * and resolved at the period append of the same sync. missing_in_* of an operation now waits,
 * like split_mismatch, for the reports of its rows to complete: their SyncWindowCompleted, a later completed
 * window covering them (a failed sync's rerun), or the grace clock (a failed window never synced again).
 * Every append is projected on its own (as a live worker would), and rebuilds in other batch sizes give the
 * same rows.
 */

let db: TestDatabase;
let store: EventStore;
let schema: string;

const day = (d: string) => ({
  from: at(`${d}T00:00:00Z`),
  to: at(`${d}T00:00:00Z`).replace(
    /^(\d{4}-\d{2}-)(\d{2})/,
    (_, ym, dd) => `${ym}${String(Number(dd) + 1).padStart(2, '0')}`,
  ),
});
const failed = (d: string, failedAt: string): AppendRequest => ({
  stream: syncStream(POS),
  events: [
    newEvent(SyncWindowFailed, {
      posId: POS,
      window: day(d),
      reason: 'PSP_TIMEOUT: report not ready',
      failedAt: at(failedAt),
    }),
  ],
});

/** Appends and projects one request at a time. */
async function step(...requests: AppendRequest[]): Promise<void> {
  for (const r of requests) {
    await store.appendMany([r]);
    await project(db.sql, store);
  }
}

const rowsOf = async (paymentId: string) => (await discrepancies(db.sql)).filter((d) => d.payment_id === paymentId);
const waiting = async (paymentId: string) =>
  (
    await db.sql.unsafe<{ report_id: string }[]>(
      `select report_id from "${schema}".report_pending where payment_id = $1 order by report_id`,
      [paymentId],
    )
  ).map((r) => r.report_id);

function digest(): Promise<string[]> {
  return viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers', 'sync_windows']);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await project(db.sql, store);
  schema = (await liveSchema(db.sql, 'reconciliation'))!;
});

afterAll(async () => {
  await db?.drop();
});

describe('missing_in_* waits for the reports of the operation rows', () => {
  it('an operation first listed by a lookback sync, in both PSP sources, opens nothing', async () => {
    const T = at('2024-03-01T10:00:00Z');
    await step(
      syncCompleted({ ...day('2024-03-01'), completedAt: at('2024-03-02T01:00:00Z'), reportId: 'rep-1' }),
      // second nightly pass over the day (lookback), past the operation's 48 h grace: the PSP still lists nothing
      syncCompleted({ ...day('2024-03-01'), completedAt: at('2024-03-04T01:00:00Z'), reportId: 'rep-2' }),
      // third pass: the PSP now lists the operation; register rows first, period records in a later append
      registerRows({
        paymentId: 'pay-late',
        dateTime: T,
        amount: 100_00n,
        reportId: 'rep-3',
        observedAt: at('2024-03-05T01:00:00Z'),
      }),
    );
    expect(await rowsOf('pay-late')).toEqual([]);
    expect(await waiting('pay-late')).toEqual(['rep-3']);
    await step(
      periodRow({
        paymentId: 'pay-late',
        dateTime: T,
        amount: 100_00n,
        reportId: 'rep-3',
        observedAt: at('2024-03-05T01:00:00Z'),
      }),
      syncCompleted({ ...day('2024-03-01'), completedAt: at('2024-03-05T01:02:00Z'), reportId: 'rep-3' }),
    );
    expect(await rowsOf('pay-late')).toEqual([]);
    expect(await waiting('pay-late')).toEqual([]);
  });

  it('a lookback sync listing the operation in the register only: missing_in_period opens when its report completes', async () => {
    const T = at('2024-03-10T10:00:00Z');
    await step(
      syncCompleted({ ...day('2024-03-10'), completedAt: at('2024-03-11T01:00:00Z'), reportId: 'rep-b1' }),
      syncCompleted({ ...day('2024-03-10'), completedAt: at('2024-03-13T01:00:00Z'), reportId: 'rep-b2' }),
      registerRows({
        paymentId: 'pay-register-only',
        dateTime: T,
        amount: 100_00n,
        reportId: 'rep-b3',
        observedAt: at('2024-03-14T01:00:00Z'),
      }),
    );
    expect(await rowsOf('pay-register-only')).toEqual([]);
    const done = syncCompleted({ ...day('2024-03-10'), completedAt: at('2024-03-14T01:02:00Z'), reportId: 'rep-b3' });
    await step(done);
    const rows = await rowsOf('pay-register-only');
    expect(rows.map((r) => [r.type, r.status, r.detected_by_event, r.detected_at?.toISOString()])).toEqual([
      ['missing_in_period', 'open', done.events[0]!.id, '2024-03-14T01:02:00.000Z'],
    ]);
    expect(await waiting('pay-register-only')).toEqual([]);
  });

  it('an open missing_in_report stays as it is while the lookback that lists the operation is under way; the period record resolves both', async () => {
    const T = at('2024-03-15T10:00:00Z');
    await step(
      webhook({ paymentId: 'pay-hook', processedAt: T, amount: 20_00n, receivedAt: at('2024-03-15T10:00:05Z') }),
      syncCompleted({ ...day('2024-03-15'), completedAt: at('2024-03-16T01:00:00Z'), reportId: 'rep-e1' }),
      syncCompleted({ ...day('2024-03-15'), completedAt: at('2024-03-18T01:00:00Z'), reportId: 'rep-e2' }),
    );
    const open = await rowsOf('pay-hook');
    expect(open.map((r) => `${r.type}:${r.status}`)).toEqual(['missing_in_period:open', 'missing_in_report:open']);
    await step(
      registerRows({
        paymentId: 'pay-hook',
        dateTime: T,
        amount: 20_00n,
        reportId: 'rep-e3',
        observedAt: at('2024-03-19T01:00:00Z'),
      }),
    );
    // neither resolved nor updated while rep-e3 is arriving
    expect(await rowsOf('pay-hook')).toEqual(open);
    const period = periodRow({
      paymentId: 'pay-hook',
      dateTime: T,
      amount: 20_00n,
      reportId: 'rep-e3',
      observedAt: at('2024-03-19T01:00:00Z'),
    });
    await step(period);
    const rows = await rowsOf('pay-hook');
    expect(rows.map((r) => [r.type, r.status, r.resolved_by_event])).toEqual([
      ['missing_in_period', 'resolved', period.events[0]!.id],
      ['missing_in_report', 'resolved', period.events[0]!.id],
    ]);
    await step(syncCompleted({ ...day('2024-03-15'), completedAt: at('2024-03-19T01:02:00Z'), reportId: 'rep-e3' }));
    expect((await rowsOf('pay-hook')).map((r) => r.status)).toEqual(['resolved', 'resolved']);
  });

  it('a sync that failed after the register rows: judged when its rerun completes (the rows are not appended again)', async () => {
    const T = at('2024-03-20T10:00:00Z');
    const rows = (reportId: string, observedAt: string) =>
      registerRows({ paymentId: 'pay-failed', dateTime: T, amount: 100_00n, reportId, observedAt: at(observedAt) });
    await step(
      syncCompleted({ ...day('2024-03-20'), completedAt: at('2024-03-21T01:00:00Z'), reportId: 'rep-c1' }),
      syncCompleted({ ...day('2024-03-20'), completedAt: at('2024-03-23T01:00:00Z'), reportId: 'rep-c2' }),
      rows('rep-c3', '2024-03-24T01:00:00Z'),
      failed('2024-03-20', '2024-03-24T01:10:00Z'),
    );
    expect(await rowsOf('pay-failed')).toEqual([]);
    expect(await waiting('pay-failed')).toEqual(['rep-c3']);
    // the next night reads the day again: the same row (same event id) is not stored again; no period record
    const [again] = await store.appendMany([rows('rep-c4', '2024-03-25T01:00:00Z')]);
    expect([again!.appended, again!.duplicates]).toEqual([0, 1]);
    const done = syncCompleted({ ...day('2024-03-20'), completedAt: at('2024-03-25T01:05:00Z'), reportId: 'rep-c4' });
    await step(done);
    expect((await rowsOf('pay-failed')).map((r) => [r.type, r.status, r.detected_by_event])).toEqual([
      ['missing_in_period', 'open', done.events[0]!.id],
    ]);
    expect(await waiting('pay-failed')).toEqual([]);
  });

  it('a sync that failed and whose window is never synced again: judged once the grace has passed since its rows were observed', async () => {
    const T = at('2024-04-01T10:00:00Z');
    await step(
      syncCompleted({ ...day('2024-04-01'), completedAt: at('2024-04-02T01:00:00Z'), reportId: 'rep-d1' }),
      syncCompleted({ ...day('2024-04-01'), completedAt: at('2024-04-04T00:30:00Z'), reportId: 'rep-d2' }),
      registerRows({
        paymentId: 'pay-abandoned',
        dateTime: T,
        amount: 100_00n,
        reportId: 'rep-d3',
        observedAt: at('2024-04-04T01:00:00Z'),
      }),
      failed('2024-04-01', '2024-04-04T01:10:00Z'),
      // the clock moves on with other days' syncs
      syncCompleted({ ...day('2024-04-04'), completedAt: at('2024-04-05T01:00:00Z'), reportId: 'rep-d4' }),
    );
    expect(await rowsOf('pay-abandoned')).toEqual([]);
    expect(await waiting('pay-abandoned')).toEqual(['rep-d3']);
    // 48 h after the rows were observed (2024-04-06T01:00), an unrelated event moves the clock past it
    const later = syncCompleted({ ...day('2024-04-05'), completedAt: at('2024-04-06T02:00:00Z'), reportId: 'rep-d5' });
    await step(later);
    expect(
      (await rowsOf('pay-abandoned')).map((r) => [r.type, r.status, r.detected_by_event, r.detected_at?.toISOString()]),
    ).toEqual([['missing_in_period', 'open', later.events[0]!.id, '2024-04-06T02:00:00.000Z']]);
    expect(await waiting('pay-abandoned')).toEqual([]);
  });

  it('a rebuild in one batch and in batches of one event gives the same rows as the steps above', async () => {
    const stepwise = await digest();
    for (const batchSize of [100_000, 1, 3]) {
      await rebuildInBatches(db.sql, store, batchSize);
      expect(await digest()).toEqual(stepwise);
    }
  });
});
