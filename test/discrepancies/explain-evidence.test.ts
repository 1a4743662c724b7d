import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import { WebhookReceived, paymentStream } from '../../src/events/ingest-events';
import { explain } from '../../src/reconciliation/explain';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { POS, appendAll, at, periodRow, project, registerRows, syncCompleted, webhook } from './fixtures';

/**
 * `recon explain` lists every evidence event of the payment's discrepancies. It left out the sync window that
 * is the evidence of a webhook-only payment's missing_in_report when the webhook had `created_at` but no
 * `processed_at`: explain took a webhook's time from `processed_at` only, matching from
 * `processed_at`, else `created_at`. Explain now reads the time through matching's own `observationOf`, and
 * also lists the windows covering each operation's `occurred_at` (the first-seen time when no source gives one).
 */

let db: TestDatabase;
let store: EventStore;

/** A final webhook-only payment, with the given PSP times (both are optional in the webhook). */
function webhookOnly(
  paymentId: string,
  times: { createdAt: string | null; processedAt: string | null },
  receivedAt: string,
): AppendRequest {
  const w = {
    kind: 'primary' as const,
    paymentId,
    orderId: `order-${paymentId}`,
    operationId: null,
    transactionId: `tx-${paymentId}`,
    method: 'purchase' as const,
    status: 'success' as const,
    statusCode: '1000',
    currency: 'UAH',
    amount: '5000',
    fee: '0',
    feeCurrency: 'UAH',
    ...times,
    recurringId: null,
    other: {},
  };
  return {
    stream: paymentStream(POS, paymentId),
    events: [
      newEvent(
        WebhookReceived,
        { posId: POS, raw: JSON.stringify(w), webhook: w },
        { metadata: { receivedAt, remoteAddress: '127.0.0.1' } },
      ),
    ],
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const t = at('2024-05-10T08:00:00Z');
  await appendAll(store, [
    registerRows({
      paymentId: 'pay-a',
      dateTime: t,
      amount: 100_00n,
      reportId: 'r1',
      observedAt: at('2024-05-10T20:00:00Z'),
    }),
    periodRow({
      paymentId: 'pay-a',
      dateTime: t,
      amount: 100_00n,
      reportId: 'r1',
      observedAt: at('2024-05-10T20:00:00Z'),
    }),
    webhook({ paymentId: 'pay-a', processedAt: t, amount: 90_00n, receivedAt: t }),
    // webhook-only operations: neither the register nor the period list has them
    webhookOnly('pay-created', { createdAt: t, processedAt: null }, at('2024-05-10T08:00:05Z')),
    webhookOnly('pay-untimed', { createdAt: null, processedAt: null }, at('2024-05-10T08:00:05Z')),
    webhookOnly('pay-processed', { createdAt: t, processedAt: at('2024-05-10T08:00:01Z') }, at('2024-05-10T08:00:05Z')),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r2',
    }),
  ]);
  await project(db.sql, store);
});

afterAll(async () => {
  await db?.drop();
});

describe('recon explain lists the evidence of the discrepancies', () => {
  it.each([
    ['a webhook with created_at only', 'pay-created'],
    ['a webhook with neither created_at nor processed_at (occurred_at is when recon first saw it)', 'pay-untimed'],
    ['a webhook with processed_at', 'pay-processed'],
  ])('the sync window of the missing_in_report of %s', async (_what, paymentId) => {
    const x = await explain({ sql: db.sql, store, posIds: [POS] }, paymentId);
    const missing = x.discrepancies.filter((d) => d.type === 'missing_in_report');
    expect(missing).toHaveLength(1);
    const listed = new Set(x.events.map((e) => e.id));
    const types = new Map(x.events.map((e) => [e.id, e.type]));
    expect(missing[0]!.evidence.map((id) => types.get(id)).sort()).toEqual(['SyncWindowCompleted', 'WebhookReceived']);
    for (const d of x.discrepancies)
      expect(
        d.evidence.filter((id) => !listed.has(id)),
        `${d.type} of ${paymentId}`,
      ).toEqual([]);
  });

  it("every evidence event of every payment's discrepancies", async () => {
    const payments = await db.sql<
      { payment_id: string }[]
    >`select distinct payment_id from recon.discrepancies where payment_id is not null order by 1`;
    expect(payments.map((p) => p.payment_id)).toEqual(['pay-a', 'pay-created', 'pay-processed', 'pay-untimed']);
    for (const { payment_id } of payments) {
      const x = await explain({ sql: db.sql, store, posIds: [POS] }, payment_id);
      const listed = new Set(x.events.map((e) => e.id));
      expect(x.discrepancies.length).toBeGreaterThan(0);
      for (const d of x.discrepancies)
        expect(
          d.evidence.filter((id) => !listed.has(id)),
          `${d.type} of ${payment_id}`,
        ).toEqual([]);
    }
  });
});
