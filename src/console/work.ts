import { maskPans } from '../input-rules';
import { type ActionRequest, actOnException } from '../exceptions/actions';
import { type BulkRequest, bulkAct } from '../exceptions/bulk';
import type { ExceptionDeps } from '../exceptions/context';
import { ExceptionRefused } from '../exceptions/errors';
import { contextOf } from '../exceptions/context';
import type { ExceptionFilter, ExceptionItem } from '../exceptions/queries';
import { evolveWork, type HistoryEntry, newWork } from '../exceptions/state';
import { discrepancyStream } from '../events/audit-events';
import { exceptionStream } from '../events/exception-events';
import { comparePositions } from '../store/types';
import { DEFAULT_EXCEPTION_POLICY } from '../exceptions/severity';
import { ReconError } from '../errors';
import { may } from '../people/roles';
import { html } from './html';
import { WORK_WORDS } from './i18n-work';
import { page, type View } from './layout';
import { bulkPage } from './pages/bulk';
import { exceptionPage, type ExceptionView } from './pages/exception';
import { parseQueueFilter } from './queue';
import { redirect, sendHtml } from './respond';
import type { ConsoleDeps, Request } from './types';

/**
 * The exceptions workflow from the console (docs/console.md, "Working an exception"): every POST goes to the
 * actions of src/exceptions, which check the role, the state and maker-checker themselves; a refusal is shown
 * on the page in words with its status (400, 403, 404, 409), never as a server error.
 */

export const EXCEPTION_PATH =
  /^\/console\/exceptions\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/([a-z]+))?$/;

const DONE = ['assign', 'comment', 'resolve', 'accept', 'approve', 'reject', 'reopen'] as const;

export const exceptionDeps = (deps: ConsoleDeps): ExceptionDeps => ({
  sql: deps.sql,
  store: deps.store,
  policy: deps.policy ?? DEFAULT_EXCEPTION_POLICY,
});

/** The status a refusal answers with. */
export function statusOf(e: ReconError): number {
  const code = (e as { code?: string }).code;
  if (code === 'NOT_FOUND' || code === 'NO_SUCH_RUN') return 404;
  if (code === 'FORBIDDEN' || code === 'MAKER_CHECKER' || code === 'UNAUTHENTICATED') return 403;
  if (code === 'INVALID' || code === 'INVALID_INPUT') return 400;
  return 409;
}

/** GET /console/exceptions/<id>, or the same page after an action with its outcome. */
export async function showException(
  deps: ConsoleDeps,
  r: Request,
  v: View,
  id: string,
  message: ExceptionView['message'] = null,
  status = 200,
): Promise<void> {
  const t = WORK_WORDS[v.lang];
  const now = await exceptionNow(deps, id);
  if (!now) return sendHtml(r.res, 404, page(v, t.exception, html`<p role="alert">${v.w.notFound}</p>`));
  const { item, history } = now;
  const done = r.url.searchParams.get('done');
  const shown = message ?? ((DONE as readonly string[]).includes(done ?? '') ? { ok: true, text: String(done) } : null);
  const users = [...(await deps.directory()).users.values()];
  const assignable = users.filter((u) => u.revokedAt === null && (u.role === 'analyst' || u.role === 'approver'));
  const body = exceptionPage(v, { item, history, assignable, message: shown });
  sendHtml(r.res, status, page(v, `${t.exception}: ${item.type}`, body));
}

/**
 * The exception as its streams hold it this moment: the discrepancy from its leg's view, the work (state,
 * assignee, pending proposal) and the history folded from the store itself, so the page after an action shows
 * it even before the read models (recon.exceptions, recon.exception_history) have caught up.
 */
async function exceptionNow(
  deps: ConsoleDeps,
  id: string,
): Promise<{ item: ExceptionItem; history: HistoryEntry[] } | null> {
  let ctx: Awaited<ReturnType<typeof contextOf>>;
  try {
    ctx = await contextOf(exceptionDeps(deps), id);
  } catch (e) {
    if (e instanceof ExceptionRefused && e.code === 'NOT_FOUND') return null;
    throw e;
  }
  const events = [
    ...(await deps.store.readStream(exceptionStream(ctx.item.id))),
    ...(await deps.store.readStream(discrepancyStream(ctx.item.id))),
  ].sort((a, b) => comparePositions(a.position, b.position));
  const w = newWork(ctx.item.id);
  const history = events.map((e) => evolveWork(w, e)).filter((h): h is HistoryEntry => h !== null);
  const { work } = ctx;
  const item: ExceptionItem = {
    ...ctx.item,
    state: ctx.state,
    assignee: work.assignee,
    pending: work.pending,
    decision: work.decision,
    acceptance: work.acceptance,
    dueAt: work.dueAt ?? ctx.item.dueAt,
  };
  return { item, history };
}

