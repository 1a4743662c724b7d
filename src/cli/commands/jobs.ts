import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { allJobs } from '../../../jobs/index';
import { lastRuns, listRuns } from '../../scheduler/job-runs';
import { createScheduler } from '../../scheduler/scheduler';
import { positiveWhole } from '../options';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  program
    .command('jobs')
    .description('list the scheduled jobs: schedule (RECON_CRON_*), last run and next run time in RECON_TIMEZONE')
    .option('--history [n]', 'also list the last n runs (default 20)')
    .action(async (opts: { history?: string | boolean }) => {
      await withRuntime(async (rt) => {
        const tz = rt.config.timezone;
        const local = (d: Date | null | undefined) =>
          d ? DateTime.fromJSDate(d, { zone: tz }).toFormat('yyyy-MM-dd HH:mm:ss ZZ') : '-';
        const jobs = allJobs({ config: rt.config, sql: rt.sql, store: rt.store, log: rt.log });
        const scheduler = createScheduler({ jobs, sql: rt.sql, timezone: tz });
        const last = await lastRuns(
          rt.sql,
          jobs.map((j) => j.name),
        );
        process.stdout.write(`jobs (time zone ${tz})\n`);
        for (const s of scheduler.schedules()) {
          const l = last.get(s.name);
          process.stdout.write(
            `${s.name}\n    ${s.description}\n    schedule  ${s.cron}\n    next run  ${local(s.nextRun)}\n`,
          );
          process.stdout.write(
            l
              ? `    last run  ${l.status} (${l.trigger}, attempt ${l.attempt}) scheduled ${local(l.scheduledFor)}, started ${local(l.startedAt)}, finished ${local(l.finishedAt)}${l.error ? `\n    error     ${l.error}` : ''}\n`
              : '    last run  never\n',
          );
        }
        if (opts.history !== undefined) {
          const limit = typeof opts.history === 'string' ? positiveWhole('--history', opts.history) : 20;
          process.stdout.write('\nrecent runs\n');
          for (const r of await listRuns(rt.sql, { limit })) {
            process.stdout.write(
              `  ${local(r.scheduledFor)}  ${r.job.padEnd(24)} ${r.status.padEnd(9)} ${r.trigger.padEnd(8)} attempt ${r.attempt}  ${r.worker}  ${r.error ?? JSON.stringify(r.counters)}\n`,
            );
          }
        }
      });
    });
}
