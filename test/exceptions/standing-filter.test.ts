import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as reconciliation } from '../../projections/reconciliation';
import { listExceptions } from '../../src/exceptions/queries';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';

/**
 * The nightly report's Decisions sheet asks for the exceptions the sources have not resolved (`standing`), left
 * out in the query rather than read and dropped: a 1M month keeps a resolved discrepancy per order, and reading
 * them all is the likeliest cause of the 1M month's nightly report running out of heap. A resolved
 * discrepancy's exception is always in the state `resolved` (stateOf), so the filter leaves out exactly those.
 */

let db: TestDatabase;
let store: EventStore;
const T = at('2024-05-10T08:00:00Z');
const OBSERVED = at('2024-05-10T20:00:00Z');
const receivers = [{ name: 'Alpha Shop', amount: 7_00n, fee: 0n }];

const project = () =>
  runProjections(
    { sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48, projections: [reconciliation] },
    {},
  );

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const late = { dateTime: T, amount: 7_00n, reportId: 'r1', observedAt: OBSERVED };
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    // not in the register when its window is synced: missing_in_report, resolved when the row comes
    periodRow({ paymentId: 'pay-late', merchantFee: 0n, ...late }),
    webhook({ paymentId: 'pay-late', processedAt: T, amount: 7_00n, fee: 0n, receivedAt: T }),
    // the webhook states another amount: stays open
    registerRows({ paymentId: 'pay-odd', receivers, ...late }),
    periodRow({ paymentId: 'pay-odd', merchantFee: 0n, ...late }),
    webhook({ paymentId: 'pay-odd', processedAt: T, amount: 8_00n, fee: 0n, receivedAt: T }),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r1',
    }),
  ]);
  await project();
  await appendAll(store, [
    registerRows({ paymentId: 'pay-late', receivers, ...late, reportId: 'r2', observedAt: at('2024-05-13T01:00:00Z') }),
  ]);
  await project();
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('listExceptions({ standing: true })', () => {
  it('is every exception but the resolved ones, in the same order', async () => {
    const all = (await listExceptions(db.sql, {})).items;
    const standing = (await listExceptions(db.sql, { standing: true })).items;
    expect(all.some((x) => x.state === 'resolved')).toBe(true);
    expect(standing.length).toBeGreaterThan(0);
    expect(standing).toEqual(all.filter((x) => x.state !== 'resolved'));
  });
});
