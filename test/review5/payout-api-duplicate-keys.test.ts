import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { createPayoutRunsApi } from '../../src/http/payout-runs-api';
import { draftRun } from '../../src/payout-runs/actions';
import { directoryReader } from '../../src/people/authenticate';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID } from '../payout-runs/fixtures';

/**
 * Review 5: an approval over HTTP naming `executionDate` twice with two days was approved for the last one
 * (JSON.parse): the day the bank executes is not guessed. Refused, 400; nothing written.
 */

let db: TestDatabase;
let store: EventStore;
let server: Server;
let base = '';
let token = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const admin = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
  token = (await addUser(store, admin, { id: 'iryna', name: 'Iryna', role: 'approver' })).token;
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  await issue(store, '2026-10', [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: 'RS-SM-A-2026-10-EUR',
      amountDue: '4200',
      held: '0',
      payable: '4200',
      holds: [],
    },
  ]);
  await draftRun(store, person('petro', 'approver'), { month: '2026-10', bank: BANK, env: ENV, paidByBank: NONE_PAID });
  const api = createPayoutRunsApi({ store, directory: directoryReader(store, 0), timezone: 'Europe/Kyiv' });
  server = createServer((req, res) => {
    void api(req, res).then(
      (handled) => {
        if (!handled) res.writeHead(404).end();
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/payout-runs`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await db?.drop();
});

describe('review5: an execution date named twice', () => {
  it('is refused with 400, nothing appended', async () => {
    const before = (await store.readStream(PAYOUT_RUNS_STREAM)).length;
    const r = await fetch(`${base}/PR-2026-10-1/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"executionDate":"2099-12-01","executionDate":"2099-12-02"}',
    });
    expect(r.status).toBe(400);
    expect((await store.readStream(PAYOUT_RUNS_STREAM)).length).toBe(before);
  });
});
