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
 * Review 16: a receiver the directory does not know is stated under the placeholder id `receiver:<name>`, and
 * the statements, the payouts leg and the payout runs know it by that prefix: its money is held whole, never
 * asked, never paid (`not_registered`). The directory took an id of that form (`receiver:acme`, letters, digits
 * and `_ . : -`): the sub-merchant, registered with its payout account, was stated as not registered, its sales
 * of 100.00 held whole and its payout never asked (reference null, payable 0), month after month. The
 * directory now refuses such an id naming the line and column, nothing imported.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-recv-'));
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
const HEADER = 'sub_merchant_id,name,reserve_hold_days,payout_account\n';

describe('review16: the directory refuses the unregistered receivers’ placeholder ids', () => {
  it('refuses receiver:acme naming the line and column', async () => {
    const id = 'receiver:acme';
    const before = await eventCount();
    const file = path.join(dir, 'directory-placeholder.csv');
    writeFileSync(
      file,
      `${HEADER}sm-ok,Good Shop,0,DE89370400440532013000\n${id},Acme Shop,0,DE89370400440532013000\n`,
    );
    const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
    expect(r.stderr).toContain(`${file}:3 (column sub_merchant_id)`);
    expect(r.stderr).toMatch(/receiver:/);
    expect(r.code, r.stderr).toBe(65);
    expect(await eventCount()).toBe(before);
  }, 180_000);

  it('takes ids with a colon elsewhere, or another case', async () => {
    const file = path.join(dir, 'directory-ok.csv');
    writeFileSync(
      file,
      `${HEADER}shop:acme,Acme Shop,0,DE89370400440532013000\nRECEIVER:beta,Beta Shop,0,DE89370400440532013000\n`,
    );
    const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
  }, 180_000);
});
