import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { asyncRoute } from '../../src/http/routes';
import { createOrdersApi } from '../../src/http/orders-api';
import { createAuditorApi } from '../../src/http/auditor-api';
import { silentLogger } from '../../src/log';

const TOKEN = 'orders-token-0123456789';
const AUDITOR = 'auditor-token-0123456789';

let db: TestDatabase;
let store: EventStore;
let app: HttpApp;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const orders = createOrdersApi({ store, token: TOKEN, now: () => new Date('2025-01-06T00:00:00Z') });
  const auditor = createAuditorApi({ sql: db.sql, token: AUDITOR });
  app = createHttpApp({
    routes: [asyncRoute('/api/orders', orders, silentLogger), asyncRoute('/api', auditor, silentLogger)],
    log: silentLogger,
  });
  base = (await app.listen(0)).url;
});
afterAll(async () => {
  await app?.close({ graceMs: 1000 });
  await store?.close();
  await db?.drop();
});

const post = (body: unknown, token = TOKEN, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const o = (id: string, amount: unknown = '10.00') => ({
  order_id: id,
  amount,
  currency: 'EUR',
  created_at: '2025-01-05T10:00:00Z',
  split: [{ sub_merchant_id: 'sm-a', amount: '4.00' }],
});
const orderEvents = async () => (await store.readAll()).filter((e) => e.stream.startsWith('order-')).length;

describe('POST /api/orders', () => {
  it('accepts one order or a batch, and a re-send is a duplicate', async () => {
    const one = await post(o('a-1'));
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual({ received: 1, appended: 1, duplicates: 0 });
    const batch = await post([o('a-1'), o('a-2'), { order_id: 'a-1', cancelled_at: '2025-01-05T12:00:00Z' }]);
    expect(await batch.json()).toEqual({ received: 3, appended: 2, duplicates: 1 });
    const [e] = await store.readStream('order-a-2');
    expect(e!.metadata).toMatchObject({ source: 'orders-api', index: 1, submittedAt: '2025-01-06T00:00:00.000Z' });
  });

  it('a batch with one bad order is a 400 naming its index and field, and nothing is written', async () => {
    const before = await orderEvents();
    const r = await post([o('b-1'), o('b-2', '1.234'), o('b-3')]);
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: 'invalid_order', index: 1, field: '[1].amount' });
    const split = await post({ ...o('b-4'), split: [{ sub_merchant_id: 'sm-a' }] });
    expect(await split.json()).toMatchObject({ field: 'split[0].amount' });
    expect((await post('{"order_id": ')).status).toBe(400);
    expect(await orderEvents()).toBe(before);
  });

  it('another value for a recorded version is a 409, never an edit', async () => {
    const r = await post([o('c-1'), o('a-1', '11.00')]);
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ error: 'order_version_conflict', index: 1 });
    expect(await store.readStream('order-c-1')).toHaveLength(0);
  });

  it('needs its own token: the auditor token, none or a wrong one is a 401; only POST with JSON', async () => {
    expect((await post(o('d-1'), AUDITOR)).status).toBe(401);
    expect((await post(o('d-1'), 'wrong-token-xxxxxxxxx')).status).toBe(401);
    const none = await fetch(`${base}/api/orders`, { method: 'POST', body: '{}' });
    expect(none.status).toBe(401);
    const get = await fetch(`${base}/api/orders`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(get.status).toBe(405);
    expect((await post(o('d-1'), TOKEN, { 'content-type': 'text/plain' })).status).toBe(415);
    expect(await store.readStream('order-d-1')).toHaveLength(0);
  });
});
