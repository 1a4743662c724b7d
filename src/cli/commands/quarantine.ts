import type { Command } from 'commander';
import { printable } from '../../input-rules';
import {
  listQuarantine,
  loadProjections,
  type QuarantinedEvent,
  retryQuarantined,
  type RunnerDeps,
} from '../../projector/runner';
import type { Runtime } from '../runtime';
import { UsageError } from '../errors';
import { withJudgingRuntime, runnerDepsOf } from '../runtime';

/**
 * `recon quarantine list|retry`: the events a projection could not apply and set aside (docs/reliability.md,
 * "Quarantine"); once the code or the data is fixed, `retry` applies them to the build that set them aside.
 */

/** Exit status of a retry that left events quarantined (as `recon project`'s, src/cli/commands/project.ts). */
const EXIT_STILL_QUARANTINED = 3;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function checked(opts: {
  projection?: string;
  event?: string;
}): Promise<{ projection?: string; eventId?: string }> {
  if (opts.projection !== undefined) {
    const known = (await loadProjections()).map((p) => p.name);
    if (!known.includes(opts.projection))
      throw new UsageError(`--projection: unknown projection ${opts.projection} (known: ${known.join(', ')})`);
  }
  if (opts.event !== undefined && !UUID.test(opts.event))
    throw new UsageError(`--event: expected an event id (a UUID), got ${JSON.stringify(opts.event)}`);
  return {
    ...(opts.projection !== undefined ? { projection: opts.projection } : {}),
    ...(opts.event !== undefined ? { eventId: opts.event.toLowerCase() } : {}),
  };
}

const json = (q: QuarantinedEvent) => ({
  projection: q.projection,
  build: q.build,
  position: q.position,
  stream: q.stream,
  eventId: q.eventId,
  eventType: q.eventType,
  error: q.error,
  firstTriedAt: q.firstTriedAt.toISOString(),
  lastTriedAt: q.lastTriedAt.toISOString(),
  attempts: q.attempts,
  status: q.status,
});

function table(rows: readonly QuarantinedEvent[]): string {
  const head = [
    'projection',
    'build',
    'position',
    'event',
    'type',
    'stream',
    'attempts',
    'status',
    'last tried',
    'error',
  ];
  const cells = rows.map((q) =>
    [
      q.projection,
      q.build,
      q.position,
      q.eventId,
      q.eventType,
      q.stream,
      String(q.attempts),
      q.status,
      q.lastTriedAt.toISOString(),
      q.error,
    ].map((c) => printable(c, { oneLine: true })),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...cells.map(line)].join('\n')}\n`;
}

const depsOf = (rt: Runtime): RunnerDeps => runnerDepsOf(rt);

export function register(program: Command): void {
  const q = program
    .command('quarantine')
    .summary('events a projection could not apply and set aside: list them, apply them again once fixed')
    .description(
      'the events a projection could not apply are set aside (quarantined) so that it goes on with the next\n' +
        'ones; recon project exits 3 and /readyz says degraded while any are waiting. list shows them, retry\n' +
        'applies them again once the code or the data is fixed (docs/reliability.md, "Quarantine").',
    );
  q.command('list')
    .description('list the events set aside by the projections (builds in use), in the order of the event log')
    .option('--projection <name>', 'only this projection')
    .option('--all', 'also the events already applied again (status retried)')
    .option('--format <format>', 'table or json', 'table')
    .action(async (opts: { projection?: string; all?: boolean; format: string }) => {
      if (!['table', 'json'].includes(opts.format))
        throw new UsageError(`--format must be table or json (got ${opts.format})`);
      const filter = await checked(opts);
      await withJudgingRuntime(async (rt) => {
        const rows = await listQuarantine(rt.sql, { ...filter, all: opts.all === true });
        if (opts.format === 'json') process.stdout.write(`${JSON.stringify(rows.map(json), null, 2)}\n`);
        else if (rows.length === 0) process.stdout.write('no event set aside\n');
        else process.stdout.write(table(rows));
      });
    });
  q.command('retry')
    .description(
      'apply the set-aside events again (after the code or the data is fixed), in the order of the event log: in\n' +
        'place for a projection whose rows are a function of each event, by a replay from zero beside the live\n' +
        'build for one whose rows depend on their order; applied ones are marked retried, the others stay quarantined',
    )
    .option('--projection <name>', 'only this projection')
    .option('--event <id>', 'only this event')
    .option(
      '--replay',
      'apply them by a replay from zero (a new build beside the live one) for every projection, not only for\n' +
        'those whose rows depend on the order of events (reconciliation, orders, settlement, payouts)',
    )
    .action(async (opts: { projection?: string; event?: string; replay?: boolean }) => {
      const filter = await checked(opts);
      await withJudgingRuntime(async (rt, signal) => {
        const r = await retryQuarantined(depsOf(rt), { ...filter, replay: opts.replay === true, signal });
        for (const x of r.retried)
          process.stdout.write(
            `applied: projection ${x.projection}, event ${x.eventId} (${x.eventType}, position ${x.position})\n`,
          );
        for (const x of r.failed)
          process.stderr.write(
            `still set aside: projection ${x.projection}, event ${x.eventId} (${x.eventType}, position ${x.position}): ${printable(x.error, { oneLine: true })}\n`,
          );
        process.stdout.write(`${r.retried.length} applied, ${r.failed.length} still set aside\n`);
        if (r.failed.length > 0) process.exitCode = EXIT_STILL_QUARANTINED;
      });
    });
}