/** The action a form asks for, as src/exceptions/actions.ts takes it; null for an unknown action. */
function requestOf(id: string, action: string, f: URLSearchParams): ActionRequest | null {
  const g = (k: string) => f.get(k) ?? '';
  // the money the page showed (its hidden fields): a decision or hand resolution is taken on that, or refused
  const seen = f.has('amount_in_doubt')
    ? { seen: { amountInDoubt: g('amount_in_doubt') || null, currency: g('currency') || null } }
    : {};
  switch (action) {
    case 'assign':
      return { action, id, assignee: g('assignee'), ...(g('note') ? { note: g('note') } : {}) };
    case 'comment':
      return { action, id, text: g('text') };
    case 'resolve':
      return { action, id, reasonCode: g('reasonCode'), note: g('note'), ...seen };
    case 'accept':
      return { action, id, decision: g('decision'), note: g('note'), ...seen };
    case 'approve':
    case 'reject':
      // the proposal the page showed: another one waiting by now is refused, not signed unseen
      return { action, id, note: g('note'), ...(f.has('proposal') ? { proposal: g('proposal') } : {}) };
    case 'reopen':
      // the decision in force the page showed (none: a hand resolution): another one by now is not revoked unseen
      return {
        action,
        id,
        reason: g('reason'),
        ...(f.has('acceptance') ? { acceptance: g('acceptance') || null } : {}),
      };
    default:
      return null;
  }
}

/** POST /console/exceptions/<id>/<action>: done → back to the page (303); refused → the page with the reason. */
export async function postExceptionAction(
  deps: ConsoleDeps,
  r: Request,
  v: View,
  id: string,
  action: string,
  form: URLSearchParams,
): Promise<void> {
  const request = requestOf(id, action, form);
  if (!request) return sendHtml(r.res, 404, page(v, '404', html`<p>${v.w.notFound}</p>`));
  try {
    await actOnException(exceptionDeps(deps), v.person, request);
  } catch (e) {
    if (!(e instanceof ReconError) || e.kind !== 'usage') throw e;
    deps.log.warn('console exception action refused', { person: v.person.id, action, id, error: e.message });
    return showException(deps, r, v, id, { ok: false, text: e.message }, statusOf(e));
  }
  deps.log.info('console exception action', { person: v.person.id, action, id });
  redirect(r.res, `/console/exceptions/${id}?done=${action}`);
}

/** The queue's filter (its query string's names) as the exceptions' filter that bulkAct reads. */
export function bulkFilterOf(q: URLSearchParams): ExceptionFilter | string {
  const parsed = parseQueueFilter(q);
  if (!parsed.ok) return parsed.problem;
  const f = parsed.filter;
  return {
    ...(f.legs.length === 1 ? { leg: f.legs[0] } : {}),
    ...(f.type ? { type: f.type } : {}),
    // the queue's status (open by default): the bulk action acts on the exceptions the queue shows
    ...(f.status ? { status: f.status } : {}),
    ...(f.assignee ? { assignee: f.assignee } : {}),
    ...(f.severity ? { severity: f.severity } : {}),
    ...(f.subMerchant ? { subMerchantId: f.subMerchant } : {}),
    ...(f.currency ? { currency: f.currency } : {}),
    ...(f.minAmount !== null ? { minAmount: f.minAmount } : {}),
    ...(f.olderThanDays !== null ? { minAgeHours: f.olderThanDays * 24 } : {}),
  };
}

/**
 * POST /console/exceptions/bulk: without `confirm`, a dry run listing what would change (nothing written) and
 * a form to apply it; with it, applied (bulkAct plans every one before committing any).
 */
export async function postBulk(deps: ConsoleDeps, r: Request, v: View, form: URLSearchParams): Promise<void> {
  const t = WORK_WORDS[v.lang];
  const filter = bulkFilterOf(form);
  const b: BulkRequest = {
    action: (form.get('bulk_action') ?? '') as BulkRequest['action'],
    reason: form.get('reason') ?? '',
    ...(form.get('to') ? { assignee: form.get('to')! } : {}),
    ...(form.get('reasonCode') ? { reasonCode: form.get('reasonCode')! } : {}),
    ...(form.get('decision') ? { decision: form.get('decision')! } : {}),
  };
  const dryRun = form.get('confirm') !== '1';
  // the apply does exactly what the preview listed: its digest comes back with the confirm form
  const expected = dryRun ? undefined : (form.get('preview') ?? '');
  const show = (status: number, body: ReturnType<typeof html>) => sendHtml(r.res, status, page(v, t.bulk, body));
  if (typeof filter === 'string')
    return show(400, html`<p role="alert" class="error">${t.refused}: ${maskPans(filter)}</p>`);
  if (!may(v.person.role, 'exception.comment'))
    return show(403, html`<p role="alert" class="error">${v.w.forbidden}</p>`);
  try {
    const outcome = await bulkAct(exceptionDeps(deps), v.person, filter, b, {
      dryRun,
      ...(expected !== undefined ? { expected } : {}),
    });
    if (!dryRun)
      deps.log.info('console bulk action', { person: v.person.id, action: b.action, n: outcome.changes.length });
    return show(200, bulkPage(v, form, outcome));
  } catch (e) {
    if (!(e instanceof ReconError) || e.kind !== 'usage') throw e;
    const status = e instanceof ExceptionRefused ? statusOf(e) : 403;
    return show(status, html`<p role="alert" class="error">${t.refused}: ${maskPans(e.message)}</p>`);
  }
}
