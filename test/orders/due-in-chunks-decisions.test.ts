import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../../src/events/audit-events';
import { newEvent } from '../../src/events/catalog';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, hoursAfter, subMerchant } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { orderDiscrepancies, projectOrders, rebuildOrdersInChunks, snapshot, betaOrder, betaPayment } from './support';

/**
 * A discrepancy opened by coming due in a batch and accepted later in the same batch (an auditor accepted it
 * after an earlier projection in smaller batches; a rebuild then reads both at once). In one piece its group
 * is loaded and the acceptance applies. Judged after the batch (chunks.ts), the group is not loaded when the
 * acceptance is replayed, nor named by it (the discrepancy is not stored yet): the batch keeps such decisions,
 * and each group come due applies them in their place (judging.ts `judgeComeDue`). Found by a fresh reviewer;
 * it failed before.
 */
const CREATED = '2024-03-01T08:00:00.000Z';
const h = (n: number) => hoursAfter(CREATED, n);
const placed = (orderId: string) => betaOrder(orderId, CREATED);
const pay = betaPayment;

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // batch 1 (4 events): the directory and three unpaid orders, stored with their due times
  await appendAll(store, [subMerchant('sm-b', 'Beta Store'), placed('ord-a'), placed('ord-b'), placed('ord-c')]);
  // batch 2: a payment whose clock passes the orders' grace period (all three come due), then an acceptance
  await appendAll(store, [pay('pay-step', 'ord-step', h(50), h(51))]);
  await projectOrders(db.sql, store);
  const found = await orderDiscrepancies(db.sql);
  const d = found.find((r) => r.order_id === 'ord-a' && r.type === 'order_not_at_psp')!;
  const b = found.find((r) => r.order_id === 'ord-b' && r.type === 'order_not_at_psp')!;
  // ord-b's is accepted, then the acceptance is revoked: open again, judged at the revocation
  const acceptB = newEvent(DiscrepancyAccepted, {
    discrepancyId: b.id,
    note: 'ok',
    acceptedBy: 'Olena K.',
    acceptedAt: '2024-03-05T09:00:00.000Z',
  });
  await appendAll(store, [
    { stream: discrepancyStream(b.id), events: [acceptB] },
    {
      stream: discrepancyStream(b.id),
      events: [
        newEvent(DiscrepancyAcceptanceRevoked, {
          discrepancyId: b.id,
          acceptance: acceptB.id,
          reason: 'the customer paid elsewhere',
          revokedBy: 'Petro M.',
          revokedAt: '2024-03-05T10:00:00.000Z',
        }),
      ],
    },
  ]);
  await appendAll(store, [
    {
      stream: discrepancyStream(d.id),
      events: [
        newEvent(DiscrepancyAccepted, {
          discrepancyId: d.id,
          note: 'ok',
          acceptedBy: 'Olena K.',
          acceptedAt: '2024-03-05T09:00:00.000Z',
        }),
      ],
    },
  ]);
  await projectOrders(db.sql, store);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('a discrepancy opened by coming due and accepted in the same batch', () => {
  it('is accepted whether the groups come due are judged in one piece or after the batch', async () => {
    const live = await snapshot(db.sql);
    const rows = await orderDiscrepancies(db.sql);
    expect(rows.filter((r) => r.status === 'accepted').map((r) => r.order_id)).toEqual(['ord-a']);
    expect(rows.find((r) => r.order_id === 'ord-b')).toMatchObject({ status: 'open' });
    // batch 4: the orders in the first batch; the payment and the decisions in the second
    for (const [batch, chunk] of [
      [4, 1000],
      [4, 1],
      [4, 2],
      [1000, 1],
    ] as const) {
      await rebuildOrdersInChunks(db.sql, store, batch, chunk);
      expect(await snapshot(db.sql), `batch ${batch}, chunk ${chunk}`).toBe(live);
    }
  }, 120_000);
});
