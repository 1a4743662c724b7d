import { may } from '../people/roles';
import { explain } from '../reconciliation/explain';
import { listRuns } from '../scheduler/job-runs';
import { checkText, REFERENCE_TEXT } from '../input-rules';
import type { ConsoleDeps, Request } from './types';
import { type Html, html } from './html';
import { page, type View } from './layout';
import { exceptionsPage } from './pages/exceptions';
import { jobsPage } from './pages/jobs';
import { overviewData, overviewPage } from './pages/overview';
import { paymentForm, paymentPage } from './pages/payment';
import { statementsPage } from './pages/statements';
import { statementFile, sendFile, statementRuns } from './pages/statements';
import { subMerchantData, subMerchantPage, subMerchants, subMerchantsPage } from './pages/sub-merchant';
import { PAGE_SIZE, parseQueueFilter, queuePage } from './queue';
import { RUN_PATH, sendPaymentFile, showRunPage, showRuns } from './payouts';
import { EXCEPTION_PATH, showException } from './work';
import { redirect, sendHtml } from './respond';

/** The console's pages (GET) and its one action so far (POST /console/jobs/run), each read-only but that one. */

const show = (r: Request, v: View, title: string, content: Html, status = 200) =>
  sendHtml(r.res, status, page(v, title, content));

/** A path segment as an id: decoded and checked as the doors check texts; null when not acceptable. */
function segment(text: string): string | null {
  try {
    const r = checkText(decodeURIComponent(text), REFERENCE_TEXT);
    return r.ok ? r.value : null;
  } catch {
    return null;
  }
}

const jobNames = (deps: ConsoleDeps) => deps.scheduler.schedules().map((s) => s.name);

export async function routePage(deps: ConsoleDeps, r: Request, v: View): Promise<void> {
  const { w } = v;
  const path = r.url.pathname.replace(/\/$/, '') || '/console';
  const q = r.url.searchParams;
  if (path === '/console') {
    const data = await overviewData({
      sql: deps.sql,
      store: deps.store,
      timezone: deps.timezone,
      jobs: jobNames(deps),
    });
    return show(r, v, w.overview, overviewPage(v, data));
  }
  if (path === '/console/exceptions') {
    const parsed = parseQueueFilter(q);
    const result = parsed.ok
      ? { filter: parsed.filter, ...(await queuePage(deps.sql, parsed.filter, new Date(), PAGE_SIZE, deps.policy)) }
      : { problem: parsed.problem };
    const users = [...(await deps.directory()).users.values()].filter(
      (u) => u.revokedAt === null && (u.role === 'analyst' || u.role === 'approver'),
    );
    return show(
      r,
      v,
      w.exceptions,
      exceptionsPage(v, q, result, users, new Date(), deps.policy),
      parsed.ok ? 200 : 400,
    );
  }
  const x = EXCEPTION_PATH.exec(path);
  if (x && !x[2]) return showException(deps, r, v, x[1]!);
  if (path === '/console/payout-runs') return showRuns(deps, r, v);
  const run = RUN_PATH.exec(path);
  if (run && !run[2]) return showRunPage(deps, r, v, run[1]!);
  if (run?.[2] === 'pain.001') return sendPaymentFile(deps, r, v, run[1]!);
  if (path === '/console/payment' || path.startsWith('/console/payment/')) return paymentRoute(deps, r, v, path);
  if (path === '/console/sub-merchants')
    return show(r, v, w.subMerchants, subMerchantsPage(v, await subMerchants(deps.sql)));
  if (path.startsWith('/console/sub-merchants/')) {
    const id = segment(path.slice('/console/sub-merchants/'.length));
    const month = q.get('month');
    if (id === null || (month !== null && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month)))
      return show(r, v, w.subMerchant, html`<p role="alert" class="error">${w.notFound}</p>`, 400);
    const data = await subMerchantData(
      { sql: deps.sql, store: deps.store, timezone: deps.timezone, bank: deps.bank },
      id,
      month,
    );
    return show(r, v, `${w.subMerchant}: ${data.row?.name ?? id}`, subMerchantPage(v, data));
  }
  if (path === '/console/statements') return show(r, v, w.statements, statementsPage(v, await statementRuns(deps.sql)));
  if (path === '/console/statements/file') {
    const file = await statementFile(deps.sql, deps.outDir, q.get('name') ?? '');
    return file ? sendFile(r.res, file) : show(r, v, w.statements, html`<p>${w.notFound}</p>`, 404);
  }
  if (path === '/console/jobs') {
    const runs = await listRuns(deps.sql, { limit: 50 });
    const started = q.get('started');
    const known = started !== null && jobNames(deps).includes(started) ? started : null;
    return show(r, v, w.jobs, jobsPage(v, deps.scheduler.schedules(), runs, may(v.person.role, 'jobs.run'), known));
  }
  show(r, v, '404', html`<p>${w.notFound}</p>`, 404);
}

async function paymentRoute(deps: ConsoleDeps, r: Request, v: View, path: string): Promise<void> {
  const { w } = v;
  const ref =
    path === '/console/payment' ? (r.url.searchParams.get('ref') ?? '') : path.slice('/console/payment/'.length);
  if (ref === '') return show(r, v, w.payment, paymentForm(v, ''));
  const id = path === '/console/payment' ? segment(encodeURIComponent(ref)) : segment(ref);
  if (id === null) return show(r, v, w.payment, html`${paymentForm(v, '')}<p role="alert">${w.notFound}</p>`, 400);
  const projects = await deps.sql<{ pos_id: string }[]>`
    select distinct pos_id from recon.operations where pos_id is not null`.catch(() => []);
  const x = await explain({ sql: deps.sql, store: deps.store, posIds: projects.map((p) => p.pos_id) }, id);
  return show(r, v, `${w.payment}: ${id}`, paymentPage(v, x), x.payments.length || x.order ? 200 : 404);
}

/** POST /console/jobs/run: administrators only (checked here, whatever the page showed); the run goes on after the answer. */
export async function postJobRun(deps: ConsoleDeps, r: Request, v: View, form: URLSearchParams): Promise<void> {
  if (!may(v.person.role, 'jobs.run')) {
    deps.log.warn('console action refused by role', { person: v.person.id, action: 'jobs.run' });
    return show(r, v, v.w.forbidden, html`<p role="alert" class="error">${v.w.forbidden}</p>`, 403);
  }
  const job = form.get('job') ?? '';
  if (!jobNames(deps).includes(job)) return show(r, v, v.w.jobs, html`<p role="alert">${v.w.notFound}</p>`, 400);
  deps.log.info('job run requested from the console', { job, person: v.person.id });
  deps.scheduler.runNow(job).catch((e: unknown) => deps.log.error('job run failed', { job, error: e }));
  redirect(r.res, `/console/jobs?started=${encodeURIComponent(job)}`);
}
