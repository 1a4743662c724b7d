import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import type { PspPurchaseClient } from '../../src/psp/purchase-client';
import { recordingPurchases } from '../../src/ingest/orders/purchase-orders';
import { loadConfig } from '../../src/config/env';

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** A stand-in for the PSP client that only counts the purchases it is asked for (the real one is tested in test/psp). */
function countingClient() {
  const calls: unknown[] = [];
  const client = {
    splitPurchase: async (req: unknown) => {
      calls.push(req);
      return { kind: 'hosted', location: 'https://psp.example/checkout' };
    },
  } as unknown as PspPurchaseClient;
  return { client, calls };
}

const request = (amount: number) =>
  ({
    pos_id: 'pos-1',
    mode: 'hosted',
    method: 'purchase',
    order_id: 'auto-1',
    amount,
    currency: 'UAH',
    split: [
      { sub_merchant_id: 'sm-a', amount: 100 },
      { sub_merchant_id: 'sm-b', amount: 50.5 },
    ],
  }) as never;

describe("orders recorded by recon's own purchases", () => {
  it('records the order before the purchase, once across retries', async () => {
    const { client, calls } = countingClient();
    let t = Date.parse('2025-01-05T10:00:00Z');
    const recording = recordingPurchases(client, store, { now: () => new Date((t += 60_000)) });
    await recording.splitPurchase(request(150.5));
    await recording.splitPurchase(request(150.5));
    expect(calls).toHaveLength(2);
    const events = await store.readStream('order-auto-1');
    expect(events.map((e) => e.type)).toEqual(['OrderPlaced']);
    expect(events[0]!.data).toEqual({
      orderId: 'auto-1',
      amount: '15050',
      currency: 'UAH',
      createdAt: '2025-01-05T10:01:00.000Z',
      split: [
        { subMerchantId: 'sm-a', amount: '10000' },
        { subMerchantId: 'sm-b', amount: '5050' },
      ],
      customerReference: null,
    });
    expect(events[0]!.metadata).toMatchObject({ source: 'psp-purchase', posId: 'pos-1' });
  });

  it('refuses to purchase again under a recorded order id with other values', async () => {
    const { client, calls } = countingClient();
    await expect(recordingPurchases(client, store).splitPurchase(request(151))).rejects.toThrow(
      /order auto-1 is already recorded with other values/,
    );
    expect(calls).toHaveLength(0);
  });
});

describe('RECON_ORDERS_TOKEN', () => {
  it('is a secret of its own: at least 16 characters, never the auditor token', () => {
    const same = loadConfig({ RECON_AUDITOR_TOKEN: 'x'.repeat(20), RECON_ORDERS_TOKEN: 'x'.repeat(20) });
    expect(same.ok).toBe(false);
    if (!same.ok) expect(same.issues.map((i) => i.variable)).toEqual(['RECON_ORDERS_TOKEN']);
    const short = loadConfig({ RECON_ORDERS_TOKEN: 'short' });
    expect(short.ok).toBe(false);
    const ok = loadConfig({ RECON_ORDERS_TOKEN: 'o'.repeat(20), RECON_FEE_CONTRACT: '../intent/fees.csv' });
    expect(ok.ok && ok.config.ordersToken).toBe('o'.repeat(20));
    expect(ok.ok && ok.config.feeContractPath).toBe('../intent/fees.csv');
  });
});
