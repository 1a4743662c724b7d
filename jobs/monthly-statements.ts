import { previousMonth } from '../src/export/nightly/report';
import { issueStatements } from '../src/export/statements/issue';
import { refusedError } from '../src/export/statements/oversize';
import { runProjections } from '../src/projector/runner';
import { applySubMerchantDirectory } from '../src/ingest/sub-merchant-directory';
import type { JobDefinition } from '../src/scheduler/scheduler';
import type { JobDeps } from './job-deps';

/**
 * Monthly: catches the projections up, then issues the previous month's statements (in the business zone,
 * relative to the scheduled time, so a retry a day later still issues the same month) into RECON_OUT_DIR.
 */
export function monthlyStatementsJob(deps: JobDeps): JobDefinition {
  return {
    name: 'monthly-statements',
    description: "the previous month's payout statements and Payouts index, cut at the journal's checkpoint",
    cron: deps.config.schedules.monthly,
    async run(ctx) {
      const { config } = deps;
      // The directory in force before anything is judged: a changed file is a new version, a malformed one fails the run.
      const directory = await applySubMerchantDirectory({
        store: deps.store,
        source: config.subMerchantsPath,
        log: ctx.log,
      });
      const month = previousMonth(ctx.scheduledFor, config.timezone);
      await runProjections(
        {
          sql: deps.sql,
          store: deps.store,
          log: ctx.log,
          timezone: config.timezone,
          graceHours: config.graceHours,
          bank: config.bank,
        },
        { signal: ctx.signal },
      );
      // the runner stops between batches on a stop and returns: no statements cut from views not caught up
      ctx.signal.throwIfAborted();
      const r = await issueStatements(
        { sql: deps.sql, store: deps.store, log: ctx.log, timezone: config.timezone },
        { month, outDir: config.outDir, signal: ctx.signal },
      );
      // the others are issued; a statement left out fails the run, so that it is alerted and tried again
      if (r.refused?.length) throw refusedError(month, r.refused, r.statements);
      return {
        month,
        position: r.position,
        figuresSha256: r.figuresSha256,
        statements: r.statements,
        lines: r.lines,
        files: r.files.map((f) => f.name),
        runId: r.runId,
        ...(directory
          ? { subMerchantDirectory: { path: directory.path, rows: directory.rows, version: directory.version } }
          : {}),
      };
    },
  };
}
