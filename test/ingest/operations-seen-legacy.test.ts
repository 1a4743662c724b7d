import { describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { catchUpOperationsSeen } from '../../src/ingest/operations-seen';
import { createPostgresEventStore } from '../../src/store/postgres';
import { comparePositions, parsePosition, type EventStore } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';
import { createTestDatabase, useTestStore, type TestDatabase } from '../support/db';
import { capturingLogger } from '../ingest/helpers';

/** The healing index's checkpoint check (src/ingest/operations-seen.ts) for a checkpoint made before migration 0800, with no event at its position (found in review: it was kept). */
const POS = 'pos-r2-ops';
const meta = { source: 'register' as const, reportId: 'r-1', window: { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' }, observedAt: '2025-02-02T00:00:00.000Z' };

function record(paymentId: string): NormalizedRegisterRecord {
  return {
    projectId: POS, orderId: `o-${paymentId}`, paymentId, method: 'purchase', status: 'success', dateTime: '2025-01-10T10:00:00.000Z',
    currency: 'UAH', amount: '1000', originalAmount: '1000', customerFee: '0', merchantFee: '20', receiverName: null, receiverAmount: null,
    receiverFee: null, reserveAmount: null, cardMask: null, payway: null, other: {},
  };
}

async function appendRecord(db: TestDatabase, store: EventStore, paymentId: string) {
  const k = registerObserved(POS, JSON.stringify({ paymentId }), record(paymentId), meta);
  await store.appendMany([{ stream: k.stream, events: [k.event] }]);
  await waitVisible(db.sql, store);
}

describe('operations seen: a checkpoint from before migration 0800', () => {
  const fx = useTestStore();
  const payments = async () => (await fx.db.sql<{ payment_id: string }[]>`select payment_id from ingest_operations_seen order by 1`).map((r) => r.payment_id);

  it('a checkpoint from before migration 0800 whose position holds no event in the store is read again from the start', async () => {
    await appendRecord(fx.db, fx.store, 'p-lost');
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    expect(await payments()).toEqual(['p-lost']);
    // as migration 0800 leaves a checkpoint made before it
    await fx.db.sql`update ingest_checkpoints set event_id = null where name = 'ingest_operations_seen'`;
    const [cp] = await fx.db.sql<{ position: string }[]>`select position from ingest_checkpoints where name = 'ingest_operations_seen'`;

    // the event store alone restored to an older backup (without p-lost) and appended to since
    const restored = await createTestDatabase();
    try {
      const restoredStore = createPostgresEventStore(restored.sql);
      await appendRecord(restored, restoredStore, 'p-new');
      expect(comparePositions((await restoredStore.headPosition())!, parsePosition(cp!.position))).toBe(1);
      expect(await restoredStore.readAt(parsePosition(cp!.position))).toBeUndefined();

      const { log, lines } = capturingLogger();
      await catchUpOperationsSeen(fx.db.sql, restoredStore, { log });
      expect.soft(lines.some((l) => l.includes('read again from the start'))).toBe(true);
      expect(await payments()).toEqual(['p-new']);
    } finally {
      await restored.drop();
    }
  });
});
