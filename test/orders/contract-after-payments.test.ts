import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, registerRows, subMerchant } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import {
  feeLine,
  order,
  orderDiscrepancies,
  projectOrders,
  rebuildOrders,
  rebuildOrdersInChunks,
  snapshot,
} from './support';

/**
 * A fee contract line or a directory entry that arrives after the payments judges every order with a payment
 * again, at that event, though nothing else touches them: the contract decides their fees, the directory their
 * parts' sub-merchants. Orders without a payment are not judged by it (and not loaded for it: issue 26).
 */
const CREATED = '2024-03-01T08:00:00.000Z';
const SEEN = '2024-03-01T23:30:00.000Z';
const pay = (paymentId: string, orderId: string, name: string, charged: bigint) =>
  registerRows({
    paymentId,
    orderId,
    dateTime: '2024-03-01T10:00:00.000Z',
    amount: 20_00n,
    receivers: [{ name, amount: 20_00n - charged, fee: charged }],
    reportId: 'r1',
    observedAt: SEEN,
  });
const placed = (orderId: string, split: string) =>
  order({ order_id: orderId, amount: '20.00', currency: 'UAH', created_at: CREATED, split });
const line = (currency: string) =>
  feeLine({
    subMerchantId: 'sm-b',
    method: 'purchase',
    currency,
    percent: '2',
    fixed: '0',
    effectiveFrom: '2024-01-01',
    rounding: 'half_up',
  });
// two lines in one append (one stream): the orders are judged at its end, named by its first event
const fees2Percent = { ...line('UAH'), events: [...line('UAH').events, ...line('USD').events] };

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('sm-b', 'Beta Store'),
    placed('ord-fee', 'sm-b:20.00'),
    placed('ord-new-shop', 'sm-c:20.00'),
    // orders never paid: nothing the contract or the directory changes
    ...Array.from({ length: 30 }, (_, i) => placed(`ord-unpaid-${i}`, 'sm-b:20.00')),
    pay('pay-fee', 'ord-fee', 'Beta Store', 50n),
    pay('pay-new-shop', 'ord-new-shop', 'Gamma Goods', 40n),
    // more paid orders, fees above, at and below the line to come, so that they fill several chunks
    ...Array.from({ length: 12 }, (_, i) => placed(`ord-paid-${i}`, 'sm-b:20.00')),
    ...Array.from({ length: 12 }, (_, i) => pay(`pay-paid-${i}`, `ord-paid-${i}`, 'Beta Store', BigInt(38 + (i % 5)))),
  ]);
  await projectOrders(db.sql, store);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const found = async () =>
  (await orderDiscrepancies(db.sql)).map((d) => `${d.type} ${d.order_id} ${d.status} ${d.detected_by_event}`);

describe('a contract line or a directory entry after the payments', () => {
  it('judges the paid orders again at that event', async () => {
    const before = await found();
    // without a line for sm-b its fee is not compared; Gamma Goods is no sub-merchant yet
    expect(before.filter((f) => f.startsWith('fee_'))).toEqual([]);
    const newShop = before.filter((f) => f.includes('ord-new-shop'));
    expect(newShop).toHaveLength(1);

    await appendAll(store, [fees2Percent]);
    await projectOrders(db.sql, store);
    const first = fees2Percent.events[0]!.id;
    const fees = (await found()).filter((f) => f.startsWith('fee_'));
    expect(fees).toContain(`fee_above_contract ord-fee open ${first}`);
    // 38…42 against 40: two below, two above, one at the line in every five
    expect(fees.filter((f) => f.includes('ord-paid-')).sort()).toEqual(
      [0, 1, 3, 4, 5, 6, 8, 9, 10, 11]
        .map((i) => `fee_${38 + (i % 5) > 40 ? 'above' : 'below'}_contract ord-paid-${i} open ${first}`)
        .sort(),
    );

    const shop = subMerchant('sm-c', 'Gamma Goods');
    await appendAll(store, [shop]);
    await projectOrders(db.sql, store);
    const after = (await found()).filter((f) => f.includes('ord-new-shop'));
    expect(after).not.toEqual(newShop);
    // the order's split difference, found while Gamma Goods was no sub-merchant, is resolved by the directory event
    const [row] = (await orderDiscrepancies(db.sql)).filter((d) => d.order_id === 'ord-new-shop');
    expect(row).toMatchObject({ status: 'resolved', resolved_by_event: shop.events[0]!.id });
  });

  it('gives the same rows replayed from zero in any batch size', async () => {
    const live = await snapshot(db.sql);
    for (const size of [1, 7, 1000]) {
      await rebuildOrders(db.sql, store, size);
      expect(await snapshot(db.sql)).toBe(live);
    }
  }, 120_000);

  it('gives the same rows with the paid orders judged a few at a time after such an event', async () => {
    const live = await snapshot(db.sql);
    for (const [chunk, batch] of [
      [1, 1000],
      [3, 1000],
      [5, 7],
      [2, 1],
    ] as const) {
      await rebuildOrdersInChunks(db.sql, store, batch, chunk);
      expect(await snapshot(db.sql)).toBe(live);
    }
  }, 120_000);
});
