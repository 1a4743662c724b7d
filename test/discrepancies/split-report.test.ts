import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { liveSchema } from '../support/live-schema';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import {
  appendAll,
  at,
  discrepancies,
  periodRow,
  project,
  registerRows,
  subMerchant,
  syncCompleted,
  type Receiver,
  rebuildInBatches,
  viewsDigest,
} from './fixtures';

/**
 * A split operation's register rows arrive one per receiver, and the report's SyncWindowCompleted only after
 * all of them: the split is judged when the report completes, never on the rows seen so far. Every step is
 * projected as a batch of its own (as a live worker would), and a rebuild in other batch sizes gives the same rows.
 */

const DAY = { from: at('2024-05-01T00:00:00Z'), to: at('2024-05-02T00:00:00Z') };
// read three days after the operations: past the 48 h grace, so each row is judged as soon as it arrives
const OBSERVED = at('2024-05-04T01:00:00Z');
const COMPLETED = at('2024-05-04T01:05:00Z');

const three = (short = 0n): Receiver[] => [
  { name: 'Alpha Shop', amount: 50_00n - 100n, fee: 100n },
  { name: 'Beta Store', amount: 30_00n - 60n, fee: 60n },
  { name: 'Gamma Goods', amount: 20_00n - 40n - short, fee: 40n },
];

/** One append per receiver row (each its own batch when projected between appends). */
const oneByOne = (r: AppendRequest): AppendRequest[] => r.events.map((e) => ({ stream: r.stream, events: [e] }));

let db: TestDatabase;
let store: EventStore;
let schema: string;

const splitRows = async () => (await discrepancies(db.sql)).filter((r) => r.type === 'split_mismatch');
const waiting = async () =>
  (
    await db.sql.unsafe<{ payment_id: string; report_id: string }[]>(
      `select payment_id, report_id from "${schema}".report_pending order by payment_id, report_id`,
    )
  ).map((r) => `${r.payment_id}:${r.report_id}`);

function digest(): Promise<string[]> {
  return viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers']);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    subMerchant('sm-beta', 'Beta Store'),
    subMerchant('sm-gamma', 'Gamma Goods'),
  ]);
  await project(db.sql, store);
  schema = (await liveSchema(db.sql, 'reconciliation'))!;
});

afterAll(async () => {
  await db?.drop();
});

