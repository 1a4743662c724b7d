import path from 'node:path';
import type { Command } from 'commander';
import { issueStatements, statementRuns } from '../../export/statements';
import { parsePosition } from '../../store/types';
import { UsageError, withJudgingRuntime } from '../runtime';
import { addSendCommand } from '../statements-send';

export function register(program: Command): void {
  const statements = program.command('statements');
  addSendCommand(statements);
  statements
    .description(
      "write the monthly payout statements (one workbook per sub-merchant) and the Payouts index, cut at the journal's checkpoint, and record the run",
    )
    .option('--month <YYYY-MM>', 'month in the business time zone (RECON_TIMEZONE)')
    .option('--sub-merchant <id>', 'only this sub-merchant (the Payouts index is then not rewritten)')
    .option('--out <dir>', 'output directory (default: RECON_OUT_DIR)')
    .option('--at-position <commit/prepare>', 'cut at this event-store position (regenerate a statement already sent)')
    .option('--runs', 'list the statement runs recorded (of --month if given) instead of writing')
    .action(
      async (opts: { month?: string; subMerchant?: string; out?: string; atPosition?: string; runs?: boolean }) => {
        if (opts.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month))
          throw new UsageError(`--month: expected YYYY-MM, got ${JSON.stringify(opts.month)}`);
        let atPosition: ReturnType<typeof parsePosition> | undefined;
        try {
          atPosition = opts.atPosition ? parsePosition(opts.atPosition) : undefined;
        } catch (e) {
          throw new UsageError(`--at-position: ${(e as Error).message}`);
        }
        await withJudgingRuntime(async (rt, signal) => {
          if (opts.runs) {
            for (const r of await statementRuns(rt.sql, opts.month ? { month: opts.month } : {})) {
              process.stdout.write(
                `${r.issuedAt.toISOString()}  ${r.month}  position ${r.position}  figures ${r.figuresSha256}  ${r.statements} statements${r.subMerchantId ? ` (${r.subMerchantId})` : ''}  run ${r.runId}\n`,
              );
              for (const f of r.files) process.stdout.write(`    ${f.name}  sha256 ${f.sha256}  ${f.bytes} bytes\n`);
            }
            return;
          }
          if (!opts.month) throw new UsageError('--month is required (YYYY-MM)');
          const outDir = path.resolve(opts.out ?? rt.config.outDir);
          const r = await issueStatements(
            { sql: rt.sql, store: rt.store, log: rt.log, timezone: rt.config.timezone },
            {
              month: opts.month,
              outDir,
              signal,
              ...(opts.subMerchant ? { subMerchantId: opts.subMerchant } : {}),
              ...(atPosition ? { atPosition } : {}),
              onProgress: (p) => {
                if (process.stderr.isTTY) process.stderr.write(`\r  statements ${p.done}/${p.total}, ${p.lines} lines`);
              },
            },
          );
          if (process.stderr.isTTY) process.stderr.write('\n');
          process.stdout.write(`statements ${r.month} (${r.timezone}) cut at position ${r.position}\n`);
          process.stdout.write(
            `  figures sha-256 ${r.figuresSha256}${r.newEvent ? '' : ' (same run already recorded)'}\n`,
          );
          process.stdout.write(`  ${r.statements} statements, ${r.lines} operation lines, run ${r.runId}\n`);
          for (const f of r.files) process.stdout.write(`  ${f.path}  sha256 ${f.sha256}\n`);
        });
      },
    );
}
