import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../../src/events/audit-events';
import { RegisterRecordObserved } from '../../src/events/ingest-events';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { appendAll, hoursAfter, registerRows, subMerchant } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { feeLine, order, orderDiscrepancies, projectOrders, rebuildOrdersInChunks, snapshot } from './support';

/**
 * Review of the orders chunks: appends that judge every paid group (the first order, a contract line, a directory
 * entry) mixed with orders, payments, acceptances and revocations, keys of every case and script, groups due
 * exactly at the clock; the rows must be those of the one-piece replay whatever the chunk and batch sizes.
 */
const CREATED = '2024-03-01T08:00:00.000Z';
const SEEN = '2024-03-01T23:30:00.000Z';
const KEYS = [
  'ord-a',
  'ORD-a',
  'ord-A',
  'Ord-b',
  'заказ-1',
  'Zebra',
  'zebra',
  'ord b',
  'ord_c',
  'ord-10',
  'ord-9',
  'ä-ord',
  'a-ord',
  'éclair',
  'Éclair',
  '#payment:x',
];
// order ids are ASCII at the import; the PSP's order ids may be any text
const ASCII = KEYS.filter((k) => /^[\x20-\x7e]+$/.test(k));

const pay = (paymentId: string, orderId: string | null, name: string, charged: bigint, observedAt = SEEN) => {
  const r = registerRows({
    paymentId,
    orderId: orderId ?? 'x',
    dateTime: '2024-03-01T10:00:00.000Z',
    amount: 20_00n,
    receivers: [{ name, amount: 20_00n - charged, fee: charged }],
    reportId: `r-${paymentId}`,
    observedAt,
  });
  if (orderId === null)
    // a payment whose records carry no order id: a group of its own ('#payment:…')
    return {
      ...r,
      events: r.events.map((e) => {
        const d = e.data as { posId: string; record: Record<string, unknown> };
        const record = { ...d.record, orderId: null };
        return newEvent(RegisterRecordObserved, { posId: d.posId, raw: JSON.stringify(record), record } as never, {
          metadata: e.metadata!,
        });
      }),
    };
  return r;
};
const placed = (orderId: string, split: string, created = CREATED) =>
  order({ order_id: orderId, amount: '20.00', currency: 'UAH', created_at: created, split });
const line = (currency: string, percent: string) =>
  feeLine({
    subMerchantId: 'sm-b',
    method: 'purchase',
    currency,
    percent,
    fixed: '0',
    effectiveFrom: '2024-01-01',
    rounding: 'half_up',
  });
const accept = (id: string) =>
  newEvent(DiscrepancyAccepted, {
    discrepancyId: id,
    note: 'ok',
    acceptedBy: 'Olena K.',
    acceptedAt: '2024-03-05T09:00:00.000Z',
  });
const one = (requests: AppendRequest[]) => requests;

let db: TestDatabase;
let store: EventStore;
let live = '';
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // payments before any order: judged without orders, then the first order arrives in an append with payments
  await appendAll(store, [
    subMerchant('sm-b', 'Beta Store'),
    ...KEYS.map((k, i) => pay(`pay-${i}`, k, i % 3 === 0 ? 'Gamma Goods' : 'Beta Store', BigInt(38 + (i % 5)))),
    pay('pay-none-1', null, 'Beta Store', 40n),
    pay('pay-none-2', null, 'Beta Store', 41n),
  ]);
  await projectOrders(db.sql, store);
  // the first order, with a payment before and after it, and other orders, in one append of several streams
  await store.appendMany(
    one([
      pay('pay-first-before', 'ord-first', 'Beta Store', 39n),
      placed('ord-first', 'sm-b:20.00'),
      ...ASCII.slice(0, 6).map((k) => placed(k, 'sm-b:20.00')),
      pay('pay-first-after', 'ord-z-after', 'Beta Store', 42n),
    ]),
  );
  await appendAll(store, [...ASCII.slice(6).map((k) => placed(k, 'sm-b:20.00')), placed('ord-unpaid', 'sm-b:20.00')]);
  await projectOrders(db.sql, store);
  // acceptances of discrepancies on groups late in key order, one revoked
  const rows = (await orderDiscrepancies(db.sql)).filter((d) => d.status === 'open');
  const late = rows.sort((a, b) => (String(b.order_id) < String(a.order_id) ? -1 : 1)).slice(0, 4);
  const acc = late.map((d) => accept(d.id));
  await store.appendMany(late.map((d, i) => ({ stream: discrepancyStream(d.id), events: [acc[i]!] })));
  // a contract line, a directory entry, a payment, an order and a revocation in one append; the payment's
  // observation moves the clock to exactly the end of the orders' grace period
  const revoked = late[0]!;
  await store.appendMany([
    pay('pay-late', 'ord-late', 'Beta Store', 40n, hoursAfter(CREATED, 48)),
    line('UAH', '2'),
    subMerchant('sm-c', 'Gamma Goods'),
    placed('ord-late', 'sm-c:20.00'),
    {
      stream: discrepancyStream(revoked.id),
      events: [
        newEvent(DiscrepancyAcceptanceRevoked, {
          discrepancyId: revoked.id,
          acceptance: acc[0]!.id,
          reason: 'wrong',
          revokedBy: 'Olena K.',
          revokedAt: '2024-03-06T09:00:00.000Z',
        }),
      ],
    },
    { stream: discrepancyStream(late[1]!.id), events: [accept(late[1]!.id)] },
  ]);
  // another line, then a payment a second after, then a line changing the first
  await appendAll(store, [
    line('USD', '1'),
    pay('pay-later', 'ZZ-later', 'Beta Store', 41n, hoursAfter(CREATED, 49)),
    line('UAH', '1.9'),
  ]);
  await projectOrders(db.sql, store);
  live = await snapshot(db.sql);
}, 180_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('orders chunks under review', () => {
  it('the scenario finds discrepancies of several kinds (the comparison below has something to compare)', async () => {
    const rows = await orderDiscrepancies(db.sql);
    expect(new Set(rows.map((r) => r.type)).size).toBeGreaterThan(2);
    expect(rows.some((r) => r.status === 'resolved')).toBe(true);
    expect(rows.some((r) => r.status === 'accepted')).toBe(true);
    expect(rows.some((r) => r.payment_id === 'pay-none-1' && r.order_id === null)).toBe(true);
  });

  for (const batch of [1, 7, 1000])
    for (const chunk of [1, 2, 3, 1000])
      it(`gives the live rows replayed in batches of ${batch}, paid groups ${chunk} at a time`, async () => {
        await rebuildOrdersInChunks(db.sql, store, batch, chunk);
        expect(await snapshot(db.sql)).toBe(live);
      }, 120_000);
});
