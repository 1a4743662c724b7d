import type { Command } from 'commander';
import { allJobs } from '../../../jobs/index';
import { secretValues } from '../../config/env';
import { createScheduler } from '../../scheduler/scheduler';
import { Interrupted } from '../../errors';
import { UsageError } from '../errors';
import { withRuntime } from '../runtime';
import { boundStop, stopBounds } from '../shutdown';

export function register(program: Command): void {
  program
    .command('run')
    .description(
      'run one scheduled job now (recorded in job_runs as a manual run; never overlaps a run of the same job)',
    )
    .argument('<job>', 'nightly-reconciliation, monthly-statements, hourly-healing or alerts (`recon jobs` lists them)')
    .action(async (name: string) => {
      await withRuntime(async (rt, signal) => {
        const jobs = allJobs({ config: rt.config, sql: rt.sql, store: rt.store, log: rt.log });
        if (!jobs.some((j) => j.name === name))
          throw new UsageError(`unknown job ${JSON.stringify(name)}; jobs: ${jobs.map((j) => j.name).join(', ')}`);
        const scheduler = createScheduler({
          jobs,
          sql: rt.sql,
          timezone: rt.config.timezone,
          log: rt.log,
          secrets: secretValues(rt.config),
        });
        // a job waiting on PostgreSQL never sees its signal: stopped within the bounds recon project has
        const disarm = boundStop(rt.sql, signal, rt.log, stopBounds({ graceMs: 10_000, hardMs: 5_000 }), 'recon run');
        const o = await scheduler.runNow(name, { signal }).finally(disarm);
        switch (o.status) {
          case 'succeeded':
            process.stdout.write(`${name}: succeeded\n${JSON.stringify(o.counters, null, 2)}\n`);
            break;
          case 'failed':
            // stopped by SIGINT/SIGTERM: interrupted (130), recorded as failed and run again, not "a job run failed"
            if (signal.aborted)
              throw new Interrupted(`${name} interrupted before it finished (${o.error}): run it again`);
            process.stdout.write(`${name}: failed: ${o.error}\n`);
            process.exitCode = 1;
            break;
          case 'skipped':
            process.stdout.write(`${name}: not run: another run of this job is in progress\n`);
            process.exitCode = 3;
            break;
          case 'already-done':
            process.stdout.write(`${name}: already run for ${o.scheduledFor.toISOString()}\n`);
            break;
        }
      });
    });
}
