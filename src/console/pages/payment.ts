import type { Explanation } from '../../reconciliation/explain';
import { type Html, html } from '../html';
import { when } from '../i18n';
import { type View, table } from '../layout';

/**
 * Payment: what `recon explain` shows (src/reconciliation/explain.ts), as pages: the timeline of every event
 * about the payment in commit order (register, period, webhooks, order, bank, decisions), its operations and
 * receivers, its discrepancies, and every recon.* row that names it (journal entries, statement lines).
 * Everything shown is escaped text; the sources' own fields are shown as they came.
 */

const cell = (x: unknown): string =>
  x === null || x === undefined
    ? ''
    : typeof x === 'object'
      ? JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
      : String(x);

/** A list of rows with whatever columns they have (the views' own names as headers). */
function rowsTable(caption: string, rows: readonly Record<string, unknown>[], empty: string): Html {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return table(
    caption,
    columns,
    rows.map((r) => html`<tr>${columns.map((c) => html`<td class="text">${cell(r[c])}</td>`)}</tr>`),
    empty,
  );
}

export function paymentForm(v: View, ref: string): Html {
  return html`<form method="get" action="/console/payment" class="filters" role="search">
<label>${v.w.paymentId}<input name="ref" value="${ref}" maxlength="256" required></label>
<button type="submit">${v.w.show}</button></form>`;
}

export function paymentPage(v: View, x: Explanation): Html {
  const w = v.w;
  if (x.payments.length === 0 && !x.order) return html`${paymentForm(v, x.query)}<p>${w.notFound}</p>`;
  const events = x.events.map(
    (e) => html`<tr><td>${when(e.at, v.zone, v.lang)}</td><td>${e.type}</td><td class="text">${e.stream}</td>
<td class="text">${e.summary}</td><td>${e.position}</td></tr>`,
  );
  const discrepancies = x.discrepancies.map(
    (d) => html`<tr><td>${d.type}</td><td>${d.status}</td><td>${when(d.detected_at, v.zone, v.lang)}</td>
<td>${when(d.resolved_at ?? d.accepted_at, v.zone, v.lang)}</td><td class="text">${d.receiver_name ?? ''}</td></tr>`,
  );
  const related = Object.entries(x.related).map(([view, rows]) => rowsTable(`${w.related}: ${view}`, rows, w.noRows));
  const orderLine = x.order ? rowsTable(w.order, [x.order.order], w.noRows) : '';
  return html`${paymentForm(v, x.query)}${orderLine}
${table(w.timeline, [w.occurred, w.type, 'stream', w.reason, 'position'], events, w.noRows)}
${rowsTable(w.operations, x.operations, w.noRows)}
${rowsTable(w.receiver, x.receivers, w.noRows)}
${table(w.discrepancies, [w.type, w.status, w.detected, w.finished, w.receiver], discrepancies, w.noRows)}
${related}`;
}
