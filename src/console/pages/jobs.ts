import type { JobRunRow } from '../../scheduler/job-runs';
import type { ScheduledJobInfo } from '../../scheduler/scheduler';
import { type Html, html } from '../html';
import { when } from '../i18n';
import { csrfField, type View, table } from '../layout';

/**
 * Jobs: each scheduled job with its schedule and next run, a "run now" button for those who may (`jobs.run`:
 * administrators; a POST with the session's CSRF token, checked again on the server), and the recent runs.
 */

export function jobsPage(
  v: View,
  jobs: readonly ScheduledJobInfo[],
  runs: readonly JobRunRow[],
  canRun: boolean,
  started: string | null,
): Html {
  const w = v.w;
  const rows = jobs.map(
    (j) => html`<tr><td>${j.name}</td><td class="text">${j.description}</td><td><code>${j.cron}</code></td>
<td>${when(j.nextRun, v.zone, v.lang)}</td>
${canRun ? html`<td><form method="post" action="/console/jobs/run">${csrfField(v)}<input type="hidden" name="job" value="${j.name}"><button type="submit" aria-label="${w.runNow}: ${j.name}">${w.runNow}</button></form></td>` : ''}</tr>`,
  );
  const history = runs.map(
    (
      r,
    ) => html`<tr><td>${r.job}</td><td>${r.status}</td><td>${r.trigger}</td><td>${when(r.scheduledFor, v.zone, v.lang)}</td>
<td>${when(r.startedAt, v.zone, v.lang)}</td><td>${when(r.finishedAt, v.zone, v.lang)}</td><td class="text">${r.error ?? ''}</td></tr>`,
  );
  const headers = [w.job, w.name, 'cron', w.scheduled, ...(canRun ? [w.runNow] : [])];
  return html`${started ? html`<p role="status" class="notice">${w.ran}: ${started}</p>` : ''}
${table(w.jobs, headers, rows, w.noRows)}
${table(w.history, [w.job, w.status, w.trigger, w.scheduled, w.started, w.finished, w.error], history, w.noRows)}`;
}
