import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { OrderConflictError, formatOrderIssue, importOrderFile } from '../../src/ingest/orders/import';
import { orderInput } from '../../src/ingest/orders/input';

const dir = mkdtempSync(path.join(tmpdir(), 'recon-orders-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

const CSV = `order_id,amount,currency,created_at,split,customer_reference,amended_at,cancelled_at
o-1,100.00,EUR,2025-01-05T10:00:00Z,sm-a:60.00;sm-b:40.00,cust-9,,
o-2,25.5,EUR,2025-01-05T12:00:00+02:00,,,,
"o-1",90.00,EUR,2025-01-05T10:00:00Z,sm-a:50.00;sm-b:40.00,cust-9,2025-01-05T11:00:00Z,
o-2,,,,,,,2025-01-06T09:00:00Z
`;
const NDJSON = [
  {
    order_id: 'n-1',
    amount: 12.5,
    currency: 'EUR',
    created_at: '2025-01-05T10:00:00Z',
    split: [{ sub_merchant_id: 'sm-a', amount: '12.50' }],
  },
  { order_id: 'n-2', amount: '99999999999.99', currency: 'UAH', created_at: '2025-01-05T10:00:00.123Z' },
]
  .map((o) => JSON.stringify(o))
  .join('\n');

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

const orderEvents = async () =>
  (await store.readAll()).filter((e) => e.stream.startsWith('order-')).map((e) => `${e.stream} ${e.type}`);

describe('recon orders import', () => {
  it('imports CSV placements, amendments and cancellations as events, exactly', async () => {
    const r = await importOrderFile(store, file('orders.csv', CSV), 'csv');
    expect(r).toEqual({ ok: true, records: 4, appended: 4, duplicates: 0 });
    // one request per stream in a batch: an order's versions stay in file order
    expect(await orderEvents()).toEqual([
      'order-o-1 OrderPlaced',
      'order-o-1 OrderAmended',
      'order-o-2 OrderPlaced',
      'order-o-2 OrderCancelled',
    ]);
    const [o2] = await store.readStream('order-o-2');
    expect(o2!.data).toEqual({
      orderId: 'o-2',
      amount: '2550',
      currency: 'EUR',
      createdAt: '2025-01-05T10:00:00.000Z',
      split: [],
      customerReference: null,
    });
    expect(o2!.metadata).toMatchObject({ file: 'orders.csv', line: 3 });
  });

  it('imports NDJSON with numbers kept exact', async () => {
    const r = await importOrderFile(store, file('orders.ndjson', NDJSON), 'ndjson');
    expect(r).toMatchObject({ ok: true, appended: 2 });
    const [n2] = await store.readStream('order-n-2');
    expect((n2!.data as { amount: string }).amount).toBe('9999999999999');
  });

  it('an import run again appends nothing', async () => {
    expect(await importOrderFile(store, file('orders.csv', CSV), 'csv')).toEqual({
      ok: true,
      records: 4,
      appended: 0,
      duplicates: 4,
    });
  });

  it('bad records name the file, the line and the field, and nothing is written', async () => {
    const before = (await store.readAll()).length;
    const bad = `order_id,amount,currency,created_at,split
b-1,10.00,EUR,2025-01-05T10:00:00Z,
b-2,10.001,EUR,2025-01-05T10:00:00Z,
b-3,10.00,eur,2025-01-05T10:00:00Z,
b-4,10.00,EUR,2025-01-05 10:00,
b-5,10.00,EUR,2025-01-05T10:00:00Z,sm-a:11.00
b-6,10.00,EUR,2025-01-05T10:00:00Z,sm-a:1.00;bad id:1.00
`;
    const r = await importOrderFile(store, file('bad.csv', bad), 'csv');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => `${i.file}:${i.line} ${i.field}`)).toEqual([
      'bad.csv:3 amount',
      'bad.csv:4 currency',
      'bad.csv:5 created_at',
      'bad.csv:6 split',
      'bad.csv:7 split[1].sub_merchant_id',
    ]);
    expect(formatOrderIssue(r.issues[0]!)).toBe('bad.csv:3 (field amount): more than two decimals: 10.001');
    expect((await store.readAll()).length).toBe(before);
  });

  it('refuses a file that is not what it says, naming the line', async () => {
    const r = await importOrderFile(store, file('broken.ndjson', '{"order_id":"x-1"\n'), 'ndjson');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]).toMatchObject({ file: 'broken.ndjson', line: 1, field: null });
    const h = await importOrderFile(store, file('header.csv', 'order,amount\nx,1\n'), 'csv');
    expect(h.ok).toBe(false);
    if (!h.ok) expect(h.issues[0]!.message).toContain('unknown column "order"');
    const cols = await importOrderFile(store, file('cols.csv', 'order_id,amount\nx,1,2\n'), 'csv');
    expect(cols.ok).toBe(false);
    if (!cols.ok) expect(cols.issues[0]!.line).toBe(2);
  });

  it('one order placed twice with other values in one file is refused before anything is written', async () => {
    const before = (await store.readAll()).length;
    const twice = `order_id,amount,currency,created_at
t-1,10.00,EUR,2025-01-05T10:00:00Z
t-2,10.00,EUR,2025-01-05T10:00:00Z
t-1,11.00,EUR,2025-01-05T10:00:00Z
t-2,10.00,EUR,2025-01-05T10:00:00Z
`;
    const r = await importOrderFile(store, file('twice.csv', twice), 'csv');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues).toHaveLength(1);
      expect(formatOrderIssue(r.issues[0]!)).toContain(
        'twice.csv:4: order t-1: this version is also at line 2 with other values',
      );
    }
    expect((await store.readAll()).length).toBe(before);
  });

  it('a version already recorded with other values is refused with its line, never edited', async () => {
    const edit = `order_id,amount,currency,created_at\no-1,101.00,EUR,2025-01-05T10:00:00Z\n`;
    await expect(importOrderFile(store, file('edit.csv', edit), 'csv')).rejects.toThrow(OrderConflictError);
    await expect(importOrderFile(store, file('edit.csv', edit), 'csv')).rejects.toThrow(/edit\.csv:2: order o-1/);
    expect(((await store.readStream('order-o-1'))[0]!.data as { amount: string }).amount).toBe('10000');
  });
});

