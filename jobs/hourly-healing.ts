import { healMissingWebhooks } from '../src/ingest/heal';
import type { JobDefinition } from '../src/scheduler/scheduler';
import type { JobDeps } from './job-deps';

/**
 * Hourly: asks the PSP to re-send the webhooks of final operations older than the grace period that
 * never had one (each asked once, recorded as WebhookResendRequested).
 */
export function hourlyHealingJob(deps: JobDeps): JobDefinition {
  return {
    name: 'hourly-healing',
    description: 'ask the PSP to re-send missing webhooks of final operations past the grace period',
    cron: deps.config.schedules.healing,
    async run(ctx) {
      if (deps.config.projects.length === 0) return { skipped: 'no PSP project configured' };
      const r = await healMissingWebhooks(
        {
          sql: deps.sql,
          store: deps.store,
          projects: deps.config.projects,
          log: ctx.log,
          graceHours: deps.config.graceHours,
          timezone: deps.config.timezone,
          bank: deps.config.bank,
          pspTimeoutMs: deps.config.pspTimeoutMs,
          resendConcurrency: deps.config.healConcurrency,
        },
        { now: ctx.now(), signal: ctx.signal },
      );
      // as `recon heal` exits 1: a run whose requests failed is a failed run (recorded, alerted, tried again);
      // recorded `succeeded`, a PSP refusing every re-send hour after hour was told to nobody (review 13)
      if (r.failed > 0)
        throw new Error(
          `${r.failed} of ${r.candidates} webhook re-send requests failed (${r.requested} requested); asked again at the next run`,
        );
      return { candidates: r.candidates, requested: r.requested, failed: r.failed };
    },
  };
}
