import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { appendAll, hoursAfter, subMerchant } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import {
  GRACE,
  orderDiscrepancies,
  projectOrders,
  rebuildOrdersInChunks,
  snapshot,
  betaOrder,
  betaPayment,
} from './support';

/**
 * A month's orders are recorded before its payments; the first PSP event carries a later time, and every order
 * not yet paid comes due at its append at once. Loaded in one batch, that is every unpaid order of the month
 * in memory (issue 26: the 1M month ran out of heap there). Groups come due that no event of the batch touches
 * are judged after it, a chunk at a time, as the ends of its appends would have judged them: at the end whose
 * clock reached each one's due time, with that end's clock and earliest order, named by its last event; a
 * group due twice in one batch is judged at both ends. Same rows as in one piece, in any batch size.
 */
const CREATED = '2024-03-01T08:00:00.000Z';
const h = (n: number) => hoursAfter(CREATED, n);
const placed = betaOrder;
const pay = betaPayment;

const store_: AppendRequest[] = [
  subMerchant('sm-b', 'Beta Store'),
  // unpaid orders, created an hour apart: due one after another as the clock steps on
  ...Array.from({ length: 20 }, (_, i) => placed(`ord-unpaid-${String(i).padStart(2, '0')}`, h(i))),
  ...Array.from({ length: 4 }, (_, i) => placed(`ord-paid-${i}`, h(i))),
  ...Array.from({ length: 4 }, (_, i) => pay(`pay-paid-${i}`, `ord-paid-${i}`, h(i + 1), h(i + 2))),
  // payments without an order, one a day before the first order (not compared with the orders until an
  // earlier order is recorded), each group's second payment due later than its first: judged twice
  pay('pay-lone-a1', 'ord-lone-a', h(-24), h(3)),
  pay('pay-lone-a2', 'ord-lone-a', h(20), h(21)),
  pay('pay-lone-b1', 'ord-lone-b', h(2), h(3)),
  pay('pay-lone-b2', 'ord-lone-b', h(9), h(21)),
  // the clock steps on, an append at a time: unrelated payments seen later and later
  ...[40, 50, 52, 55].map((n) => pay(`pay-step-${n}`, `ord-step-${n}`, h(n - 1), h(n))),
  // an order created before every other: payments judged from now on are compared with the orders
  placed('ord-early', h(-48)),
  ...[58, 60, 64, 69, 75, 200].map((n) => pay(`pay-step-${n}`, `ord-step-${n}`, h(n - 1), h(n))),
  // a late payment of an order already found unpaid
  pay('pay-unpaid-late', 'ord-unpaid-03', h(201), h(202)),
];

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, store_);
  await projectOrders(db.sql, store);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('orders coming due by the hundred in one batch', () => {
  it('finds each unpaid order at the append whose clock passed its grace period, and judges a group due twice twice', async () => {
    const rows = await orderDiscrepancies(db.sql);
    const unpaid = rows.filter((r) => r.type === 'order_not_at_psp' && r.order_id!.startsWith('ord-unpaid-'));
    expect(unpaid.length).toBe(20);
    // ord-unpaid-i is due at h(i + 48): the first step whose clock reaches it detects it
    const stepOf = (i: number) => [50, 52, 55, 58, 60, 64, 69, 75, 200].find((n) => n >= i + GRACE)!;
    const detectedBy = new Map<string, string>();
    for (const r of store_)
      for (const e of r.events)
        detectedBy.set(e.id, String((e.data as { record?: { paymentId?: string } }).record?.paymentId));
    for (const r of unpaid) {
      const i = Number(r.order_id!.slice(-2));
      expect(detectedBy.get(r.detected_by_event), r.order_id!).toBe(`pay-step-${stepOf(i)}`);
    }
    // paid late: resolved by that payment
    const late = unpaid.find((r) => r.order_id === 'ord-unpaid-03')!;
    expect(detectedBy.get(late.resolved_by_event!)).toBe('pay-unpaid-late');
    // lone-b's payments are due at h(50) and h(57): found at the steps reaching them. lone-a1 came a day
    // before the first order: at its due (h(24), step 40) it is not compared with the orders; at lone-a2's due
    // (h(68), step 69) the early order is recorded, and the group judged again finds both
    const lone = rows
      .filter((r) => r.order_id?.startsWith('ord-lone-'))
      .map((r) => `${r.payment_id} ${r.type} ${detectedBy.get(r.detected_by_event)}`);
    expect(lone.sort()).toEqual([
      'pay-lone-a1 payment_without_order pay-step-69',
      'pay-lone-a2 payment_without_order pay-step-69',
      'pay-lone-b1 payment_without_order pay-step-50',
      'pay-lone-b2 payment_without_order pay-step-58',
    ]);
    // the paid orders agree with their payments: nothing found
    expect(rows.filter((r) => r.order_id?.startsWith('ord-paid-'))).toEqual([]);
  });

  it('gives the same rows with the groups come due judged a few at a time, in any batch size', async () => {
    const live = await snapshot(db.sql);
    for (const [chunk, batch] of [
      [1, 1000],
      [2, 1000],
      [3, 7],
      [2, 1],
      [1000, 1],
      // the second batch holds every step and the early order, and none of the lone payments: their groups
      // come due in it untouched, before and after the early order (33: the events up to the first step)
      [2, 33],
    ] as const) {
      await rebuildOrdersInChunks(db.sql, store, batch, chunk);
      expect(await snapshot(db.sql), `chunk ${chunk}, batch ${batch}`).toBe(live);
    }
  }, 120_000);
});