describe('one order record', () => {
  it('refuses unknown fields and gives the field of every problem', () => {
    expect(
      orderInput({ order_id: 'x', amount: '1', currency: 'EUR', created_at: '2025-01-01T00:00:00Z', colour: 'red' }),
    ).toMatchObject({
      ok: false,
      field: 'colour',
    });
    expect(orderInput({ amount: '1' })).toMatchObject({ ok: false, field: 'order_id' });
    expect(
      orderInput({ order_id: 'x', amount: '0', currency: 'EUR', created_at: '2025-01-01T00:00:00Z' }),
    ).toMatchObject({
      ok: false,
      field: 'amount',
    });
    expect(orderInput({ order_id: 'x', cancelled_at: 'yesterday' })).toMatchObject({
      ok: false,
      field: 'cancelled_at',
    });
  });

  it('gives one id to one version whatever the order of its fields, another to an amendment', () => {
    const a = orderInput({ order_id: 'x', amount: '1', currency: 'EUR', created_at: '2025-01-01T00:00:00Z' });
    const b = orderInput({ created_at: '2025-01-01T02:00:00+02:00', currency: 'EUR', amount: '1.00', order_id: 'x' });
    const c = orderInput({
      order_id: 'x',
      amount: '2',
      currency: 'EUR',
      created_at: '2025-01-01T00:00:00Z',
      amended_at: '2025-01-02T00:00:00Z',
    });
    if (!a.ok || !b.ok || !c.ok) throw new Error('valid records refused');
    expect(a.item.event.id).toBe(b.item.event.id);
    expect(a.item.event.data).toEqual(b.item.event.data);
    expect(c.item.event.id).not.toBe(a.item.event.id);
  });
});
