import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, at, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { order, projectOrders } from './support';
import { addUser } from '../../src/people/manage';

/**
 * `recon discrepancies accept` on an order discrepancy, in its own process: it finds the discrepancy through
 * the union of every discrepancy view, requires --decision for a type that holds money, and what
 * `recon discrepancies` prints afterwards is current (the orders read model caught up, not only the
 * reconciliation's).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
let db: TestDatabase;
let store: EventStore;
let id: string;
let token: string;

const run = (args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: db.url,
      RECON_TIMEZONE: 'UTC',
      RECON_LOG_LEVEL: 'error',
      RECON_TOKEN: token,
    },
    encoding: 'utf8',
    timeout: 180_000,
  });

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('SM-A', 'Alpha Shop'),
    // the marketplace records its orders (payments are compared with orders from the first one's day)
    order({ order_id: 'ord-other', amount: '10.00', currency: 'UAH', created_at: '2024-03-10T08:00:00Z', split: '' }),
    // a payment the marketplace never ordered, past the grace period
    registerRows({
      paymentId: 'pay-orphan',
      orderId: 'ord-orphan',
      dateTime: at('2024-03-10T10:00:00Z'),
      amount: 26_00n,
      receivers: [{ name: 'Alpha Shop', amount: 25_00n, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: at('2024-03-14T00:00:00Z'),
      reportId: 'rep-1',
      announced: 1,
    }),
  ]);
  await projectOrders(db.sql, store);
  const [row] = await db.sql<{ id: string }[]>`
    select id::text from recon.order_discrepancies where type = 'payment_without_order' and status = 'open'`;
  id = row!.id;
  // the decision is signed by the token's owner: an analyst
  const admin = await addUser(store, undefined, { id: 'olena', name: 'Olena Koval', role: 'admin' });
  token = (await addUser(store, admin.token, { id: 'ivan', name: 'Ivan Petrenko', role: 'analyst' })).token;
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('recon discrepancies accept on an order discrepancy', () => {
  it('is listed by recon discrepancies', () => {
    const r = run(['discrepancies', '--type', 'payment_without_order', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ id: string; status: string; order_id: string }>;
    expect(rows.map((d) => [d.id, d.status, d.order_id])).toEqual([[id, 'open', 'ord-orphan']]);
  });

  it('requires --decision, then records it and the listing shows it accepted', () => {
    const without = run(['discrepancies', 'accept', id, '--note', 'ordered by phone']);
    expect(without.status).toBe(2);
    expect(without.stderr).toMatch(/payment_without_order holds money on the statements.*--decision pay\|withhold/);
    const accepted = run(['discrepancies', 'accept', id, '--note', 'ordered by phone', '--decision', 'withhold']);
    expect(accepted.stderr).toBe('');
    expect(accepted.status).toBe(0);
    expect(accepted.stdout).toMatch(new RegExp(`^accepted payment_without_order ${id} \\(event [0-9a-f-]{36}\\)`));
    const listed = run(['discrepancies', '--payment', 'pay-orphan', '--format', 'json']);
    expect(listed.status).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; status: string; accepted_by: string }>;
    expect(rows.filter((d) => d.id === id).map((d) => [d.status, d.accepted_by])).toEqual([['accepted', 'ivan']]);
    const again = run(['discrepancies', 'accept', id, '--note', 'x', '--decision', 'pay']);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/already/);
  }, 600_000);
});
