import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectMetrics, type MetricsDeps, metricsText } from '../alerts/metrics';
import type { Logger } from '../log';
import { tokenMatches } from '../people/tokens';
import { sendJson, type Route } from './http-app';

/**
 * GET /metrics, the Prometheus scrape (docs/exceptions.md, "Metrics"). With RECON_METRICS_TOKEN set, every
 * request must carry `Authorization: Bearer <token>`; unset, only a peer on the loopback address is answered
 * (a scraper or sidecar on the same host), since the figures say how much money is in doubt.
 */

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function allowed(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return LOOPBACK.test(req.socket.remoteAddress ?? '');
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  return tokenMatches(m?.[1], token);
}

export function metricsRoute(deps: MetricsDeps & { readonly token: string | undefined; readonly log: Logger }): Route {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/metrics') return false;
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'GET' });
      return true;
    }
    if (!allowed(req, deps.token)) {
      sendJson(
        res,
        deps.token === undefined ? 403 : 401,
        { error: deps.token === undefined ? 'forbidden' : 'unauthorized' },
        deps.token === undefined ? {} : { 'www-authenticate': 'Bearer' },
      );
      return true;
    }
    collectMetrics(deps)
      .then(metricsText)
      .then(({ contentType, text }) => {
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
        res.end(text);
      })
      .catch((e: unknown) => {
        deps.log.error('metrics could not be read', { error: e });
        sendJson(res, 500, { error: 'internal_error' });
      });
    return true;
  };
}
