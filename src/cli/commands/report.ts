import type { Command } from 'commander';
import { previousDay, writeNightlyReportFor } from '../../export/nightly-report';
import { ensureOutDir } from '../../export/out-dir';
import { calendarDay, outDirOption } from '../options';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  const report = program.command('report').description('reconciliation reports');
  report
    .command('nightly')
    .description(
      'write the nightly reconciliation report of a business day (per source totals, matching, discrepancies, job facts)',
    )
    .option('--date <YYYY-MM-DD>', 'business day in RECON_TIMEZONE (default: yesterday)')
    .option('--out <dir>', 'output directory (default: RECON_OUT_DIR)')
    .action(async (opts: { date?: string; out?: string }) => {
      if (opts.date !== undefined) calendarDay('--date', opts.date);
      const out = opts.out !== undefined ? outDirOption('--out', opts.out) : undefined;
      await withRuntime(async (rt) => {
        const date = opts.date ?? previousDay(new Date(), rt.config.timezone);
        const { file, data } = await writeNightlyReportFor(
          { sql: rt.sql, store: rt.store },
          {
            date,
            timezone: rt.config.timezone,
            graceHours: rt.config.graceHours,
            outDir: out ?? ensureOutDir(rt.config.outDir, 'RECON_OUT_DIR'),
          },
        );
        const day = data.matching.find((m) => m.scope === 'day');
        process.stdout.write(`nightly report ${date} (${rt.config.timezone}): ${file}\n`);
        process.stdout.write(
          `  operations ${day?.operations ?? 0}, matched ${day?.matched ?? 0}, unmatched ${day?.unmatched ?? 0}, open discrepancies ${data.open.length}\n`,
        );
      });
    });
}
