import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { order, orderDiscrepancies, projectOrders } from './support';

/**
 * Payments are compared with the marketplace's orders from the first order it recorded on: a marketplace
 * that never sends its orders must not see every payment as payment_without_order (a holding type: all its
 * money would be held on the statements).
 */
const T = (h: number, day = '01') => `2024-03-${day}T${String(h).padStart(2, '0')}:00:00.000Z`;
const SEEN = '2024-03-01T23:30:00.000Z';
const LATER = '2024-03-04T01:00:00.000Z'; // past the 48 h grace of every payment
const pay = (paymentId: string, orderId: string, hour: number, day = '01') =>
  registerRows({
    paymentId,
    orderId,
    dateTime: T(hour, day),
    amount: 25_00n,
    receivers: [{ name: 'Beta Store', amount: 24_50n, fee: 50n }],
    reportId: 'r1',
    observedAt: SEEN,
  });

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [subMerchant('sm-b', 'Beta Store'), pay('pay-9', 'ord-9', 9), pay('pay-14', 'ord-14', 14)]);
  await appendAll(store, [syncCompleted({ from: T(0), to: LATER, completedAt: LATER, reportId: 'r2' })]);
  await projectOrders(db.sql, store);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('payments without orders', () => {
  it('are no discrepancy while the marketplace records no orders', async () => {
    expect(await orderDiscrepancies(db.sql)).toEqual([]);
  });

  it("are compared from the first order's business day on: a payment that day with no order stands, one the day before not", async () => {
    await appendAll(store, [
      order({ order_id: 'ord-x', amount: '10.00', currency: 'UAH', created_at: T(12, '02'), split: 'sm-b:10.00' }),
      pay('pay-15', 'ord-15', 15, '02'),
      pay('pay-10', 'ord-10', 10, '02'),
      pay('pay-20', 'ord-20', 20, '01'),
      syncCompleted({
        from: T(0),
        to: '2024-03-05T01:00:00.000Z',
        completedAt: '2024-03-05T01:00:00.000Z',
        reportId: 'r3',
      }),
    ]);
    await projectOrders(db.sql, store);
    const found = (await orderDiscrepancies(db.sql)).map((d) => `${d.type} ${d.payment_id ?? d.order_id}`).sort();
    expect(found).toContain('payment_without_order pay-15');
    expect(found).toContain('payment_without_order pay-10');
    expect(found).not.toContain('payment_without_order pay-20');
    expect(found).not.toContain('payment_without_order pay-9');
  });
});