describe('split_mismatch waits for the register report of its receiver rows', () => {
  it('rows arriving one by one open nothing; a real short split opens exactly when its report completes', async () => {
    const ok = registerRows({
      paymentId: 'pay-split-ok',
      dateTime: at('2024-05-01T10:00:00Z'),
      amount: 100_00n,
      receivers: three(),
      reportId: 'rep-A',
      observedAt: OBSERVED,
    });
    const short = registerRows({
      paymentId: 'pay-split-short',
      dateTime: at('2024-05-01T11:00:00Z'),
      amount: 100_00n,
      receivers: three(100n),
      reportId: 'rep-A',
      observedAt: OBSERVED,
    });
    expect(ok.events).toHaveLength(3);
    for (const row of [...oneByOne(ok), ...oneByOne(short)]) {
      await appendAll(store, [row]);
      await project(db.sql, store);
      // after the first and second receiver row the shares do not sum yet: still nothing
      expect(await splitRows()).toEqual([]);
    }
    // both operations were judged (past the grace) and wait for rep-A
    expect(await waiting()).toEqual(['pay-split-ok:rep-A', 'pay-split-short:rep-A']);

    const done = syncCompleted({ ...DAY, completedAt: COMPLETED, reportId: 'rep-A', announced: 6 });
    await appendAll(store, [done]);
    await project(db.sql, store);
    const rows = await splitRows();
    expect(rows.map((r) => [r.payment_id, r.status])).toEqual([['pay-split-short', 'open']]);
    expect(rows[0]!.detected_by_event).toBe(done.events[0]!.id);
    expect(rows[0]!.detected_at?.toISOString()).toBe(COMPLETED);
    expect(rows[0]!.values).toMatchObject({ shares_sum: '9900', original_amount: '10000' });
    expect(rows[0]!.evidence.sort()).toEqual(short.events.map((e) => e.id).sort());
    expect(await waiting()).toEqual([]);
  });

  it('a later report correcting the rows keeps the mismatch open until that report completes, then resolves it', async () => {
    const fixed = registerRows({
      paymentId: 'pay-split-short',
      dateTime: at('2024-05-01T11:00:00Z'),
      amount: 100_00n,
      receivers: three(),
      reportId: 'rep-B',
      observedAt: at('2024-05-05T01:00:00Z'),
    });
    // only Gamma's row changed: Alpha's and Beta's rows are identical to rep-A's (same event ids, not appended again)
    const [changed] = await store.appendMany([fixed]);
    expect([changed!.appended, changed!.duplicates]).toEqual([1, 2]);
    await project(db.sql, store);
    expect((await splitRows()).map((r) => r.status)).toEqual(['open']);
    expect(await waiting()).toEqual(['pay-split-short:rep-B']);

    const done = syncCompleted({ ...DAY, completedAt: at('2024-05-05T01:05:00Z'), reportId: 'rep-B', announced: 6 });
    await appendAll(store, [done]);
    await project(db.sql, store);
    const [row] = await splitRows();
    expect([row!.status, row!.resolved_by_event, row!.resolved_at?.toISOString()]).toEqual([
      'resolved',
      done.events[0]!.id,
      '2024-05-05T01:05:00.000Z',
    ]);
    expect(await waiting()).toEqual([]);
  });

  it('rows of a report that never completed (sync killed, rerun under a new report) are judged when a later window covering them completes', async () => {
    const killed = registerRows({
      paymentId: 'pay-split-killed',
      dateTime: at('2024-05-01T12:00:00Z'),
      amount: 100_00n,
      receivers: three(200n),
      reportId: 'rep-killed',
      observedAt: at('2024-05-06T01:00:00Z'),
    });
    const [first, ...rest] = oneByOne(killed);
    await appendAll(store, [first!]);
    await project(db.sql, store);
    // the rerun reads the report again: its first row is already stored, the others come under rep-rerun
    const rerun = registerRows({
      paymentId: 'pay-split-killed',
      dateTime: at('2024-05-01T12:00:00Z'),
      amount: 100_00n,
      receivers: three(200n),
      reportId: 'rep-rerun',
      observedAt: at('2024-05-06T02:00:00Z'),
    });
    expect(rest.map((r) => r.events[0]!.id)).toEqual(rerun.events.slice(1).map((e) => e.id));
    for (const row of oneByOne(rerun)) {
      await store.appendMany([row]);
      await project(db.sql, store);
      expect((await splitRows()).filter((r) => r.payment_id === 'pay-split-killed')).toEqual([]);
    }
    const done = syncCompleted({
      ...DAY,
      completedAt: at('2024-05-06T02:05:00Z'),
      reportId: 'rep-rerun',
      announced: 6,
    });
    await appendAll(store, [done]);
    await project(db.sql, store);
    const rows = (await splitRows()).filter((r) => r.payment_id === 'pay-split-killed');
    expect(rows.map((r) => [r.status, r.detected_by_event])).toEqual([['open', done.events[0]!.id]]);
    expect(await waiting()).toEqual([]);
  });

  it('rows of a report that never completed and whose window is never synced again are judged once the grace has passed since they were observed', async () => {
    // the sync died after two of the three receiver rows; the day falls out of the lookback and is never read again
    const abandoned = registerRows({
      paymentId: 'pay-split-abandoned',
      dateTime: at('2024-05-01T13:00:00Z'),
      amount: 100_00n,
      receivers: three(),
      reportId: 'rep-abandoned',
      observedAt: at('2024-05-07T01:00:00Z'),
    });
    await appendAll(store, oneByOne(abandoned).slice(0, 2));
    await project(db.sql, store);
    const other = (d: string, completedAt: string, reportId: string) =>
      syncCompleted({ from: at(`${d}T00:00:00Z`), to: at(`${d}T23:59:59Z`), completedAt: at(completedAt), reportId });
    await appendAll(store, [other('2024-05-07', '2024-05-08T01:00:00Z', 'rep-may-7')]);
    await project(db.sql, store);
    expect((await splitRows()).filter((r) => r.payment_id === 'pay-split-abandoned')).toEqual([]);
    expect(await waiting()).toEqual(['pay-split-abandoned:rep-abandoned']);
    // 48 h after the rows were observed, an unrelated event moves the clock past it: judged on the rows there are
    const later = other('2024-05-08', '2024-05-09T02:00:00Z', 'rep-may-8');
    await appendAll(store, [later]);
    await project(db.sql, store);
    const rows = (await splitRows()).filter((r) => r.payment_id === 'pay-split-abandoned');
    expect(rows.map((r) => [r.status, r.detected_by_event, r.detected_at?.toISOString()])).toEqual([
      ['open', later.events[0]!.id, '2024-05-09T02:00:00.000Z'],
    ]);
    expect(rows[0]!.values).toMatchObject({ shares_sum: '8000', original_amount: '10000' });
    expect(await waiting()).toEqual([]);
  });

  it('a split whose shares add up waits for nothing once its period record is there; one that does not waits for its report', async () => {
    const op = (paymentId: string, short: bigint, hour: string) => {
      const dateTime = at(`2024-05-10T${hour}:00:00Z`);
      return [
        registerRows({
          paymentId,
          dateTime,
          amount: 100_00n,
          receivers: three(short),
          reportId: 'rep-C',
          observedAt: at('2024-05-13T01:00:00Z'),
        }),
        periodRow({ paymentId, dateTime, amount: 100_00n, reportId: 'rep-C', observedAt: at('2024-05-13T01:01:00Z') }),
      ];
    };
    await appendAll(store, [...op('pay-split-sums', 0n, '10'), ...op('pay-split-short-c', 100n, '11')]);
    await project(db.sql, store);
    // both judged (past the grace) while rep-C is still arriving: only the short one's rows can change at its end
    expect(await waiting()).toEqual(['pay-split-short-c:rep-C']);
    const done = syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T01:05:00Z'),
      reportId: 'rep-C',
      announced: 8,
    });
    await appendAll(store, [done]);
    await project(db.sql, store);
    const rows = (await splitRows()).filter(
      (r) => r.payment_id === 'pay-split-sums' || r.payment_id === 'pay-split-short-c',
    );
    expect(rows.map((r) => [r.payment_id, r.status, r.detected_by_event])).toEqual([
      ['pay-split-short-c', 'open', done.events[0]!.id],
    ]);
    expect(await waiting()).toEqual([]);
  });

  it('a rebuild in one batch and in batches of one event gives the same rows as the steps above', async () => {
    const stepwise = await digest();
    for (const batchSize of [100_000, 1]) {
      await rebuildInBatches(db.sql, store, batchSize);
      expect(await digest()).toEqual(stepwise);
    }
  });
});
