import { maskPans } from '../../input-rules';
import type { PayoutRun } from '../../payout-runs/runs';
import { totalsOf } from '../../payout-runs/runs';
import { may } from '../../people/roles';
import { type Html, html } from '../html';
import { money, when } from '../i18n';
import { WORK_WORDS } from '../i18n-work';
import { csrfField, type View } from '../layout';

/**
 * Payout runs (docs/console.md, "Payout runs"): the list with a form to draft a month's run, and a run with its
 * lines, what it leaves out and why, the approval form (approvers) and its payment file once approved.
 */

export type Message = { readonly ok: boolean; readonly text: string } | null;

export const messageOf = (v: View, m: Message): Html | string => {
  const t = WORK_WORDS[v.lang];
  if (!m) return '';
  return m.ok
    ? html`<p role="status" class="done">${t.done}: ${m.text}</p>`
    : html`<p role="alert" class="error">${t.refused}: ${maskPans(m.text)}</p>`;
};

const totals = (v: View, r: PayoutRun) =>
  totalsOf(r).map((x) => html`<div>${money(x.amount, x.currency, v.lang)} (${x.count})</div>`);

export function payoutRunsPage(v: View, runs: readonly PayoutRun[], month: string, m: Message): Html {
  const t = WORK_WORDS[v.lang];
  const draft = may(v.person.role, 'payout-run.create')
    ? html`<form method="post" action="/console/payout-runs/draft" id="draft">${csrfField(v)}
<label>${t.month}<input name="month" value="${month}" pattern="\\d{4}-\\d{2}" size="8" required></label>
<button type="submit">${t.draft}</button></form>`
    : '';
  const table = runs.length
    ? html`<table id="runs"><thead><tr><th scope="col">${t.run}</th><th scope="col">${t.month}</th>
<th scope="col">${t.state}</th><th scope="col" class="num">${t.totals}</th><th scope="col">${t.draftedBy}</th>
<th scope="col">${t.approvedBy}</th></tr></thead><tbody>
${runs.map(
  (r) => html`<tr><td><a href="/console/payout-runs/${r.id}">${r.id}</a></td><td>${r.month}</td><td>${r.status}</td>
<td class="num">${totals(v, r)}</td><td>${r.draftedBy}, ${when(r.draftedAt, v.zone, v.lang)}</td>
<td>${r.approvedBy ? html`${r.approvedBy}, ${when(r.approvedAt, v.zone, v.lang)}` : ''}</td></tr>`,
)}
</tbody></table>`
    : html`<p>${t.noRuns}</p>`;
  return html`${messageOf(v, m)}${table}${draft}`;
}

export function payoutRunPage(v: View, r: PayoutRun, m: Message): Html {
  const t = WORK_WORDS[v.lang];
  const lines = html`<table id="lines"><caption>${t.lines}</caption><thead><tr><th scope="col">${v.w.subMerchant}</th>
<th scope="col">${t.creditor}</th><th scope="col">${t.account}</th><th scope="col">${t.reference}</th>
<th scope="col" class="num">${v.w.amount}</th></tr></thead><tbody>
${r.lines.map(
  (
    l,
  ) => html`<tr><td>${l.subMerchantId}</td><td class="text">${l.creditorName}</td><td>${l.creditorAccount}${l.creditorAgent ? ` (${l.creditorAgent})` : ''}</td>
<td>${l.reference}</td><td class="num">${money(BigInt(l.amount), l.currency, v.lang)}</td></tr>`,
)}</tbody></table>`;
  const leftOut = r.leftOut.length
    ? html`<table id="left-out"><caption>${t.leftOut}</caption><thead><tr><th scope="col">${v.w.subMerchant}</th>
<th scope="col">${t.reference}</th><th scope="col">${t.reason}</th><th scope="col" class="num">${v.w.amount}</th></tr></thead><tbody>
${r.leftOut.map(
  (l) => html`<tr><td>${l.subMerchantId}</td><td>${l.reference ?? ''}</td><td>${l.reason}</td>
<td class="num">${money(BigInt(l.amount), l.currency, v.lang)}</td></tr>`,
)}</tbody></table>`
    : '';
  const approve =
    r.status === 'draft' && may(v.person.role, 'payout-run.approve')
      ? html`<form method="post" action="/console/payout-runs/${r.id}/approve" id="approve">${csrfField(v)}
<button type="submit">${t.approveRun}</button></form>`
      : '';
  const file =
    (r.status === 'approved' || r.status === 'sent') && may(v.person.role, 'payout-run.send')
      ? html`<p><a href="/console/payout-runs/${r.id}/pain.001" download hx-boost="false">${t.paymentFile}</a></p>`
      : '';
  const facts = html`<dl class="facts"><dt>${t.month}</dt><dd>${r.month}</dd><dt>${t.state}</dt><dd>${r.status}</dd>
<dt>${t.totals}</dt><dd class="num">${totals(v, r)}</dd><dt>${t.draftedBy}</dt><dd>${r.draftedBy}, ${when(r.draftedAt, v.zone, v.lang)}</dd>
<dt>${t.approvedBy}</dt><dd>${r.approvedBy ?? ''}</dd><dt>${t.executionDate}</dt><dd>${r.executionDate ?? ''}</dd></dl>`;
  return html`${messageOf(v, m)}${facts}${approve}${file}${lines}${leftOut}`;
}
