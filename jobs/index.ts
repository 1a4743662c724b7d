import type { JobDefinition } from '../src/scheduler/scheduler';
import { alertsJob, thenAlerts } from './alerts';
import { hourlyHealingJob } from './hourly-healing';
import { monthlyStatementsJob } from './monthly-statements';
import type { JobDeps } from './job-deps';
import { nightlyReconciliationJob } from './nightly-reconciliation';

export type { JobDeps } from './job-deps';

/** Every scheduled job, with the schedules from the configuration (RECON_CRON_*). */
export function allJobs(deps: JobDeps): JobDefinition[] {
  return [
    thenAlerts(nightlyReconciliationJob(deps), deps),
    monthlyStatementsJob(deps),
    hourlyHealingJob(deps),
    alertsJob(deps),
  ];
}
