import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../../src/console/console';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { createRejectionLimiter } from '../../src/http/rate-limit';
import { silentLogger } from '../../src/log';
import { directoryReader } from '../../src/people/authenticate';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: a console form naming a field twice (`decision=pay&decision=withhold`) was acted on with the first
 * value, the second silently dropped: the money's fate was whichever the browser (or a crafted page) put
 * first. The HTTP APIs refuse a parameter given twice; the console now does too: 400 naming the field,
 * nothing written.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let server: Server;
let base = '';
let psp = ''; // amount_mismatch: holds money, needs pay, withhold or write_off

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  const handler = createConsole({
    sql: db.sql,
    store,
    directory: directoryReader(store, 0),
    auditorToken: undefined,
    timezone: 'UTC',
    outDir: '/nonexistent',
    trust: { trustProxy: false, trustedProxies: [] },
    scheduler: { runNow: async () => undefined, schedules: () => [] } as never,
    log: silentLogger,
    loginLimiter: createRejectionLimiter({ burst: 100, perSecond: 100 }),
  });
  server = createServer((req, res) => {
    void handler(req, res).then(
      (handled) => {
        if (!handled) res.writeHead(404).end();
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await store?.close();
  await db?.drop();
});

async function login(token: string): Promise<{ cookie: string; csrf: string }> {
  const r = await fetch(`${base}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  expect(r.status).toBe(303);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await (await fetch(`${base}/console/exceptions/${psp}`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return { cookie, csrf };
}

const post = (path: string, cookie: string, body: string) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });

const written = async () =>
  (await store.readStream(exceptionStream(psp))).length + (await store.readStream(discrepancyStream(psp))).length;

describe('review6: a console form field given twice', () => {
  it('a decision named twice (pay, then withhold) is refused naming the field, nothing written', async () => {
    const { cookie, csrf } = await login(team.approver.token);
    const before = await written();
    const body = `_csrf=${encodeURIComponent(csrf)}&decision=pay&decision=withhold&note=checked`;
    const r = await post(`/console/exceptions/${psp}/accept`, cookie, body);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('decision');
    expect(await written()).toBe(before);
  });

  it('a payout run month named twice is refused naming the field, no run drafted', async () => {
    const { cookie, csrf } = await login(team.approver.token);
    const before = (await store.readStream(PAYOUT_RUNS_STREAM)).length;
    const body = `_csrf=${encodeURIComponent(csrf)}&month=2024-03&month=2024-02`;
    const r = await post('/console/payout-runs/draft', cookie, body);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('month');
    expect((await store.readStream(PAYOUT_RUNS_STREAM)).length).toBe(before);
  });

  it('the same form with each field once is acted on', async () => {
    const { cookie, csrf } = await login(team.approver.token);
    const body = `_csrf=${encodeURIComponent(csrf)}&decision=withhold&note=checked`;
    const r = await post(`/console/exceptions/${psp}/accept`, cookie, body);
    expect(r.status).toBe(303);
    expect(await written()).toBeGreaterThan(0);
  });
});
