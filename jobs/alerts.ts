import { type AlertDeps, evaluateAlerts } from '../src/alerts/evaluate';
import { type Config, secretValues } from '../src/config/env';
import { EMPTY_ALERTS_CONFIG } from '../src/config/alerts';
import type { Sql } from '../src/db/connect';
import type { Logger } from '../src/log';
import type { JobDefinition } from '../src/scheduler/scheduler';
import type { EventStore } from '../src/store/types';
import type { JobDeps } from './job-deps';

/**
 * The alerts' evaluation as a job (docs/exceptions.md, "Alerts"): on RECON_CRON_ALERTS, and right after every
 * nightly run (so that what the night found is told at once, not at the next tick).
 */

export function alertDepsFrom(
  deps: { config: Config; sql: Sql; store: EventStore; log: Logger },
  now?: () => Date,
): AlertDeps {
  return {
    sql: deps.sql,
    store: deps.store,
    log: deps.log,
    config: deps.config.alerts ?? EMPTY_ALERTS_CONFIG,
    timezone: deps.config.timezone,
    projects: deps.config.projects.map((p) => ({ name: p.name, posId: p.posId })),
    channelDeps: { mail: deps.config.mail },
    secrets: secretValues(deps.config),
    ...(now ? { now } : {}),
  };
}

const countersOf = (r: Awaited<ReturnType<typeof evaluateAlerts>>) => ({
  raised: r.raised.length,
  summary: r.summary,
  sent: r.deliveries.filter((d) => d.outcome === 'sent').length,
  failed: r.deliveries.filter((d) => d.outcome === 'failed').length,
});

export function alertsJob(deps: JobDeps): JobDefinition {
  return {
    name: 'alerts',
    description: 'raise the alerts the rules call for, once each, and deliver those due (webhook, Slack, e-mail)',
    cron: deps.config.schedules.alerts ?? '*/15 * * * *',
    async run(ctx) {
      if ((deps.config.alerts ?? EMPTY_ALERTS_CONFIG).rules.length === 0)
        return { skipped: 'no alert rules configured' };
      return countersOf(await evaluateAlerts(alertDepsFrom({ ...deps, log: ctx.log }, ctx.now)));
    },
  };
}

/**
 * The nightly job followed by an evaluation of the alerts when it succeeded. An evaluation that fails is logged
 * and left to the alerts job's next tick: it does not make the nightly run a failure.
 */
export function thenAlerts(job: JobDefinition, deps: JobDeps): JobDefinition {
  return {
    ...job,
    async run(ctx) {
      const counters = await job.run(ctx);
      if ((deps.config.alerts ?? EMPTY_ALERTS_CONFIG).rules.length === 0) return counters;
      try {
        const r = await evaluateAlerts(alertDepsFrom({ ...deps, log: ctx.log }, ctx.now));
        return { ...(counters ?? {}), alerts: countersOf(r) };
      } catch (e) {
        ctx.log.error('alerts not evaluated after the nightly run', { error: e });
        return { ...(counters ?? {}), alerts: 'failed (see the log)' };
      }
    },
  };
}
