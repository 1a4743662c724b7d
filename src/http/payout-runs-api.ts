import { answerText, bearerToken } from './http-app';
import { bodyText } from '../request-body';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BankConfig, executionHolidays } from '../config/bank';
import { isReconError } from '../errors';
import { PayoutRunRefused } from '../payout-runs/errors';
import { approveRun, type LiveReadings, listRuns, paymentFile, showRun } from '../payout-runs/actions';
import type { BankPaid } from '../payout-runs/plan';
import { runJson } from '../payout-runs/runs';
import type { ResolvedNow } from '../payout-runs/resolved';
import { personOfToken } from '../people/authenticate';
import type { Directory, Person } from '../people/directory';
import { NotAllowed } from '../people/errors';
import { isPlainObject, parseJsonExact } from '../psp/json';
import type { EventStore } from '../store/types';

/**
 * Payout runs over HTTP (docs/exceptions.md, "Payout runs"), mounted under /api/payout-runs by the worker:
 *   GET  /api/payout-runs                 every run, newest first (any role that reads)
 *   GET  /api/payout-runs/:id             one run
 *   POST /api/payout-runs/:id/approve     approve a draft (an approver who did not draft it); body, optional:
 *                                         {"executionDate":"YYYY-MM-DD"}
 *   GET  /api/payout-runs/:id/file        the approved run's pain.001.001.09 file (analyst, approver)
 * `Authorization: Bearer <a user's token>` (RECON_AUDITOR_TOKEN acts as a viewer). Roles are checked here, on
 * the server: 401 without a known token, 403 for a role that may not, 409 for a run in the wrong state,
 * maker-checker, or another person's action landing first, 400 for a bad id or body, 404 for no such run.
 */

export interface PayoutRunsApiDeps {
  readonly store: EventStore;
  readonly directory: () => Promise<Directory>;
  readonly auditorToken?: string | undefined;
  readonly timezone: string;
  readonly now?: () => Date;
  /** RECON_CONFIG's bank section: the payouts bank's holidays, on which no run is executed */
  readonly bank?: BankConfig;
  /** the reconciliation's resolved discrepancies (payout-runs/resolved.ts), for the checks before approval */
  readonly resolvedNow?: ResolvedNow;
  /** what the bank's debits paid on each reference now (bank-paid.ts; the worker keeps the read models live) */
  readonly paidByBank?: () => Promise<BankPaid>;
}

const MAX_BODY = 4096;

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

/** The checks' readings (actions.ts `LiveReadings`) the worker gave. */
async function liveReadings(deps: PayoutRunsApiDeps): Promise<LiveReadings> {
  return {
    ...(deps.resolvedNow ? { resolvedNow: deps.resolvedNow } : {}),
    ...(deps.paidByBank ? { paidByBank: await deps.paidByBank() } : {}),
  };
}

// every refusal's answer: a code added without one fails the type check
const STATUS: Record<PayoutRunRefused['code'], number> = {
  NO_SUCH_RUN: 404,
  INVALID_INPUT: 400,
  RUN_NOT_DRAFT: 409,
  RUN_NOT_APPROVED: 409,
  RUN_ALREADY_SENT: 409,
  MAKER_CHECKER: 409,
  NOTHING_TO_PAY: 409,
  CHANGED_MEANWHILE: 409,
  EXECUTION_DATE_PASSED: 409,
  STATED_LOWER: 409,
  PAID_SINCE: 409,
  HOLD_IN_FORCE: 409,
  PAYEE_CHANGED: 409,
  FILE_TAKEN: 409,
  RUN_NOT_SENT: 409,
  NOTHING_UNPAID: 409,
  NOT_PAST_DUE: 409,
};

/** A refusal as its answer; anything else is not ours to describe (rethrown: the route logs a 500). */
function refusal(res: ServerResponse, e: unknown): void {
  if (e instanceof NotAllowed) send(res, 403, { error: 'forbidden', message: e.message });
  else if (e instanceof PayoutRunRefused)
    send(res, STATUS[e.code] ?? 400, { error: e.code.toLowerCase(), message: e.message });
  else if (isReconError(e, 'configuration')) send(res, 503, { error: 'not_configured', message: e.message });
  else throw e;
}

