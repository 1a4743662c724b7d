import { answerText, bearerToken } from './http-app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sql } from '../db/connect';
import { checkText, plausibleDay, REFERENCE_TEXT } from '../input-rules';
import type { Directory } from '../people/directory';
import { personOfToken } from '../people/authenticate';
import { may } from '../people/roles';
import { MAX_LIMIT, discrepancyJson, operationsOf, pageOfDiscrepancies } from '../reconciliation/discrepancy-queries';

/**
 * The auditors' read-only HTTP API, mounted by `recon start` beside the webhook receiver:
 *   GET /api/discrepancies?from=&to=&type=&status=&sub_merchant=&payment=&limit=&offset=   (the CLI's filters, paged)
 *   GET /api/operations/:paymentId   (no parameters)
 * Every request needs `Authorization: Bearer <token>`: a user's token (`recon users add`, any role reads) or
 * RECON_AUDITOR_TOKEN, which acts as a viewer (compared in constant time).
 * 401 without or with a wrong token, 403 for any method but GET/HEAD, 400 for a bad filter value, an unknown
 * parameter or a repeated one; errors as JSON `{ error, message }`.
 */

export type AuditorApiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const PREFIXES = ['/api/discrepancies', '/api/operations'];

/**
 * The parameters of GET /api/discrepancies (`sub-merchant` is the CLI's spelling of `sub_merchant`). Any other
 * is refused: ignored, a misspelt filter (`payment_id=`) returned every discrepancy as if it had matched.
 */
const DISCREPANCY_PARAMETERS = [
  'from',
  'to',
  'type',
  'status',
  'sub_merchant',
  'sub-merchant',
  'payment',
  'limit',
  'offset',
] as const;

/** Why the query's parameters are not acceptable (unknown or repeated), or null. */
function parameterProblem(q: URLSearchParams, allowed: readonly string[], where: string): string | null {
  const counts = new Map<string, number>();
  for (const k of q.keys()) counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const [k, n] of counts) {
    if (!allowed.includes(k)) {
      return `unknown parameter ${JSON.stringify(k)}: ${allowed.length ? `${where} takes ${allowed.join(', ')}` : `${where} takes no parameters`}`;
    }
    if (n > 1) return `${k}: given ${n} times; give each parameter at most once`;
  }
  if (counts.has('sub_merchant') && counts.has('sub-merchant'))
    return 'sub_merchant: given twice (as sub_merchant and sub-merchant); give it once';
  return null;
}

/** The parameters that are days; the others are texts (ids, names). */
const DAY_PARAMETERS = ['from', 'to'];

/**
 * Each value as the door's rules take it (src/input-rules.ts), before any query: a day within the plausible
 * range (`from=0000-01-01` made PostgreSQL fail, a 500), a text without NUL, lone surrogates, control characters
 * or bidirectional overrides, at most 256 characters (a NUL reached PostgreSQL, a 500). Null when all are fine.
 */
export function valueProblem(q: URLSearchParams): string | null {
  for (const [k, v] of q) {
    const r = DAY_PARAMETERS.includes(k) ? plausibleDay(v) : checkText(v, REFERENCE_TEXT);
    if (!r.ok) return `${k}: ${r.reason}`;
  }
  return null;
}

/** A path segment decoded and checked as a text (an id); the problem in words otherwise. */
export function pathId(segment: string, what: string): { ok: true; value: string } | { ok: false; message: string } {
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    return { ok: false, message: `the ${what} is not valid percent-encoding` };
  }
  const r = checkText(text, REFERENCE_TEXT);
  return r.ok ? { ok: true, value: r.value } : { ok: false, message: `the ${what}: ${r.reason}` };
}

