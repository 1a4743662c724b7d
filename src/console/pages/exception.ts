import { maskPans } from '../../input-rules';
import { DECISIONS } from '../../events/audit-events';
import { HAND_REASONS } from '../../events/exception-events';
import type { ExceptionItem } from '../../exceptions/queries';
import type { HistoryEntry } from '../../exceptions/state';
import type { User } from '../../people/directory';
import { type Action, may } from '../../people/roles';
import { type Html, html } from '../html';
import { money, when } from '../i18n';
import { WORK_WORDS, type WorkWords } from '../i18n-work';
import { csrfField, type View } from '../layout';

/**
 * One exception (docs/console.md, "An exception"): its facts, severity, due date, state, assignee, pending
 * proposal and history, then the actions the person's role allows, each a plain POST form with the CSRF token
 * (the actions check the role again on the server, whatever the page showed).
 */

export interface ExceptionView {
  readonly item: ExceptionItem;
  readonly history: readonly HistoryEntry[];
  /** the users an exception may be assigned to (not revoked; analysts and approvers) */
  readonly assignable: readonly User[];
  /** what the last action did, or why it was refused */
  readonly message: { readonly ok: boolean; readonly text: string } | null;
}

const dl = (pairs: [string, Html | string][]) =>
  html`<dl class="facts">${pairs.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;

function facts(v: View, x: ExceptionItem, t: WorkWords): Html {
  const d = x.discrepancy;
  const amount = x.amountInDoubt === null ? '' : money(BigInt(x.amountInDoubt), x.currency, v.lang);
  const payment = d.payment_id
    ? html`<a href="/console/payment/${encodeURIComponent(d.payment_id)}">${d.payment_id}</a>`
    : (d.order_id ?? '');
  return dl([
    [v.w.leg, v.w.legs[x.leg]],
    [v.w.type, x.type],
    [t.state, x.state],
    [v.w.severity, x.severity],
    [t.due, x.dueAt ? when(x.dueAt, v.zone, v.lang) : ''],
    [t.assignee, x.assignee ?? t.nobody],
    [v.w.amount, html`<span class="num">${amount}</span>`],
    [v.w.payment, payment],
    [v.w.receiver, d.receiver_name ?? ''],
    [v.w.subMerchant, x.subMerchantIds.join(', ')],
    [v.w.detected, when(d.detected_at, v.zone, v.lang)],
    [t.whatDiffers, x.whatDiffers],
    [
      t.pending,
      x.pending
        ? `${x.pending.decision ?? ''} — ${x.pending.by}, ${when(x.pending.at, v.zone, v.lang)}: ${x.pending.note}`
        : t.none,
    ],
  ]);
}

function history(v: View, entries: readonly HistoryEntry[], t: WorkWords): Html {
  if (entries.length === 0) return html`<p>${t.none}</p>`;
  return html`<table id="history"><thead><tr><th scope="col">${t.when}</th><th scope="col">${t.who}</th>
<th scope="col">${t.what}</th><th scope="col">${t.why}</th></tr></thead><tbody>
${entries.map((e) => html`<tr><td>${when(e.at, v.zone, v.lang)}</td><td>${e.by}</td><td>${e.action}${detailOf(e)}</td><td class="text">${e.why ?? ''}</td></tr>`)}
</tbody></table>`;
}

const detailOf = (e: HistoryEntry) => {
  const d = e.detail;
  const parts = ['assignee', 'decision', 'reasonCode'].filter((k) => typeof d[k] === 'string').map((k) => d[k]);
  return parts.length ? `: ${parts.join(', ')}` : '';
};

const options = (values: readonly string[]) => values.map((o) => html`<option value="${o}">${o}</option>`);

/** One action's form: posted to /console/exceptions/<id>/<action>, a button named by the action. */
function form(v: View, id: string, action: string, label: string, fields: Html): Html {
  return html`<form method="post" action="/console/exceptions/${id}/${action}" class="action" id="act-${action}">
${csrfField(v)}${fields}<button type="submit">${label}</button></form>`;
}

const note = (t: WorkWords, name = 'note', label = t.note) =>
  html`<label>${label}<textarea name="${name}" rows="2" cols="40" required maxlength="4000"></textarea></label>`;

/** The money the page showed, sent back with a decision or hand resolution: taken on that or refused (409). */
const moneyShown = (x: ExceptionItem) =>
  html`<input type="hidden" name="amount_in_doubt" value="${x.amountInDoubt ?? ''}"><input type="hidden" name="currency" value="${x.currency ?? ''}">`;

function actions(v: View, x: ExceptionItem, assignable: readonly User[], t: WorkWords): Html[] {
  const can = (a: Action) => may(v.person.role, a);
  const out: Html[] = [];
  if (can('exception.assign'))
    out.push(
      form(
        v,
        x.id,
        'assign',
        t.assign,
        html`<label>${t.assignee}<select name="assignee">${assignable.map((u) => html`<option value="${u.id}">${u.name} (${u.id})</option>`)}</select></label>`,
      ),
    );
  if (can('exception.comment')) out.push(form(v, x.id, 'comment', t.comment, note(t, 'text', t.comment)));
  if (can('exception.resolve'))
    out.push(
      form(
        v,
        x.id,
        'resolve',
        t.resolve,
        html`<label>${t.reasonCode}<select name="reasonCode">${options(HAND_REASONS)}</select></label>${note(t)}${moneyShown(x)}`,
      ),
    );
  if (can('exception.propose'))
    out.push(
      form(
        v,
        x.id,
        'accept',
        t.propose,
        html`<label>${t.decision}<select name="decision">${options(DECISIONS)}</select></label>${note(t)}
${moneyShown(x)}`,
      ),
    );
  if (can('exception.approve') && x.pending) {
    const shown = html`<input type="hidden" name="proposal" value="${x.pending.id}">`;
    out.push(form(v, x.id, 'approve', t.approve, html`${note(t)}${shown}`));
    out.push(form(v, x.id, 'reject', t.reject, html`${note(t)}${shown}`));
  }
  if (can('exception.resolve') && (x.state === 'accepted' || x.state === 'resolved_by_hand'))
    out.push(
      form(
        v,
        x.id,
        'reopen',
        t.reopen,
        html`${note(t, 'reason', t.why)}<input type="hidden" name="acceptance" value="${x.acceptance ?? ''}">`,
      ),
    );
  return out;
}

export function exceptionPage(v: View, e: ExceptionView): Html {
  const t = WORK_WORDS[v.lang];
  const msg = e.message
    ? e.message.ok
      ? html`<p role="status" class="done">${t.done}: ${e.message.text}</p>`
      : html`<p role="alert" class="error">${t.refused}: ${maskPans(e.message.text)}</p>`
    : '';
  const acts = actions(v, e.item, e.assignable, t);
  return html`${msg}<h2>${t.facts}</h2>${facts(v, e.item, t)}
<h2>${t.history}</h2>${history(v, e.history, t)}
${acts.length ? html`<h2>${t.actions}</h2><div class="actions">${acts}</div>` : ''}`;
}
