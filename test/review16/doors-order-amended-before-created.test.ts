import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Review 16: an order's versions are ordered by their own times (created_at, amended_at), and the latest one not
 * a cancellation is the order. An amendment whose amended_at is before the order's created_at (a clock or zone
 * slip in the marketplace's export) was imported, then sorted before the placement: the order stayed at its
 * placed amount for good, the amendment recorded and never in force, and the payment of the amended amount was
 * judged against the old one. The door now refuses such a record naming amended_at, nothing imported.
 */

const RUN_MS = 180_000;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-amend-'));
let db: TestDatabase;
let store: EventStore;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error' } });
}, 120_000);

afterAll(async () => {
  await killAll();
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const eventCount = async () => (await store.readAll()).length;
const ndjson = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const placed = { order_id: 'O-1', amount: '100.00', currency: 'EUR', created_at: '2026-01-10T10:00:00Z' };

describe('review16: an amendment dated before its order was created', () => {
  it('is refused naming amended_at, nothing imported', async () => {
    const before = await eventCount();
    const file = path.join(dir, 'orders.ndjson');
    writeFileSync(file, ndjson([placed, { ...placed, amount: '150.00', amended_at: '2026-01-09T10:00:00Z' }]));
    const r = await runRecon(['orders', 'import', file], env, RUN_MS);
    expect(r.stderr).toMatch(/orders\.ndjson:2 \(field amended_at\): .*before the order's created_at/);
    expect(r.code, r.stderr).toBe(65);
    expect(await eventCount()).toBe(before);
  }, 300_000);

  it('takes one dated at or after its creation, and the order is then at the amended amount', async () => {
    const file = path.join(dir, 'orders-ok.ndjson');
    writeFileSync(file, ndjson([placed, { ...placed, amount: '150.00', amended_at: '2026-01-10T10:00:00Z' }]));
    const r = await runRecon(['orders', 'import', file], env, RUN_MS);
    expect(r.code, r.stderr).toBe(0);
    const project = await runRecon(['project'], env, RUN_MS);
    expect(project.code, project.stderr).toBe(0);
    const [o] = await db.sql<{ amount: string }[]>`select amount::text from recon.orders where order_id = 'O-1'`;
    expect(o?.amount).toBe('15000');
  }, 300_000);
});
