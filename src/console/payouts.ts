import { maskPans } from '../input-rules';
import { DateTime } from 'luxon';
import { EMPTY_BANK_CONFIG, executionHolidays } from '../config/bank';
import { ReconError } from '../errors';
import { approveRun, draftRun, listRuns, paymentFile, showRun } from '../payout-runs/actions';
import { paidByBankOf } from '../payout-runs/bank-paid';
import { resolvedNowOf } from '../payout-runs/resolved';
import { html } from './html';
import { WORK_WORDS } from './i18n-work';
import { page, type View } from './layout';
import { type Message, payoutRunPage, payoutRunsPage } from './pages/payout-runs';
import { redirect, SECURITY_HEADERS, sendHtml } from './respond';
import type { ConsoleDeps, Request } from './types';
import { statusOf } from './work';

/**
 * Payout runs from the console: the actions of src/payout-runs (each checks the role and maker-checker itself;
 * a refusal is shown in words with its status), the payment file served as the CLI writes it.
 */

export const RUN_PATH = /^\/console\/payout-runs\/(PR-\d{4}-\d{2}-\d{1,4})(?:\/(approve|pain\.001))?$/;

const refusal = (e: unknown): ReconError => {
  if (e instanceof ReconError && (e.kind === 'usage' || e.kind === 'configuration')) return e;
  throw e;
};

/** The checks' readings before approval and file (actions.ts `LiveReadings`): the worker keeps the read models live. */
async function liveReadings(deps: ConsoleDeps) {
  const bank = deps.bank ?? EMPTY_BANK_CONFIG;
  return {
    paidByBank: await paidByBankOf(deps.sql, deps.store, bank.payouts, deps.timezone),
    resolvedNow: resolvedNowOf(deps.sql),
  };
}

const lastMonth = (zone: string) => DateTime.now().setZone(zone).minus({ months: 1 }).toFormat('yyyy-MM');

export async function showRuns(deps: ConsoleDeps, r: Request, v: View, m: Message = null, status = 200) {
  const t = WORK_WORDS[v.lang];
  const runs = await listRuns(deps.store, v.person);
  const month = r.url.searchParams.get('month') ?? lastMonth(deps.timezone);
  const shown = m ?? (r.url.searchParams.get('nothing') ? { ok: false, text: t.nothingToPay } : null);
  sendHtml(r.res, status, page(v, t.payoutRuns, payoutRunsPage(v, [...runs].reverse(), month, shown)));
}

export async function showRunPage(deps: ConsoleDeps, r: Request, v: View, id: string, m: Message = null, status = 200) {
  const t = WORK_WORDS[v.lang];
  try {
    const run = await showRun(deps.store, v.person, id);
    const shown = m ?? (r.url.searchParams.get('done') === 'approve' ? { ok: true, text: t.approve } : null);
    sendHtml(r.res, status, page(v, `${t.run} ${run.id}`, payoutRunPage(v, run, shown)));
  } catch (e) {
    const x = refusal(e);
    sendHtml(
      r.res,
      statusOf(x),
      page(v, t.run, html`<p role="alert" class="error">${t.refused}: ${maskPans(x.message)}</p>`),
    );
  }
}

/** GET /console/payout-runs/<id>/pain.001: the approved run's payment file (payout-run.send), as a download. */
export async function sendPaymentFile(deps: ConsoleDeps, r: Request, v: View, id: string) {
  try {
    const f = await paymentFile(deps.store, v.person, id, { timezone: deps.timezone, ...(await liveReadings(deps)) });
    r.res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'application/xml; charset=utf-8',
      'content-disposition': `attachment; filename="${f.fileName}"`,
      'content-length': Buffer.byteLength(f.xml),
      'x-content-sha256': f.sha256,
    });
    r.res.end(f.xml);
  } catch (e) {
    const x = refusal(e);
    return showRunPage(deps, r, v, id, { ok: false, text: x.message }, statusOf(x));
  }
}

/** POST /console/payout-runs/draft: drafts the month's run (or finds the draft waiting) and shows it. */
export async function postDraft(deps: ConsoleDeps, r: Request, v: View, form: URLSearchParams) {
  const month = form.get('month') ?? '';
  try {
    const bank = deps.bank ?? EMPTY_BANK_CONFIG;
    // the worker keeps the read models live: the payouts leg knows what the bank paid as of now
    const paidByBank = await paidByBankOf(deps.sql, deps.store, bank.payouts, deps.timezone);
    const resolvedNow = resolvedNowOf(deps.sql);
    const d = await draftRun(deps.store, v.person, { month, bank, env: process.env, paidByBank, resolvedNow });
    if (!d.run) return redirect(r.res, `/console/payout-runs?nothing=1&month=${encodeURIComponent(month)}`);
    deps.log.info('console payout run drafted', { person: v.person.id, run: d.run.id, created: d.created });
    redirect(r.res, `/console/payout-runs/${d.run.id}`);
  } catch (e) {
    const x = refusal(e);
    return showRuns(deps, r, v, { ok: false, text: x.message }, statusOf(x));
  }
}

/** POST /console/payout-runs/<id>/approve: an approver who did not draft it (refused in words otherwise). */
export async function postApproveRun(deps: ConsoleDeps, r: Request, v: View, id: string) {
  try {
    await approveRun(deps.store, v.person, id, {
      timezone: deps.timezone,
      holidays: executionHolidays(deps.bank),
      ...(await liveReadings(deps)),
    });
    deps.log.info('console payout run approved', { person: v.person.id, run: id });
    redirect(r.res, `/console/payout-runs/${id}?done=approve`);
  } catch (e) {
    const x = refusal(e);
    deps.log.warn('console payout run approval refused', { person: v.person.id, run: id, error: x.message });
    return showRunPage(deps, r, v, id, { ok: false, text: x.message }, statusOf(x));
  }
}
