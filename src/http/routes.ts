import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Route } from './http-app';
import { sendJson } from './http-app';
import type { Logger } from '../log';

/**
 * Adapts an asynchronous handler (such as the auditor API) to the shared server's synchronous route
 * contract: the route claims every request under `prefix` and lets the handler answer it.
 */
export function asyncRoute(
  prefix: string,
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>,
  log: Logger,
): Route {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== prefix && !path.startsWith(prefix + '/')) return false;
    handler(req, res)
      .then((handled) => {
        if (!handled) sendJson(res, 404, { error: 'not_found' });
      })
      .catch((e: unknown) => {
        log.error('request failed', { error: e, path });
        sendJson(res, 500, { error: 'internal_error' });
      });
    return true;
  };
}

/** Something that works, but not fully: the worker serves, and someone must look (docs/reliability.md). */
export interface Degradation {
  /** stable, for monitors: `events_quarantined`, `projections_failing` */
  readonly reason: string;
  readonly detail: string;
  readonly projection?: string;
  readonly count?: number;
}

export interface Readiness {
  /** rejects when the worker cannot take webhooks (the store unreachable or refusing appends) */
  ready(): Promise<void>;
  /** what is degraded now (empty: nothing) */
  degraded(): Promise<readonly Degradation[]>;
}

/**
 * GET /readyz of the worker. 503 `unavailable` only when it cannot take webhooks: a load balancer then sends
 * them elsewhere (the PSP delivers again). Degraded (events set aside by a projection, projections failing)
 * is 200 with `status: "degraded"` and the reasons: the worker still takes webhooks and serves, and every
 * worker shares the database, so taking one out of rotation for it would take them all out and lose
 * webhooks. A monitor that sees only status codes asks `/readyz?strict`: 503 when degraded too.
 */
export function readinessRoute(readiness: Readiness, log: Logger): Route {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/readyz') return false;
    const strict = url.searchParams.has('strict');
    readiness
      .ready()
      .then(
        async () => {
          const degraded = await readiness.degraded();
          if (degraded.length === 0) return sendJson(res, 200, { status: 'ready' });
          sendJson(res, strict ? 503 : 200, { status: 'degraded', degraded });
        },
        (e: unknown) => {
          log.warn('not ready', { error: e });
          sendJson(res, 503, { status: 'unavailable' });
        },
      )
      .catch((e: unknown) => {
        log.warn('readiness could not be judged', { error: e });
        sendJson(res, 503, { status: 'unavailable' });
      });
    return true;
  };
}
