import { answerText, bearerToken } from './http-app';
import { bodyText } from '../request-body';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventStore, NewEvent } from '../store/types';
import type { Keyed } from '../ingest/observations';
import { OrderConflictError, appendOrderBatch } from '../ingest/orders/import';
import { orderInput } from '../ingest/orders/input';
import { isPlainObject, parseJsonExact } from '../psp/json';
import { tokenMatches } from '../people/tokens';
import { pathId } from './auditor-api';
import type { Sql } from '../db/connect';
import { orderDetail } from '../reconciliation/orders/queries';

/**
 * POST /api/orders: the marketplace sends its orders (one object, or a batch as a JSON array), in the
 * fields of docs/orders.md. `Authorization: Bearer <RECON_ORDERS_TOKEN>`, a write token of its own, never
 * the auditor's read-only one. A batch is all or nothing: any bad order is a 400 naming its index and
 * field and nothing is written; a version already recorded with other values is a 409. Re-sending is safe
 * (the same versions are duplicates): 200 with how many were new.
 */

export const MAX_ORDERS_BODY_BYTES = 4 * 1024 * 1024;
export const MAX_ORDERS_PER_REQUEST = 5000;

export type OrdersApiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = answerText(status, body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...extra,
  });
  res.end(text);
}

/**
 * GET /api/orders/:orderId, for auditors (their read-only token): the order as it stands beside the PSP
 * payments carrying its id and its discrepancies (src/reconciliation/orders/queries.ts).
 */
async function readOrder(req: IncomingMessage, res: ServerResponse, sql: Sql, token: string | undefined, id: string) {
  if (!token) {
    send(res, 503, { error: 'auditor_api_disabled', message: 'set RECON_AUDITOR_TOKEN to enable the auditor API' });
    return;
  }
  if (!tokenMatches(bearerToken(req), token)) {
    send(
      res,
      401,
      { error: 'unauthorized', message: 'a valid bearer token is required' },
      { 'www-authenticate': 'Bearer realm="recon-auditor"' },
    );
    return;
  }
  if (req.method !== 'GET') {
    send(
      res,
      403,
      { error: 'read_only', message: 'the auditor API is read-only: only GET is allowed' },
      { allow: 'GET' },
    );
    return;
  }
  const checked = pathId(id, 'order id');
  if (!checked.ok) {
    send(res, 400, { error: 'invalid_path', message: checked.message });
    return;
  }
  const orderId = checked.value;
  const d = await orderDetail(sql, orderId);
  if (!d) send(res, 404, { error: 'not_found', message: `no order ${orderId}` });
  else send(res, 200, d);
}

export function createOrdersApi(deps: {
  store: EventStore;
  token: string | undefined;
  now?: () => Date;
  /** for GET /api/orders/:orderId (auditors) */
  sql?: Sql;
  auditorToken?: string | undefined;
}): OrdersApiHandler {
  return async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const one = /^\/api\/orders\/([^/]+)$/.exec(path);
    if (one && deps.sql) {
      await readOrder(req, res, deps.sql, deps.auditorToken, one[1]!);
      return true;
    }
    if (path !== '/api/orders') return false;
    if (!deps.token) {
      send(res, 503, { error: 'orders_api_disabled', message: 'set RECON_ORDERS_TOKEN to enable POST /api/orders' });
      return true;
    }
    if (!tokenMatches(bearerToken(req), deps.token)) {
      send(
        res,
        401,
        { error: 'unauthorized', message: 'a valid bearer token is required' },
        { 'www-authenticate': 'Bearer realm="recon-orders"' },
      );
      return true;
    }
    if (req.method !== 'POST') {
      send(res, 405, { error: 'method_not_allowed', message: 'only POST is allowed' }, { allow: 'POST' });
      return true;
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      send(res, 415, { error: 'unsupported_media_type', message: 'send Content-Type: application/json' });
      return true;
    }
    const read = await bodyText(req, MAX_ORDERS_BODY_BYTES);
    if (!read.ok) {
      if (read.problem === 'too_large')
        send(res, 413, {
          error: 'too_large',
          message: `the body is larger than ${MAX_ORDERS_BODY_BYTES} bytes: send smaller batches`,
        });
      else send(res, 400, { error: 'invalid_json', message: 'the body is not UTF-8 text' });
      return true;
    }
    const text = read.text;
    const parsed = parseJsonExact(text);
    if (!parsed.ok) {
      send(res, 400, { error: 'invalid_json', message: parsed.reason });
      return true;
    }
    const batch = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    if (batch.length === 0 || batch.length > MAX_ORDERS_PER_REQUEST) {
      send(res, 400, { error: 'invalid_batch', message: `send 1 to ${MAX_ORDERS_PER_REQUEST} orders per request` });
      return true;
    }
    const items: { item: Keyed; line: number }[] = [];
    const submittedAt = (deps.now?.() ?? new Date()).toISOString();
    for (const [index, record] of batch.entries()) {
      const at = Array.isArray(parsed.value) ? `[${index}].` : '';
      if (!isPlainObject(record)) {
        send(res, 400, {
          error: 'invalid_order',
          index,
          field: null,
          message: `${at || 'the body'} is not a JSON object`,
        });
        return true;
      }
      const v = orderInput(record, deps.now ? { now: deps.now() } : {});
      if (!v.ok) {
        send(res, 400, {
          error: 'invalid_order',
          index,
          field: `${at}${v.field}`,
          message: `${at}${v.field}: ${v.message}`,
        });
        return true;
      }
      const event: NewEvent = { ...v.item.event, metadata: { source: 'orders-api', index, submittedAt } };
      items.push({ item: { stream: v.item.stream, event }, line: index });
    }
    try {
      const r = await appendOrderBatch(deps.store, items, 'request');
      send(res, 200, { received: items.length, appended: r.appended, duplicates: r.duplicates });
    } catch (e) {
      if (!(e instanceof OrderConflictError)) throw e;
      send(res, 409, {
        error: 'order_version_conflict',
        index: e.issue.line,
        field: null,
        message: `[${e.issue.line}]: ${e.issue.message}`,
      });
    }
    return true;
  };
}
