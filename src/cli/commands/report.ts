import type { Command } from 'commander';
import { exceptionPolicyOf } from '../../exceptions/policy';
import { DateTime } from 'luxon';
import { requireConfig } from '../../config/env';
import { ageingLines } from '../../export/nightly/open';
import { previousDay, writeNightlyReportFor } from '../../export/nightly/report';
import { ensureOutDir } from '../../export/out-dir';
import { UsageError } from '../errors';
import { calendarDay, outDirOption } from '../options';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  const report = program.command('report').description('reconciliation reports');
  report
    .command('nightly')
    .description(
      'write the nightly reconciliation report of a business day: the discrepancies open at its end (ageing, money in doubt, oldest, month to date), per source totals, matching, cash, job facts',
    )
    .option(
      '--date <YYYY-MM-DD>',
      'business day in RECON_TIMEZONE (default: yesterday); a past day shows what was open at its end',
    )
    .option('--out <dir>', 'output directory (default: RECON_OUT_DIR)')
    .action(async (opts: { date?: string; out?: string }) => {
      if (opts.date !== undefined) {
        calendarDay('--date', opts.date);
        // a day not begun has nothing to state: refused before the database starts
        const zone = requireConfig().timezone;
        const today = DateTime.now().setZone(zone).toISODate()!;
        if (opts.date > today)
          throw new UsageError(`--date ${opts.date} is after today (${today} in RECON_TIMEZONE ${zone})`);
      }
      const out = opts.out !== undefined ? outDirOption('--out', opts.out) : undefined;
      await withRuntime(async (rt) => {
        const date = opts.date ?? previousDay(new Date(), rt.config.timezone);
        const { file, data } = await writeNightlyReportFor(
          { sql: rt.sql, store: rt.store },
          {
            date,
            timezone: rt.config.timezone,
            policy: exceptionPolicyOf(rt.config.exceptions).policy,
            graceHours: rt.config.graceHours,
            outDir: out ?? ensureOutDir(rt.config.outDir, 'RECON_OUT_DIR'),
          },
        );
        const day = data.matching.find((m) => m.scope === 'day');
        process.stdout.write(`nightly report ${date} (${rt.config.timezone}): ${file}\n`);
        process.stdout.write(
          `  operations ${day?.operations ?? 0}, matched ${day?.matched ?? 0}, unmatched ${day?.unmatched ?? 0}, open discrepancies at the day's end ${data.open.length}\n`,
        );
        if (data.asOfDay) for (const line of ageingLines(data.asOfDay)) process.stdout.write(`  ${line}\n`);
      });
    });
}
