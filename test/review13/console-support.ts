import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsole } from '../../src/console/console';
import type { ExceptionPolicy } from '../../src/exceptions/severity';
import { createRejectionLimiter } from '../../src/http/rate-limit';
import { silentLogger } from '../../src/log';
import { directoryReader } from '../../src/people/authenticate';
import type { Sql } from '../../src/db/connect';
import type { EventStore } from '../../src/store/types';

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
