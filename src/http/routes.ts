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
