import { DECISIONS } from '../../events/audit-events';
import { HAND_REASONS } from '../../events/exception-events';
import { type BulkOutcome, changesDigest } from '../../exceptions/bulk';
import { type Html, html } from '../html';
import { WORK_WORDS } from '../i18n-work';
import { csrfField, type View } from '../layout';

/**
 * Bulk actions (docs/console.md, "Bulk actions"): the form under the queue posts the queue's filter, the action
 * and its required reason; the answer is first a dry run (what would change, what would be skipped and why),
 * with a second form to apply exactly that.
 */

const FILTER_KEYS = [
  'leg',
  'type',
  'status',
  'assignee',
  'severity',
  'sub_merchant',
  'currency',
  'min_amount',
  'older_than_days',
];
const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/**
 * The bulk form under the queue, carrying the queue's filter; an empty status too, which is the queue's "any"
 * (no status at all is its default, open: queue.ts parseQueueFilter).
 */
export function bulkForm(v: View, q: URLSearchParams, users: readonly { id: string; name: string }[]): Html {
  const t = WORK_WORDS[v.lang];
  const opts = (xs: readonly string[]) => xs.map((x) => html`<option value="${x}">${x}</option>`);
  return html`<section aria-labelledby="bulk-h"><h2 id="bulk-h">${t.bulk}</h2>
<form method="post" action="/console/exceptions/bulk" class="bulk">${csrfField(v)}
${FILTER_KEYS.filter((k) => q.get(k) || (k === 'status' && q.has(k))).map((k) => hidden(k, q.get(k)!))}
<label>${t.bulkAction}<select name="bulk_action">${opts(['comment', 'assign', 'resolve', 'accept'])}</select></label>
<label>${t.assignee}<select name="to"><option value=""></option>${users.map((u) => html`<option value="${u.id}">${u.name} (${u.id})</option>`)}</select></label>
<label>${t.reasonCode}<select name="reasonCode"><option value=""></option>${opts(HAND_REASONS)}</select></label>
<label>${t.decision}<select name="decision"><option value=""></option>${opts(DECISIONS)}</select></label>
<label>${t.bulkReason}<input name="reason" required maxlength="4000"></label>
<button type="submit">${t.preview}</button></form></section>`;
}

/** The outcome of a bulk POST: the preview with its confirm form, or what was applied. */
export function bulkPage(v: View, form: URLSearchParams, o: BulkOutcome): Html {
  const t = WORK_WORDS[v.lang];
  const keep = [...form.entries()].filter(([k]) => k !== '_csrf' && k !== 'confirm' && k !== 'preview');
  const changes = html`<h2>${o.dryRun ? t.willChange : t.changed} (${o.changes.length})</h2>
<ul id="bulk-changes">${o.changes.map((c) => html`<li><a href="/console/exceptions/${c.id}">${c.id}</a>: ${c.summary}${c.inDoubt ? html` (<span class="num">${c.inDoubt}</span>)` : ''}</li>`)}</ul>
<h2>${t.skipped} (${o.skipped.length})</h2>
<ul id="bulk-skipped">${o.skipped.slice(0, 200).map((s) => html`<li>${s.id}: ${s.reason}</li>`)}</ul>`;
  if (!o.dryRun || o.changes.length === 0) return changes;
  return html`${changes}<form method="post" action="/console/exceptions/bulk">${csrfField(v)}
${keep.map(([k, val]) => hidden(k, val))}${hidden('preview', changesDigest(o.changes))}${hidden('confirm', '1')}<button type="submit">${t.confirm}</button></form>`;
}
