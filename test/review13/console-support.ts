import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsole } from '../../src/console/console';
import type { ExceptionPolicy } from '../../src/exceptions/severity';
import { createRejectionLimiter } from '../../src/http/rate-limit';
import { silentLogger } from '../../src/log';
import { directoryReader } from '../../src/people/authenticate';
import type { Sql } from '../../src/db/connect';
import type { EventStore } from '../../src/store/types';
import { isEvent } from '../../src/events/catalog';
import { ExceptionCommented, exceptionStream } from '../../src/events/exception-events';
import { proposeDecision } from '../../src/exceptions/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs } from '../exceptions/support';

/** The console in this process on a test database (as review6's console-field-twice test mounts it). */
export async function consoleServer(
  sql: Sql,
  store: EventStore,
  opts: { policy?: ExceptionPolicy } = {},
): Promise<{ base: string; close: () => Promise<void> }> {
  const handler = createConsole({
    sql,
    store,
    directory: directoryReader(store, 0),
    auditorToken: undefined,
    timezone: 'UTC',
    outDir: '/nonexistent',
    trust: { trustProxy: false, trustedProxies: [] },
    scheduler: { runNow: async () => undefined, schedules: () => [] } as never,
    log: silentLogger,
    loginLimiter: createRejectionLimiter({ burst: 100, perSecond: 100 }),
    ...(opts.policy ? { policy: opts.policy } : {}),
  });
  const server: Server = createServer((req, res) => {
    void handler(req, res).then(
      (handled) => {
        if (!handled) res.writeHead(404).end();
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Logs a token in; the session cookie and the CSRF token of a page. */
export async function consoleLogin(base: string, token: string, page = '/console/exceptions') {
  const r = await fetch(`${base}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  if (r.status !== 303) throw new Error(`login: ${r.status}`);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  const text = await (await fetch(`${base}${page}`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
  return { cookie, csrf };
}

export const consolePost = (base: string, path: string, cookie: string, body: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
    redirect: 'manual',
  });

/** The hidden fields of a bulk preview's confirm form, as a browser would send them back. */
export const confirmFields = (preview: string): Record<string, string> =>
  Object.fromEntries(
    [...preview.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  );

/** Two legs seeded and projected, a team, the console served: the console tests' common ground. */
export async function consoleFixture(opts: { policy?: ExceptionPolicy } = {}) {
  const db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  const team = await addTeam(store);
  await project(db.sql, store);
  const srv = await consoleServer(db.sql, store, opts);
  return {
    db,
    store,
    team,
    srv,
    async close() {
      await srv.close();
      await store.close();
      await db.drop();
    },
  };
}

/** The hidden fields of an exception page's action form (`act-<action>`), as a browser would send them back. */
export async function actionForm(
  base: string,
  cookie: string,
  id: string,
  action: string,
): Promise<Record<string, string>> {
  const page = await (await fetch(`${base}/console/exceptions/${id}`, { headers: { cookie } })).text();
  const form = new RegExp(`<form[^>]*id="act-${action}">([\\s\\S]*?)</form>`).exec(page)?.[1] ?? '';
  if (form === '') throw new Error(`no ${action} form on the page of ${id}`);
  return confirmFields(form);
}

/**
 * The console fixture with the PSP leg's amount_mismatch accepted (withhold, so no longer open) and the orders
 * leg's order_not_at_psp open: the bulk tests' common ground.
 */
export async function bulkFixture() {
  const f = await consoleFixture();
  const { db, store, team } = f;
  const psp = await idOf(db.sql, 'amount_mismatch');
  const unpaid = await idOf(db.sql, 'order_not_at_psp');
  await proposeDecision({ sql: db.sql, store }, team.analyst, { id: psp, decision: 'withhold', note: 'held' });
  await project(db.sql, store);
  const comments = async (id: string) =>
    (await store.readStream(exceptionStream(id))).filter((e) => isEvent(ExceptionCommented, e)).length;
  return { ...f, psp, unpaid, comments };
}
