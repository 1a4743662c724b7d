import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { maskCardNumbersInJson } from '../ingest/card-numbers';
import type { Logger } from '../log';

/**
 * One `node:http` server shared by modules: each module offers a route function that answers the
 * requests it recognises (returning true) and leaves the others (false). The webhook receiver and the
 * auditor API can so be mounted on the same port by `recon start`.
 */
export type Route = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface HttpApp {
  readonly server: Server;
  listen(port: number, host?: string): Promise<{ port: number; url: string }>;
  /** Stops accepting connections and resolves once the requests in flight have been answered. */
  close(opts?: { graceMs?: number }): Promise<void>;
  /** Requests being answered now. */
  inFlight(): number;
}

/** The token of an `Authorization: Bearer <token>` header, the one form every recon API takes. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  return typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h)?.[1] : undefined;
}

/**
 * An answer's JSON text (bigints as their digits). A refusal (4xx, 5xx) quotes what it refused, and what it refused
 * may hold a card number (`unknown method "4111…"`): its strings are masked as the log and the store mask them,
 * so that a card number sent to recon by mistake is never sent back (README, "Secrets and card data").
 */
export function answerText(status: number, body: unknown): string {
  const text = JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  return status >= 400 ? maskCardNumbersInJson(text) : text;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = answerText(status, body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function createHttpApp(opts: { routes: readonly Route[]; log: Logger; keepAliveTimeoutMs?: number }): HttpApp {
  let active = 0;
  let closing = false;
  const drained: Array<() => void> = [];
  const server = createServer((req, res) => {
    active++;
    res.on('close', () => {
      active--;
      if (active === 0) for (const f of drained.splice(0)) f();
    });
    // While shutting down, ask keep-alive clients to reconnect elsewhere.
    if (closing) res.setHeader('connection', 'close');
    try {
      for (const route of opts.routes) if (route(req, res)) return;
      sendJson(res, 404, { error: 'not_found' });
    } catch (e) {
      opts.log.error('request failed', { error: e, path: req.url });
      sendJson(res, 500, { error: 'internal_error' });
    }
  });
  server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  return {
    server,
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve({ port: a.port, url: `http://${h}:${a.port}` });
        });
      });
    },
    async close(closeOpts = {}) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const finished = active === 0 ? Promise.resolve() : new Promise<void>((resolve) => drained.push(resolve));
      const grace = closeOpts.graceMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), grace);
      });
      const outcome = await Promise.race([finished.then(() => 'done' as const), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') opts.log.warn('shutdown grace elapsed with requests in flight', { inFlight: active });
      // Answered responses may leave keep-alive sockets: close them now.
      server.closeAllConnections();
      await closed;
    },
    inFlight: () => active,
  };
}
