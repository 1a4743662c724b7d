import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import type { Sql } from '../../src/db/connect';
import type { EventStore } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';
import type { TestDatabase } from '../support/db';

const meta = {
  source: 'register' as const,
  reportId: 'r-1',
  window: { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' },
  observedAt: '2025-02-02T00:00:00.000Z',
};

/** One register purchase of `pos` per payment (order `o-<payment>`), for the healing index tests. */
export function registerRecords(pos: string) {
  const record = (paymentId: string): NormalizedRegisterRecord => ({
    projectId: pos,
    orderId: `o-${paymentId}`,
    paymentId,
    method: 'purchase',
    status: 'success',
    dateTime: '2025-01-10T10:00:00.000Z',
    currency: 'UAH',
    amount: '1000',
    originalAmount: '1000',
    customerFee: '0',
    merchantFee: '20',
    receiverName: null,
    receiverAmount: null,
    receiverFee: null,
    reserveAmount: null,
    cardMask: null,
    payway: null,
    other: {},
  });
  /** appends the payment's register record and waits until it is visible */
  const appendRecord = async (db: TestDatabase, store: EventStore, paymentId: string) => {
    const k = registerObserved(pos, JSON.stringify({ paymentId }), record(paymentId), meta);
    await store.appendMany([{ stream: k.stream, events: [k.event] }]);
    await waitVisible(db.sql, store);
  };
  return { record, appendRecord };
}

/** The payment ids in the healing index (recon.operations_seen), sorted. */
export async function seenPayments(sql: Sql): Promise<string[]> {
  return (await sql<{ payment_id: string }[]>`select payment_id from recon.operations_seen order by 1`).map(
    (r) => r.payment_id,
  );
}
