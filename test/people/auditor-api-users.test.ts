import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditorApi } from '../../src/http/auditor-api';
import { directoryReader } from '../../src/people/authenticate';
import { addUser, revokeUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { project } from '../discrepancies/fixtures';

/**
 * The auditor API takes users' tokens (every role reads) beside RECON_AUDITOR_TOKEN, which keeps working as a
 * viewer; a revoked token is refused once the server's view of the users is refreshed.
 */

const AUDITOR = 'configured-auditor-token-0123456789';
let db: TestDatabase;
let store: EventStore;
const servers: Server[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // the read models, empty: the API answers from their views
  await project(db.sql, store);
});
afterAll(async () => {
  for (const s of servers) s.close();
  await db.drop();
});

async function serve(token: string | undefined): Promise<string> {
  const api = createAuditorApi({ sql: db.sql, token, directory: directoryReader(store, 0) });
  const server = createServer((req, res) => void api(req, res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const get = (base: string, token?: string) =>
  fetch(`${base}/api/discrepancies?limit=1`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('auditor API and users', () => {
  it('is off while neither an auditor token nor a user exists, and says how to turn it on', async () => {
    const base = await serve(undefined);
    const r = await get(base, 'anything');
    expect(r.status).toBe(503);
    expect(((await r.json()) as { message: string }).message).toContain('recon users add');
  });

  it('lets users of every role read, the auditor token too, and refuses a revoked one', async () => {
    const admin = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
    const viewer = (await addUser(store, admin, { id: 'audit-1', name: 'Auditor One', role: 'viewer' })).token;
    const base = await serve(AUDITOR);
    for (const token of [admin, viewer, AUDITOR]) expect((await get(base, token)).status, token.slice(0, 8)).toBe(200);
    expect((await get(base)).status).toBe(401);
    expect((await get(base, `${viewer}x`)).status).toBe(401);
    await revokeUser(store, admin, 'audit-1', 'engagement ended');
    expect((await get(base, viewer)).status).toBe(401);
    const noAuditorToken = await serve(undefined);
    expect((await get(noAuditorToken, admin)).status).toBe(200);
    expect((await get(noAuditorToken, AUDITOR)).status).toBe(401);
  });
});
