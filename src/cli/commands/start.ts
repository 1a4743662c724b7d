import type { Command } from 'commander';
import { runWorker } from '../worker';
import { UsageError } from '../errors';
import { withRuntime } from '../runtime';

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
    .action(async (opts: { port: string; host: string; scheduler: boolean; projections: boolean }) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`--port: expected 0..65535, got ${opts.port}`);
      await withRuntime(
        (rt, signal) =>
          runWorker(rt, signal, { port, host: opts.host, scheduler: opts.scheduler, projections: opts.projections }),
        { maxConnections: 20, subMerchants: true },
      );
    });
}
