import { maskPans } from '../../input-rules';
import { type ExceptionPolicy, severityOf } from '../../exceptions/severity';
import { DISCREPANCY_TYPES, LEGS } from '../../reconciliation/discrepancies/registry';
import { DISCREPANCY_STATUSES } from '../../reconciliation/discrepancy-types';
import { type Html, html } from '../html';
import { money, when } from '../i18n';
import type { View } from '../layout';
import { cursorText, type QueueFilter, type QueueRow } from '../queue';
import { may } from '../../people/roles';
import { SEVERITIES } from '../../reconciliation/discrepancies/registry';
import { WORK_WORDS } from '../i18n-work';
import { bulkForm } from './bulk';

/**
 * Exceptions: the queue with its filters as a plain GET form (works without JavaScript; with htmx the page is
 * swapped in place). Each row links to its exception's page (pages/exception.ts), where the actions are; the bulk
 * form under the queue acts on every exception the filter matches, after a dry run.
 */

function select(name: string, label: string, options: readonly string[], chosen: string | null, any: string | null) {
  return html`<label>${label}<select name="${name}">
${any === null ? '' : html`<option value=""${chosen === null ? html` selected` : ''}>${any}</option>`}
${options.map((o) => html`<option value="${o}"${o === chosen ? html` selected` : ''}>${o}</option>`)}
</select></label>`;
}

function filterForm(v: View, q: URLSearchParams, f: QueueFilter | null): Html {
  const w = v.w;
  const val = (k: string) => q.get(k) ?? '';
  return html`<form method="get" action="/console/exceptions" class="filters" role="search">
${select('leg', w.leg, LEGS, f && f.legs.length === 1 ? f.legs[0]! : null, w.any)}
${select('type', w.type, DISCREPANCY_TYPES, f?.type ?? null, w.any)}
${select('status', w.status, DISCREPANCY_STATUSES, f ? f.status : 'open', w.any)}
${select('severity', w.severity, SEVERITIES, f?.severity ?? null, w.any)}
<label>${WORK_WORDS[v.lang].assignee}<input name="assignee" value="${val('assignee')}" maxlength="256" size="10"></label>
<label>${w.subMerchant}<input name="sub_merchant" value="${val('sub_merchant')}" maxlength="256"></label>
<label>${w.currency}<input name="currency" value="${val('currency')}" maxlength="3" size="4" pattern="[A-Z]{3}"></label>
<label>${w.minAmount}<input name="min_amount" value="${val('min_amount')}" inputmode="numeric" pattern="[0-9]*" size="10"></label>
<label>${w.minAgeDays}<input name="older_than_days" value="${val('older_than_days')}" inputmode="numeric" pattern="[0-9]*" size="4"></label>
<label>${w.sort}<select name="order">
<option value="asc"${f?.order !== 'desc' ? html` selected` : ''}>${w.sortOldest}</option>
<option value="desc"${f?.order === 'desc' ? html` selected` : ''}>${w.sortNewest}</option></select></label>
<button type="submit">${w.filter}</button>
</form>`;
}

function row(v: View, r: QueueRow, now: Date, policy?: ExceptionPolicy): Html {
  const severity = severityOf(
    { type: r.type, values: r.values, currency: r.currency, detected_at: r.detected_at.toISOString() },
    now,
    policy,
  );
  const payment = r.payment_id
    ? html`<a href="/console/payment/${encodeURIComponent(r.payment_id)}">${r.payment_id}</a>`
    : (r.order_id ?? '');
  const sub = r.sub_merchant_id
    ? html`<a href="/console/sub-merchants/${encodeURIComponent(r.sub_merchant_id)}">${r.sub_merchant_id}</a>`
    : '';
  return html`<tr data-id="${r.id}"><td><a href="/console/exceptions/${r.id}">${when(r.detected_at, v.zone, v.lang)}</a></td><td>${v.w.legs[r.leg]}</td>
<td>${r.type}</td><td>${r.status}</td><td>${severity}</td><td class="text">${payment}</td>
<td class="text">${r.receiver_name ?? ''}</td><td class="text">${sub}</td><td>${r.currency ?? ''}</td>
<td class="num">${r.amount === null ? '' : money(r.amount, r.currency, v.lang)}</td><td>${r.assignee ?? ''}</td></tr>`;
}

export function exceptionsPage(
  v: View,
  q: URLSearchParams,
  result: { filter: QueueFilter; rows: QueueRow[]; more: boolean } | { problem: string },
  users: readonly { id: string; name: string }[] = [],
  now = new Date(),
  policy?: ExceptionPolicy,
): Html {
  const w = v.w;
  if ('problem' in result)
    return html`${filterForm(v, q, null)}<p role="alert" class="error">${w.filter}: ${maskPans(result.problem)}</p>`;
  const { rows, more } = result;
  const next = new URLSearchParams(q);
  if (rows.length) next.set('after', cursorText(rows[rows.length - 1]!));
  const first = new URLSearchParams(q);
  first.delete('after');
  const paging = html`<nav aria-label="${w.exceptions}" class="paging">
${q.has('after') ? html`<a href="/console/exceptions?${first.toString()}">${w.first}</a> ` : ''}
${more ? html`<a href="/console/exceptions?${next.toString()}" rel="next">${w.next}</a>` : ''}</nav>`;
  const headers = [w.detected, w.leg, w.type, w.status, w.severity, w.payment, w.receiver, w.subMerchant, w.currency];
  const body =
    rows.length === 0
      ? html`<p>${w.noRows}</p>`
      : html`<table id="queue"><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}<th scope="col" class="num">${w.amount}</th><th scope="col">${WORK_WORDS[v.lang].assignee}</th></tr></thead>
<tbody>${rows.map((r) => row(v, r, now, policy))}</tbody></table>`;
  const bulk = may(v.person.role, 'exception.comment') ? bulkForm(v, q, users) : '';
  return html`${filterForm(v, q, result.filter)}${body}${paging}${bulk}`;
}
