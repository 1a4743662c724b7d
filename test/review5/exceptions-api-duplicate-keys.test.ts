import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createExceptionsApi } from '../../src/http/exceptions-api';
import { directoryReader } from '../../src/people/authenticate';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 5: a decision over HTTP whose body names `decision` twice (`{"decision":"withhold",…,"decision":"pay"}`)
 * was taken as the last one (JSON.parse): money proposed withheld was released. Which one the sender meant
 * cannot be known: refused, 400 naming the body; nothing written. The PSP's and the orders' JSON doors already
 * refused such keys (parseJsonExact).
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let server: Server;
let base: string;
let orphan: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  orphan = await idOf(db.sql, 'payment_without_order');
  const api = createExceptionsApi({
    sql: db.sql,
    store,
    directory: directoryReader(store, 0),
    policy: exceptionPolicyOf({ writeOff: { approvalAbove: 5000n } }).policy,
  });
  server = createServer((req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/exceptions`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await store?.close();
  await db?.drop();
});

const raw = (token: string, path: string, body: string) =>
  fetch(`${base}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });

describe('review5: a decision named twice in one body', () => {
  it('is refused (400, the body named), nothing written; the same body with one decision is taken', async () => {
    const before = (await store.readStream(`exception-${orphan}`)).length;
    const twice = await raw(
      team.analyst.token,
      `${orphan}/accept`,
      '{"decision":"withhold","note":"keep it held","decision":"pay"}',
    );
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({ field: 'body' });
    expect((await store.readStream(`exception-${orphan}`)).length).toBe(before);
    const once = await raw(team.analyst.token, `${orphan}/accept`, '{"decision":"withhold","note":"keep it held"}');
    expect(once.status).toBe(200);
    await project(db.sql, store);
    const one = (await (
      await fetch(`${base}/${orphan}`, {
        headers: { authorization: `Bearer ${team.analyst.token}` },
      })
    ).json()) as { state: string };
    expect(one.state).toBe('accepted');
  });
});
