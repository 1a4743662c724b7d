import type { Command } from 'commander';
import { createHttpApp } from '../../http/http-app';
import { createWebhookReceiver } from '../../http/receiver';
import { storeReadiness } from '../../store/transaction-counter';
import { NotConfigured, UsageError } from '../errors';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  program
    .command('serve')
    .summary('run the webhook receiver (POST /webhooks/<pos_id>)')
    .description(
      'run the webhook receiver: POST /webhooks/<pos_id> (form fields data and signature), GET /healthz, /readyz, /metrics.\n' +
        'Answers 200 only once the webhook is stored; 401 bad signature, 400 malformed, 413 too large, 404 unknown pos_id,\n' +
        '403 sender not in WEBHOOK_ALLOWED_IPS, 429 too many rejected requests, 503 store unavailable. SIGTERM finishes\n' +
        'the requests in flight, then exits.',
    )
    .option('--port <N>', 'port to listen on', '8080')
    .option(
      '--host <ADDRESS>',
      'address to listen on (behind a TLS proxy: keep loopback; else e.g. 0.0.0.0)',
      '127.0.0.1',
    )
    .action(async (opts: { port: string; host: string }) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`--port: expected 0..65535, got ${opts.port}`);
      await withRuntime(
        async (rt, signal) => {
          if (rt.config.projects.length === 0)
            throw new NotConfigured('no PSP project configured (PSP_* variables or RECON_CONFIG)');
          const receiver = createWebhookReceiver({
            store: rt.store,
            projects: rt.config.projects,
            log: rt.log,
            options: rt.config.webhook,
            ready: storeReadiness(rt.store, rt.sql),
          });
          const app = createHttpApp({ routes: [receiver.handle], log: rt.log });
          const { url } = await app.listen(port, opts.host);
          rt.log.info('webhook receiver listening', { url, projects: rt.config.projects.map((p) => p.posId) });
          process.stdout.write(`listening on ${url}\n`);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          await app.close({ graceMs: 10_000 });
          await receiver.drain();
          rt.log.info('webhook receiver stopped', { ...receiver.metrics() });
        },
        { maxConnections: 16 },
      );
    });
}
