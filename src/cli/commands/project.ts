import type { Command } from 'commander';
import { Interrupted } from '../../errors';
import { printable } from '../../input-rules';
import {
  listQuarantine,
  loadProjections,
  projectionBuilds,
  rebuildProjection,
  defaultThreads,
  runProjections,
  shareProjections,
  threadSource,
  type Report,
  type RunnerDeps,
} from '../../projector/runner';
import { UsageError } from '../errors';
import { withJudgingRuntime, runnerDepsOf } from '../runtime';
import { boundStop, stopBounds } from '../shutdown';

/**
 * The exit status of a run that went to the head but left events set aside (quarantined): distinct from
 * success (0), from "some items failed" (1) and from the errors' kinds (2, 65, 69, 70, 78, 130), so that a
 * supervisor or a script sees that read models are missing events (docs/reliability.md, "Quarantine").
 */
export const EXIT_QUARANTINED = 3;

function print(report: Report): void {
  const rows = report.projections.map((p) => [
    p.name,
    `v${p.version}`,
    p.status + (p.wentLive ? ' (new build live)' : '') + (p.busy ? ' (busy: another runner holds it)' : ''),
    String(p.applied),
    String(p.totalApplied),
    p.position ?? '-',
  ]);
  const head = ['projection', 'version', 'status', 'applied now', 'applied total', 'position'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(head), ...rows.map(line)].join('\n') + '\n');
  process.stdout.write(`event store head: ${report.head ?? '(empty)'}\n`);
}

/** Says which events of the run's projections are set aside, on stderr; true when there are any. */
async function reportQuarantine(sql: RunnerDeps['sql'], names: readonly string[]): Promise<boolean> {
  const open = (await listQuarantine(sql)).filter((q) => names.includes(q.projection));
  if (open.length === 0) return false;
  const lines = open.map(
    (q) =>
      `  projection ${q.projection}: event ${q.eventId} (${q.eventType}, stream ${printable(q.stream, { oneLine: true })}, position ${q.position}), ` +
      `${q.attempts} attempt${q.attempts === 1 ? '' : 's'}: ${printable(q.error, { oneLine: true })}`,
  );
  process.stderr.write(
    `recon: ${open.length} event${open.length === 1 ? '' : 's'} could not be applied and ${open.length === 1 ? 'is' : 'are'} set aside (quarantined); ` +
      `the read models miss ${open.length === 1 ? 'it' : 'them'}. Fix the cause, then run recon quarantine retry (PROJECTION_QUARANTINE):\n${lines.join('\n')}\n`,
  );
  return true;
}

/** Projection names given on the command line are checked before the database starts. */
async function knownProjections([option, names]: [string, readonly string[]]): Promise<void> {
  if (names.length === 0) return;
  const known = (await loadProjections()).map((p) => p.name);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new UsageError(`${option}: unknown projection ${unknown.join(', ')} (known: ${known.join(', ')})`);
}

export function register(program: Command): void {
  program
    .command('project')
    .description(
      'catch every projection (read model) up with the event store and exit;\n' +
        '--rebuild [NAME] rebuilds one projection (or all) from zero beside the live build and swaps it in when caught up',
    )
    .option('--rebuild [name]', 'rebuild from zero (all projections when no name is given)')
    .option('--only <names>', 'comma-separated projection names to catch up')
    .option('--batch <n>', 'events per transaction', '1000')
    .option('--status', 'print the builds table and exit')
    .option(
      '--share',
      'share the projections with other workers on this database (recon project --share or recon start, here or on\n' +
        'other machines): take the free ones, wait for those another worker holds, take over those of a worker that dies',
    )
    .option('--max-projections <n>', 'with --share: at most this many projections at once in this worker')
    .option(
      '--threads <n>',
      'spread the projections over this many threads of this process, groups of about equal cost\n' +
        '(default 1, or RECON_PROJECTION_THREADS)',
    )
    .action(async (opts: ProjectOptions) => {
      const batchSize = integerOption('--batch', opts.batch, 100_000);
      const max =
        opts.maxProjections === undefined ? undefined : integerOption('--max-projections', opts.maxProjections, 1000);
      if (max !== undefined && !opts.share) throw new UsageError('--max-projections goes with --share');
      const threads = opts.threads === undefined ? undefined : integerOption('--threads', opts.threads, 64);
      if (threads !== undefined && opts.share) throw new UsageError('--threads goes without --share');
      if (opts.share && opts.rebuild !== undefined)
        throw new UsageError('--share carries builds on; start a rebuild with recon project --rebuild alone');
      const only = opts.only
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      await knownProjections(typeof opts.rebuild === 'string' ? ['--rebuild', [opts.rebuild]] : ['--only', only ?? []]);
      await withJudgingRuntime(async (rt, signal) => {
        boundStop(rt.sql, signal, rt.log, stopBounds({ graceMs: 10_000, hardMs: 5_000 }), 'recon project');
        if (opts.status) return printStatus(rt.sql);
        const deps: RunnerDeps = { ...runnerDepsOf(rt), threadSource: threadSource(rt.config, rt.sql) };
        const started = Date.now();
        const report = await runOrInterrupted(signal, () => {
          const names = only ? { names: only } : {};
          if (opts.rebuild !== undefined)
            return rebuildProjection(deps, opts.rebuild === true ? undefined : opts.rebuild, {
              batchSize,
              signal,
              threads: threads ?? rt.config.projectionThreads ?? defaultThreads(),
            });
          if (opts.share) return shareProjections(deps, { batchSize, signal, ...names, ...(max ? { max } : {}) });
          return runProjections(deps, { batchSize, signal, threads: threads ?? 1, ...names });
        });
        print(report);
        process.stdout.write(
          `done in ${((Date.now() - started) / 1000).toFixed(1)} s${signal.aborted ? ' (interrupted: resume with recon project)' : ''}\n`,
        );
        if (
          await reportQuarantine(
            rt.sql,
            report.projections.map((p) => p.name),
          )
        )
          process.exitCode = EXIT_QUARANTINED;
      });
    });
}

interface ProjectOptions {
  rebuild?: string | true;
  only?: string;
  batch: string;
  status?: boolean;
  share?: boolean;
  maxProjections?: string;
  threads?: string;
}

function integerOption(name: string, text: string, most: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > most)
    throw new UsageError(`${name} must be an integer from 1 to ${most} (got ${text})`);
  return n;
}

async function printStatus(sql: RunnerDeps['sql']): Promise<void> {
  for (const b of await projectionBuilds(sql)) {
    process.stdout.write(
      `${b.name}  v${b.version}  ${b.status}  ${b.schema}  applied ${b.eventsApplied}  position ${b.checkpoint ?? '-'}  timezone ${b.timezone ?? '-'}  grace ${b.graceHours ?? '-'} h  updated ${b.updatedAt.toISOString()}\n`,
    );
  }
}

async function runOrInterrupted(signal: AbortSignal, run: () => Promise<Report>): Promise<Report> {
  try {
    return await run();
  } catch (e) {
    // a query cancelled by the shutdown bound (src/cli/shutdown.ts) fails the run: it was interrupted
    if (signal.aborted) throw new Interrupted(`recon project interrupted: ${(e as Error).message}`);
    throw e;
  }
}