/** A whole number parameter as text: digits only, else NaN (which the filter check refuses, naming it). */
const wholeNumber = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : Number.NaN;

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  head = false,
  extra: Record<string, string> = {},
): void {
  const text = answerText(status, body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(head ? undefined : text);
}

export interface AuditorApiDeps {
  readonly sql: Sql;
  /** RECON_AUDITOR_TOKEN: a viewer's token configured before users existed */
  readonly token: string | undefined;
  /** the users (src/people); absent: only RECON_AUDITOR_TOKEN is accepted */
  readonly directory?: () => Promise<Directory>;
  readonly timezone?: string;
}

const NO_USERS: Directory = { users: new Map(), revision: -1 };

/** The users as the server last read them; null when the store cannot be read (a 503, not a 500). */
async function usersOrNull(deps: AuditorApiDeps): Promise<Directory | null> {
  if (!deps.directory) return NO_USERS;
  try {
    return await deps.directory();
  } catch {
    return null;
  }
}

export function createAuditorApi(deps: AuditorApiDeps): AuditorApiHandler {
  const timezone = deps.timezone ?? 'UTC';
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (!PREFIXES.some((p) => path === p || path.startsWith(p + '/'))) return false;
    const head = req.method === 'HEAD';
    try {
      const dir = await usersOrNull(deps);
      if (!dir) {
        send(res, 503, { error: 'unavailable', message: 'the users cannot be read now; try again' }, head);
        return true;
      }
      if (!deps.token && dir.users.size === 0) {
        send(
          res,
          503,
          {
            error: 'auditor_api_disabled',
            message: 'set RECON_AUDITOR_TOKEN or add a user (recon users add) to enable the auditor API',
          },
          head,
        );
        return true;
      }
      const person = personOfToken(dir, bearerToken(req), deps.token);
      if (!person || !may(person.role, 'read')) {
        send(res, 401, { error: 'unauthorized', message: 'a valid bearer token is required' }, head, {
          'www-authenticate': 'Bearer realm="recon-auditor"',
        });
        return true;
      }
      if (req.method !== 'GET' && !head) {
        send(
          res,
          403,
          { error: 'read_only', message: 'the auditor API is read-only: only GET and HEAD are allowed' },
          false,
          { allow: 'GET, HEAD' },
        );
        return true;
      }
      if (path === '/api/discrepancies') await serveDiscrepancies(deps.sql, timezone, url, res, head);
      else await serveOperations(deps.sql, url, res, head);
      return true;
    } catch (e) {
      if (!res.headersSent)
        send(res, 500, { error: 'internal', message: 'the request failed; see the server log' }, head);
      else res.destroy(e as Error);
      return true;
    }
  };
}

/** GET /api/discrepancies: the filters checked, then one page of rows with the link to the next. */
async function serveDiscrepancies(sql: Sql, timezone: string, url: URL, res: ServerResponse, head: boolean) {
  const q = url.searchParams;
  const problem = parameterProblem(q, DISCREPANCY_PARAMETERS, 'GET /api/discrepancies') ?? valueProblem(q);
  if (problem) {
    send(res, 400, { error: 'invalid_filter', message: problem }, head);
    return;
  }
  const opt = (k: string) => q.get(k) ?? undefined;
  // a page of at most MAX_LIMIT rows, also when no limit is given: one request never reads the whole view
  const limit = wholeNumber(opt('limit')) ?? MAX_LIMIT;
  const offset = wholeNumber(opt('offset')) ?? 0;
  const r = await pageOfDiscrepancies(sql, {
    from: opt('from'),
    to: opt('to'),
    type: opt('type'),
    status: opt('status'),
    subMerchantId: opt('sub_merchant') ?? opt('sub-merchant'),
    paymentId: opt('payment'),
    timezone,
    limit,
    offset,
  });
  if (!r.ok) {
    send(res, r.code === 'INVALID_FILTER' ? 400 : 503, { error: r.code.toLowerCase(), message: r.message }, head);
    return;
  }
  // rows follow this page: the link to the next one (the same query, offset past this page)
  const next = new URLSearchParams(q);
  next.set('offset', String(offset + r.value.rows.length));
  send(
    res,
    200,
    r.value.rows.map(discrepancyJson),
    head,
    r.value.more ? { link: `<${url.pathname}?${next.toString()}>; rel="next"` } : {},
  );
}

/** GET /api/operations/:paymentId (any other path under /api is 404). */
async function serveOperations(sql: Sql, url: URL, res: ServerResponse, head: boolean) {
  const path = url.pathname;
  const m = /^\/api\/operations\/([^/]+)$/.exec(path);
  if (!m) {
    send(res, 404, { error: 'not_found', message: `no such resource: ${path}` }, head);
    return;
  }
  const problem = parameterProblem(url.searchParams, [], 'GET /api/operations/:paymentId');
  if (problem) {
    send(res, 400, { error: 'invalid_filter', message: problem }, head);
    return;
  }
  const id = pathId(m[1]!, 'payment id');
  if (!id.ok) {
    send(res, 400, { error: 'invalid_path', message: id.message }, head);
    return;
  }
  const paymentId = id.value;
  const r = await operationsOf(sql, { paymentId });
  if (!r.ok) send(res, 503, { error: r.code.toLowerCase(), message: r.message }, head);
  else if (r.value.operations.length === 0)
    send(res, 404, { error: 'not_found', message: `no operations of payment ${paymentId}` }, head);
  else send(res, 200, { payment_id: paymentId, ...r.value }, head);
}
