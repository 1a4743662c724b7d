import { answerText, bearerToken } from './http-app';
import { bodyText } from '../request-body';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sql } from '../db/connect';
import {
  ACTION_REQUESTS,
  type ActionName,
  type ActionRequest,
  actOnException,
  type MoneySeen,
} from '../exceptions/actions';
import type { ExceptionDeps } from '../exceptions/context';
import { ExceptionRefused } from '../exceptions/errors';
import {
  type ExceptionFilter,
  exceptionHistory,
  exceptionJson,
  getException,
  listExceptions,
} from '../exceptions/queries';
import type { ExceptionPolicy } from '../exceptions/severity';
import { checkText, REFERENCE_TEXT } from '../input-rules';
import { personOfToken } from '../people/authenticate';
import type { Directory, Person } from '../people/directory';
import { NotAllowed } from '../people/errors';
import { isPlainObject, parseJsonExact } from '../psp/json';
import { may } from '../people/roles';
import type { EventStore } from '../store/types';

/**
 * The exceptions over HTTP (docs/exceptions.md), mounted under /api/exceptions by `recon start`:
 *   GET  /api/exceptions?leg=&type=&state=&assignee=&severity=&sub_merchant=&currency=&min_amount=&min_age=&limit=&after=
 *   GET  /api/exceptions/:id            one exception
 *   GET  /api/exceptions/:id/history    who, what, when, why, in order
 *   POST /api/exceptions/:id/<action>   assign {assignee, due?, note?} · comment {text} · resolve {reason_code, note}
 *                                       · accept {decision?, note, amount_in_doubt?, currency?} · approve {note, proposal?}
 *                                       · reject {note, proposal?} · reopen {reason, acceptance?}
 * `Authorization: Bearer <a user's token>`; the person acting is the token's owner, whose role is checked here
 * on the server (the CLI's checks, src/exceptions/actions.ts). 401 no or unknown token, 403 a role that may
 * not (naming the action), 400 naming the field, 404 no such discrepancy, 409 the state does not allow it.
 */

export interface ExceptionsApiDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly directory: () => Promise<Directory>;
  readonly policy: ExceptionPolicy;
  readonly auditorToken?: string | undefined;
  readonly now?: () => Date;
}

