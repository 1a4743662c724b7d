import type { Command } from 'commander';
import { runWorker } from '../worker';
import { UsageError } from '../errors';
import { loadProjections } from '../../projector/runner';
import { withRuntime } from '../runtime';

interface StartOptions {
  port: string;
  host: string;
  scheduler: boolean;
  projections: boolean;
  only?: string;
  maxProjections?: string;
}

export function register(program: Command): void {
  program
    .command('start')
    .summary('run the long-running worker (receiver, auditor API, live projections, scheduler)')
    .description(
      'run the long-running worker: applies migrations, serves the webhook receiver (POST /webhooks/<pos_id>) and\n' +
        'the read-only auditor API (GET /api/discrepancies, /api/operations/:paymentId, bearer RECON_AUDITOR_TOKEN)\n' +
        'on one port, keeps the projections live, and runs the scheduled jobs (RECON_CRON_*). Logs are JSON lines\n' +
        'on stderr. SIGTERM/SIGINT: stop accepting, finish requests and running jobs, flush, exit 0; still running\n' +
        '15 s later (RECON_STOP_GRACE_MS), its database queries are cancelled; 10 s after that it exits 130.\n' +
        'GET /readyz: 200 ready, 200 degraded (events set aside by a projection; ?strict: 503), 503 unavailable.',
    )
    .option('--port <N>', 'port of the webhook receiver and auditor API', '8080')
    .option('--host <ADDRESS>', 'address to listen on', '127.0.0.1')
    .option('--no-scheduler', 'do not run scheduled jobs in this worker')
    .option('--no-projections', 'do not keep projections live in this worker')
    .option(
      '--only <names>',
      'keep only these projections live in this worker (comma-separated); the others are left to other workers',
    )
    .option(
      '--max-projections <n>',
      'keep at most this many projections live in this worker; other workers on the database take the rest\n' +
        '(each worker takes the projections no other worker holds, and those of a worker that stops or dies)',
    )
    .action(async (opts: StartOptions) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`--port: expected 0..65535, got ${opts.port}`);
      const max = opts.maxProjections === undefined ? undefined : Number(opts.maxProjections);
      if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 1000))
        throw new UsageError(`--max-projections: expected an integer from 1 to 1000, got ${opts.maxProjections}`);
      const only = opts.only
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (only) {
        const known = (await loadProjections()).map((p) => p.name);
        const unknown = only.filter((n) => !known.includes(n));
        if (unknown.length > 0)
          throw new UsageError(`--only: unknown projection ${unknown.join(', ')} (known: ${known.join(', ')})`);
      }
      await withRuntime(
        (rt, signal) =>
          runWorker(rt, signal, {
            port,
            host: opts.host,
            scheduler: opts.scheduler,
            projections: opts.projections,
            share: { ...(only ? { names: only } : {}), ...(max ? { max } : {}) },
          }),
        { maxConnections: 20, subMerchants: true },
      );
    });
}
