import type { Command } from 'commander';
import { createProgressReporter } from '../../ingest/progress';
import type { SyncDeps, SyncReport } from '../../ingest/sync';
import { calendarDay } from '../options';
import { NotConfigured, UsageError } from '../errors';
import { withJudgingRuntime } from '../runtime';

export function register(program: Command): void {
  program
    .command('sync')
    .summary('read register reports and period transactions into the event store')
    .description(
      'read the PSP register reports and period transactions into the event store, in windows of at most 31 days\n' +
        '(days in RECON_TIMEZONE; --to is exclusive). Safe to interrupt and run again: nothing is duplicated.',
    )
    .option('--from <YYYY-MM-DD>', 'first day to read')
    .option('--to <YYYY-MM-DD>', 'day after the last one to read (exclusive)')
    .option('--pos <POS_ID...>', 'only these PSP projects (pos_id); default: every configured project')
    .option(
      '--incremental',
      'from the end of what was read without a gap minus RECON_LOOKBACK_DAYS (or from a failed window not read since, if earlier) up to now (the nightly job)',
    )
    .option(
      '--skip-completed',
      'skip windows already recorded as completed (resume a long backfill without re-reading)',
    )
    .action(
      async (opts: { from?: string; to?: string; pos?: string[]; incremental?: boolean; skipCompleted?: boolean }) => {
        if (opts.incremental && (opts.from || opts.to)) throw new UsageError('--incremental takes no --from/--to');
        if (!opts.incremental) {
          if (!opts.from || !opts.to) throw new UsageError('give --from and --to (YYYY-MM-DD), or --incremental');
          calendarDay('--from', opts.from);
          calendarDay('--to', opts.to);
          if (opts.from >= opts.to) throw new UsageError('--from must be before --to (--to is exclusive)');
        }
        // Loaded on use: `recon --help` stays fast and independent of the PSP client.
        const { syncIncremental, syncRange } = await import('../../ingest/sync');
        const report = await withJudgingRuntime(async (rt, signal) => {
          if (rt.config.projects.length === 0)
            throw new NotConfigured('no PSP project configured (PSP_* variables or RECON_CONFIG)');
          const deps: SyncDeps = {
            store: rt.store,
            projects: rt.config.projects,
            log: rt.log,
            timezone: rt.config.timezone,
            reportMaxWaitMs: rt.config.reportPollMaxWaitMs,
            pspTimeoutMs: rt.config.pspTimeoutMs,
            lookbackDays: rt.config.lookbackDays,
          };
          const progress = createProgressReporter({ log: rt.log });
          try {
            const common = { posIds: opts.pos, signal, onProgress: progress.update };
            return opts.incremental
              ? await syncIncremental(deps, common)
              : await syncRange(deps, { ...common, from: opts.from!, to: opts.to!, skipCompleted: opts.skipCompleted });
          } finally {
            progress.end();
          }
        });
        printReport(report);
        if (report.failed > 0) process.exitCode = 1;
      },
    );
}

function printReport(r: SyncReport): void {
  for (const w of r.windows) {
    const span = `${w.window.from} .. ${w.window.to}`;
    if (w.status === 'completed') {
      process.stdout.write(
        `${w.posId} ${span}: report ${w.reportId}, ${w.registerRecords} register (announced ${w.announcedCount}${w.countMismatch ? ', MISMATCH' : ''}), ` +
          `${w.periodRecords} period, ${w.rejected} rejected, ${w.appended} new events, ${w.durationMs} ms\n`,
      );
    } else if (w.status === 'skipped') process.stdout.write(`${w.posId} ${span}: already completed, skipped\n`);
    else process.stdout.write(`${w.posId} ${span}: FAILED (${w.reason}); it will be read again on the next run\n`);
  }
  process.stdout.write(
    `sync: ${r.completed} windows completed, ${r.failed} failed, ${r.skipped} skipped; ${r.records} records read, ${r.appended} new events, ${r.durationMs} ms\n`,
  );
}
