import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Review 16: an amendment carries every field as amended, its created_at among them, so one may correct the
 * order's creation time (placed at 10:00, amended at 09:30 to say it was created at 09:00 and costs 150.00). The
 * record is consistent and the door takes it; but the order's versions were ordered by their own times alone,
 * the amendment (09:30) before the placement (10:00), and the order stayed as placed for good: 100.00, the
 * amendment recorded and never in force. The placement is every order's first version; amendments follow it in
 * their order.
 */

const RUN_MS = 180_000;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-amend2-'));
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error' } });
}, 120_000);

afterAll(async () => {
  await killAll();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const ndjson = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const placed = { order_id: 'O-2', amount: '100.00', currency: 'EUR', created_at: '2026-01-10T10:00:00Z' };

describe('review16: an amendment timed before the placement it amends', () => {
  it('is the order in force after its placement', async () => {
    const amended = {
      ...placed,
      amount: '150.00',
      created_at: '2026-01-10T09:00:00Z',
      amended_at: '2026-01-10T09:30:00Z',
    };
    for (const [name, records] of [
      ['placed.ndjson', [placed]],
      ['amended.ndjson', [amended]],
    ] as const) {
      const file = path.join(dir, name);
      writeFileSync(file, ndjson([...records]));
      const r = await runRecon(['orders', 'import', file], env, RUN_MS);
      expect(r.code, r.stderr).toBe(0);
    }
    const project = await runRecon(['project'], env, RUN_MS);
    expect(project.code, project.stderr).toBe(0);
    const [o] = await db.sql<{ amount: string; versions: number }[]>`
      select amount::text, versions from recon.orders where order_id = 'O-2'`;
    expect(o).toEqual({ amount: '15000', versions: 2 });
  }, 300_000);
});
