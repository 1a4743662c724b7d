import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createExceptionsApi } from '../../src/http/exceptions-api';
import { directoryReader } from '../../src/people/authenticate';
import { createPostgresEventStore } from '../../src/store/postgres';
import { addTeam, idOf, project, seedTwoLegs } from '../exceptions/support';
import { createTestDatabase } from '../support/db';

/** Two legs seeded and projected, a team, GET /api/exceptions served: the API tests' common ground. */
export async function apiFixture() {
  const db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  const team = await addTeam(store);
  await project(db.sql, store);
  const psp = await idOf(db.sql, 'amount_mismatch');
  const api = createExceptionsApi({
    sql: db.sql,
    store,
    directory: directoryReader(store, 0),
    policy: exceptionPolicyOf({}).policy,
  });
  const server: Server = createServer((req, res) => {
    void api(req, res).then(
      (handled) => void (handled || res.writeHead(404).end()),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/exceptions`;
  const get = async (query: string) => {
    const r = await fetch(`${base}${query}`, { headers: { authorization: `Bearer ${team.analyst.token}` } });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return {
    db,
    store,
    team,
    psp,
    base,
    get,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      await db.drop();
    },
  };
}
