import type { Command } from 'commander';
import { ensureOutDir } from '../../export/out-dir';
import { issueStatements, runNote, statementRuns, type IssueResult } from '../../export/statements/issue';
import { refusedError } from '../../export/statements/oversize';
import { runProjections } from '../../projector/runner';
import { parsePosition } from '../../store/types';
import { UsageError } from '../errors';
import { runnerDepsOf, withJudgingRuntime } from '../runtime';
import { addSendCommand } from '../statements-send';
import { outDirOption, plausibleMonth } from '../options';

interface StatementOptions {
  month?: string;
  subMerchant?: string;
  out?: string;
  atPosition?: string;
  runs?: boolean;
  provisional?: boolean;
  rebaseTimezone?: boolean;
  catchUp?: boolean;
}

/** Progress on a terminal only: a pipe or a file gets the summary alone. */
export function progressWriter(stream: { isTTY?: boolean; write(text: string): unknown }) {
  return {
    update: (p: { done: number; total: number; lines: number }) => {
      if (stream.isTTY) stream.write(`\r  statements ${p.done}/${p.total}, ${p.lines} lines`);
    },
    end: () => {
      if (stream.isTTY) stream.write('\n');
    },
  };
}

/** What the run wrote, said in plain lines (stdout). */
export function statementSummary(r: IssueResult): string {
  const out = [
    `statements ${r.month} (${r.timezone}) cut at position ${r.position}${r.provisional ? ' — PROVISIONAL: the month has not ended; not recorded as issued' : ''}`,
    `  figures sha-256 ${r.figuresSha256}`,
    `  ${r.statements} statements, ${r.lines} operation lines${r.runId ? `, run ${r.runId}` : ''}`,
  ];
  const note = runNote(r);
  if (note) out.push(`  ${note}`);
  if (r.previousMonthNotIssued)
    out.push(
      `  the statement of ${r.previousMonthNotIssued} was never issued: statements open at the last one issued, or at the ledger`,
    );
  if (r.rebasedFrom) out.push(`  re-based from ${r.rebasedFrom} to ${r.timezone}`);
  for (const f of r.files) out.push(`  ${f.path}  sha256 ${f.sha256}`);
  return out.join('\n') + '\n';
}

export function register(program: Command): void {
  const statements = program.command('statements');
  addSendCommand(statements);
  statements
    .description(
      "write the monthly payout statements (a workbook and a PDF per sub-merchant) and the Payouts index, cut at the journal's checkpoint, and record the run",
    )
    .option('--month <YYYY-MM>', 'month in the business time zone (RECON_TIMEZONE); it must have ended')
    .option('--sub-merchant <id>', 'only this sub-merchant (the Payouts index is then not rewritten)')
    .option('--out <dir>', 'output directory (default: RECON_OUT_DIR)')
    .option('--at-position <commit/prepare>', 'cut at this event-store position (regenerate a statement already sent)')
    .option('--runs', 'list the statement runs recorded (of --month if given) instead of writing')
    .option('--provisional', 'a draft of a month not ended: marked PROVISIONAL, not recorded as issued')
    .option(
      '--rebase-timezone',
      'issue in RECON_TIMEZONE although earlier statements were issued in another zone (builds on them; once)',
    )
    .option('--no-catch-up', "cut at the journal's checkpoint as it is, without applying new events first")
    .action(async (opts: StatementOptions) => {
      if (opts.month !== undefined) plausibleMonth('--month', opts.month);
      if (!opts.runs && !opts.month) throw new UsageError('--month is required (YYYY-MM)');
      let atPosition: ReturnType<typeof parsePosition> | undefined;
      try {
        atPosition = opts.atPosition ? parsePosition(opts.atPosition) : undefined;
      } catch (e) {
        throw new UsageError(`--at-position: ${(e as Error).message}`);
      }
      const out = !opts.runs && opts.out !== undefined ? outDirOption('--out', opts.out) : undefined;
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
        // What was stored since the last projection run (a late sale, a decision to pay) belongs in the cut:
        // without it a changed month reads "unchanged" and its money stays unasked (found in review).
        if (!atPosition && opts.catchUp !== false) await runProjections(runnerDepsOf(rt), { signal });
        const progress = progressWriter(process.stderr);
        // A refusal (StatementRefused) is a usage error naming the option to give instead.
        const r = await issueStatements(
          {
            sql: rt.sql,
            store: rt.store,
            log: rt.log,
            timezone: rt.config.timezone,
            ...(rt.config.statements ? { statements: rt.config.statements } : {}),
            ...(rt.config.statementWorkers ? { workers: { count: rt.config.statementWorkers } } : {}),
          },
          {
            month: opts.month!,
            outDir: out ?? ensureOutDir(rt.config.outDir, 'RECON_OUT_DIR'),
            signal,
            provisional: opts.provisional ?? false,
            rebaseTimezone: opts.rebaseTimezone ?? false,
            ...(opts.subMerchant ? { subMerchantId: opts.subMerchant } : {}),
            ...(atPosition ? { atPosition } : {}),
            onProgress: progress.update,
          },
        );
        progress.end();
        process.stdout.write(statementSummary(r));
        // the others are issued; the command fails naming each statement left out and what to do
        if (r.refused?.length) throw refusedError(r.month, r.refused, r.statements);
      });
    });
}
