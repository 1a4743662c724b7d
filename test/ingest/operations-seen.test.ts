import { describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { catchUpOperationsSeen } from '../../src/ingest/operations-seen';
import { parsePosition, type EventStore } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';
import { useTestStore, type TestDatabase } from '../support/db';
import { capturingLogger } from './helpers';

const POS = 'pos-ops-seen';
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

describe('operations seen (the healing index)', () => {
  const fx = useTestStore();

  const payments = async () => (await fx.db.sql<{ payment_id: string }[]>`select payment_id from ingest_operations_seen order by 1`).map((r) => r.payment_id);

  it('reads itself again from the start when its checkpoint is past the store\'s head (the store restored or replaced)', async () => {
    await appendRecord(fx.db, fx.store, 'p-1');
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    expect(await payments()).toEqual(['p-1']);

    // as if the store had been restored to an older backup: the checkpoint is beyond everything it has,
    // and the table holds an operation the store no longer has
    await fx.db.sql`update ingest_checkpoints set position = '999999999999/999999999' where name = 'ingest_operations_seen'`;
    await fx.db.sql`insert into ingest_operations_seen (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;
    await appendRecord(fx.db, fx.store, 'p-2');

    const { log, lines } = capturingLogger();
    const read = await catchUpOperationsSeen(fx.db.sql, fx.store, { log });
    expect(read).toBe(2);
    expect(await payments()).toEqual(['p-1', 'p-2']);
    expect(lines.some((l) => l.includes('checkpoint past the event store'))).toBe(true);
    // and nothing more to do afterwards
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store, { log })).toBe(0);
  });

  it('reads itself again from the start when its checkpoint holds another event (the store restored and appended to since)', async () => {
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    const [cp] = await fx.db.sql<{ position: string; event_id: string | null }[]>`select position, event_id::text from ingest_checkpoints where name = 'ingest_operations_seen'`;
    expect((await fx.store.readAt(parsePosition(cp!.position)))?.id).toBe(cp!.event_id);

    // a checkpoint from before migration 0800 takes the id of the event at its position, and nothing is read again
    await fx.db.sql`update ingest_checkpoints set event_id = null where name = 'ingest_operations_seen'`;
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store)).toBe(0);
    const [recorded] = await fx.db.sql<{ event_id: string | null }[]>`select event_id::text from ingest_checkpoints where name = 'ingest_operations_seen'`;
    expect(recorded!.event_id).toBe(cp!.event_id);

    // as if the store had been restored to an older backup and appended to past the checkpoint: another
    // event at the checkpoint's position, and the table holds an operation the store no longer has
    await fx.db.sql`update ingest_checkpoints set event_id = ${crypto.randomUUID()}::uuid where name = 'ingest_operations_seen'`;
    await fx.db.sql`insert into ingest_operations_seen (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;
    const { log, lines } = capturingLogger();
    const all = await fx.store.readAll(undefined, { maxCount: 100_000 });
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store, { log })).toBe(all.length);
    expect(await payments()).toEqual(['p-1', 'p-2']);
    expect(lines.some((l) => l.includes(`the event at the checkpoint is ${cp!.event_id}, not`))).toBe(true);
  });
});