/** The executionDate of an approval's body, if any; a string message for a body that is not one. */
async function approvalBody(req: IncomingMessage): Promise<{ executionDate?: string } | string> {
  const read = await bodyText(req, MAX_BODY);
  if (!read.ok)
    return read.problem === 'too_large' ? `the body is over ${MAX_BODY} bytes` : 'the body is not UTF-8 text';
  const text = read.text;
  if (text.trim() === '') return {};
  // exact JSON: "executionDate" given twice with other days is refused, not the last one taken
  const parsed = parseJsonExact(text);
  if (!parsed.ok) return `the body is not JSON (${parsed.reason})`;
  const body = parsed.value;
  if (!isPlainObject(body)) return 'the body must be a JSON object';
  const keys = Object.keys(body);
  const d = (body as Record<string, unknown>).executionDate;
  if (keys.some((k) => k !== 'executionDate') || (d !== undefined && typeof d !== 'string'))
    return 'the body may hold only "executionDate": "YYYY-MM-DD"';
  return d === undefined ? {} : { executionDate: d };
}

async function route(deps: PayoutRunsApiDeps, req: IncomingMessage, res: ServerResponse, who: Person, path: string) {
  const m = /^\/api\/payout-runs(?:\/([^/]+)(?:\/(approve|file))?)?$/.exec(path);
  if (!m) return false;
  let id: string | undefined;
  try {
    id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
  } catch {
    send(res, 400, { error: 'invalid_path', message: 'the run id is not valid percent-encoding' });
    return true;
  }
  const action = m[2];
  const method = req.method ?? 'GET';
  const expected = action === 'approve' ? 'POST' : 'GET';
  if (method !== expected) {
    send(res, 405, { error: 'method_not_allowed', message: `only ${expected} here` }, { allow: expected });
    return true;
  }
  if (id === undefined) send(res, 200, (await listRuns(deps.store, who)).map(runJson));
  else if (action === undefined) send(res, 200, runJson(await showRun(deps.store, who, id)));
  else if (action === 'file') {
    const f = await paymentFile(deps.store, who, id, {
      timezone: deps.timezone,
      now: deps.now?.() ?? new Date(),
      ...(await liveReadings(deps)),
    });
    res.writeHead(200, {
      'content-type': 'application/xml; charset=utf-8',
      'content-length': Buffer.byteLength(f.xml),
      'content-disposition': `attachment; filename="${f.fileName}"`,
      'cache-control': 'no-store',
      'x-content-sha256': f.sha256,
    });
    res.end(f.xml);
  } else {
    const body = await approvalBody(req);
    if (typeof body === 'string') {
      send(res, 400, { error: 'invalid_body', message: body });
      return true;
    }
    const now = deps.now?.() ?? new Date();
    send(
      res,
      200,
      runJson(
        await approveRun(deps.store, who, id, {
          timezone: deps.timezone,
          holidays: executionHolidays(deps.bank),
          ...body,
          now,
          ...(await liveReadings(deps)),
        }),
      ),
    );
  }
  return true;
}

export function createPayoutRunsApi(deps: PayoutRunsApiDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/api/payout-runs' && !path.startsWith('/api/payout-runs/')) return false;
    let dir: Directory;
    try {
      dir = await deps.directory();
    } catch {
      send(res, 503, { error: 'unavailable', message: 'the users cannot be read now; try again' });
      return true;
    }
    const who = personOfToken(dir, bearerToken(req), deps.auditorToken);
    if (!who) {
      send(
        res,
        401,
        { error: 'unauthorized', message: 'a valid bearer token is required' },
        { 'www-authenticate': 'Bearer realm="recon"' },
      );
      return true;
    }
    try {
      return await route(deps, req, res, who, path);
    } catch (e) {
      refusal(res, e);
      return true;
    }
  };
}