const PREFIX = '/api/exceptions';
const MAX_BODY = 65_536;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = answerText(status, body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

const STATUS_OF = { INVALID: 400, NOT_FOUND: 404, CONFLICT: 409, FORBIDDEN: 403 } as const;

/** A refusal as its HTTP answer; anything else is the route's 500. */
function refusal(res: ServerResponse, e: unknown): void {
  if (e instanceof NotAllowed)
    send(res, e.code === 'FORBIDDEN' ? 403 : 401, { error: 'forbidden', message: e.message });
  else if (e instanceof ExceptionRefused)
    send(res, STATUS_OF[e.code], { error: e.code.toLowerCase(), field: e.field, message: e.message });
  else throw e;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const read = await bodyText(req, MAX_BODY);
  if (!read.ok)
    throw new ExceptionRefused(
      'INVALID',
      'body',
      read.problem === 'too_large' ? `body: at most ${MAX_BODY} bytes` : 'body: not UTF-8 text',
    );
  if (read.text === '') return {};
  // exact JSON: a key given twice with other values ("decision" withhold, then pay) is refused, not the last taken
  const parsed = parseJsonExact(read.text);
  if (!parsed.ok) throw new ExceptionRefused('INVALID', 'body', `body: expected a JSON object (${parsed.reason})`);
  if (!isPlainObject(parsed.value)) throw new ExceptionRefused('INVALID', 'body', 'body: expected a JSON object');
  return parsed.value;
}

/** A JSON field that must be a string when given. */
function field(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw new ExceptionRefused('INVALID', name, `${name}: required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ExceptionRefused('INVALID', name, `${name}: expected a string`);
  return v;
}

/** The money the client read (`amount_in_doubt`, `currency` as the exception's JSON gave them), when sent. */
function seenOf(b: Record<string, unknown>): { seen?: MoneySeen } {
  if (!('amount_in_doubt' in b)) return {};
  return {
    seen: {
      amountInDoubt: field(b, 'amount_in_doubt', false) ?? null,
      currency: field(b, 'currency', false) ?? null,
    },
  };
}

function requestOf(action: ActionName, id: string, b: Record<string, unknown>): ActionRequest {
  const opt = (name: string, key: string) => {
    const v = field(b, name, false);
    return v === undefined ? {} : { [key]: v };
  };
  switch (action) {
    case 'assign':
      return { action, id, assignee: field(b, 'assignee', true)!, ...opt('due', 'dueAt'), ...opt('note', 'note') };
    case 'comment':
      return { action, id, text: field(b, 'text', true)! };
    case 'resolve':
      return {
        action,
        id,
        reasonCode: field(b, 'reason_code', true)!,
        note: field(b, 'note', true)!,
        ...seenOf(b),
      };
    case 'accept':
      return { action, id, note: field(b, 'note', true)!, ...opt('decision', 'decision'), ...seenOf(b) };
    case 'reopen':
      return {
        action,
        id,
        reason: field(b, 'reason', true)!,
        ...('acceptance' in b ? { acceptance: field(b, 'acceptance', false) ?? null } : {}),
      };
    default:
      return { action, id, note: field(b, 'note', true)!, ...opt('proposal', 'proposal') };
  }
}

const FILTER_PARAMS = [
  'leg',
  'type',
  'state',
  'assignee',
  'severity',
  'sub_merchant',
  'currency',
  'min_amount',
  'min_age',
  'limit',
  'after',
];

function filterOf(q: URLSearchParams): ExceptionFilter {
  for (const [k, v] of q) {
    if (!FILTER_PARAMS.includes(k))
      throw new ExceptionRefused('INVALID', k, `${k}: unknown parameter; takes ${FILTER_PARAMS.join(', ')}`);
    if (q.getAll(k).length > 1) throw new ExceptionRefused('INVALID', k, `${k}: give it once`);
    const t = checkText(v, REFERENCE_TEXT);
    if (!t.ok) throw new ExceptionRefused('INVALID', k, `${k}: ${t.reason}`);
  }
  const whole = (name: string) => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^\d{1,18}$/.test(v)) throw new ExceptionRefused('INVALID', name, `${name}: expected a whole number`);
    return v;
  };
  const g = (name: string) => q.get(name) ?? undefined;
  const minAmount = whole('min_amount');
  const minAge = whole('min_age');
  // refused here, naming the API's parameter (the list's own check names the CLI's --min-age)
  if (minAge !== undefined && !Number.isSafeInteger(Number(minAge)))
    throw new ExceptionRefused(
      'INVALID',
      'min_age',
      `min_age: expected whole hours, at most ${Number.MAX_SAFE_INTEGER}`,
    );
  const limit = whole('limit');
  return {
    leg: g('leg'),
    type: g('type'),
    state: g('state'),
    assignee: g('assignee'),
    severity: g('severity'),
    subMerchantId: g('sub_merchant'),
    currency: g('currency'),
    minAmount: minAmount === undefined ? undefined : BigInt(minAmount),
    minAgeHours: minAge === undefined ? undefined : Number(minAge),
    limit: limit === undefined ? 100 : Number(limit),
    after: g('after'),
  };
}

async function read(deps: ExceptionsApiDeps, res: ServerResponse, url: URL, parts: string[]): Promise<void> {
  const now = deps.now?.() ?? new Date();
  if (parts.length === 0) {
    const page = await listExceptions(deps.sql, filterOf(url.searchParams), now, deps.policy);
    return send(res, 200, { items: page.items.map(exceptionJson), next: page.next });
  }
  const x = await getException(deps.sql, parts[0]!, now, deps.policy);
  if (x === null) throw new ExceptionRefused('NOT_FOUND', 'id', `no discrepancy with id ${parts[0]!.slice(0, 80)}`);
  if (parts.length === 1) return send(res, 200, exceptionJson(x));
  if (parts.length === 2 && parts[1] === 'history')
    return send(res, 200, { id: x.id, history: await exceptionHistory(deps.sql, x.id) });
  send(res, 404, { error: 'not_found' });
}

async function write(
  deps: ExceptionsApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  actor: Person,
  parts: string[],
) {
  const action = parts[1] as ActionName;
  if (parts.length !== 2 || !ACTION_REQUESTS.includes(action))
    return send(res, 404, { error: 'not_found', message: `POST ${PREFIX}/:id/<${ACTION_REQUESTS.join('|')}>` });
  const exceptionDeps: ExceptionDeps = {
    sql: deps.sql,
    store: deps.store,
    policy: deps.policy,
    ...(deps.now ? { now: deps.now } : {}),
  };
  const r = await actOnException(exceptionDeps, actor, requestOf(action, parts[0]!, await bodyOf(req)));
  send(res, 200, r);
}

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // not an id then: answered 404
  }
};

/** The handler for `asyncRoute(PREFIX, …)`: true when it answered. */
export function createExceptionsApi(deps: ExceptionsApiDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== PREFIX && !url.pathname.startsWith(`${PREFIX}/`)) return false;
    const actor = personOfToken(await deps.directory(), bearerToken(req), deps.auditorToken);
    if (actor === null) {
      send(res, 401, { error: 'unauthorized', message: 'Authorization: Bearer <a user token> required' });
      return true;
    }
    const parts = url.pathname.slice(PREFIX.length).split('/').filter(Boolean).map(decoded);
    try {
      if (req.method === 'GET') {
        if (!may(actor.role, 'read')) throw new NotAllowed('FORBIDDEN', `${actor.id} may not read`);
        await read(deps, res, url, parts);
      } else if (req.method === 'POST') await write(deps, req, res, actor, parts);
      else send(res, 405, { error: 'method_not_allowed', message: 'GET or POST' });
    } catch (e) {
      refusal(res, e);
    }
    return true;
  };
}
