import type { Command } from 'commander';
import { UsageError } from '../errors';
import { withRuntime, runnerDepsOf } from '../runtime';

export function register(program: Command): void {
  program
    .command('heal')
    .summary('ask the PSP to re-send missing webhooks')
    .description(
      'ask the PSP to re-send the webhooks of operations that the register or period data show final (success or failure),\n' +
        'older than RECON_GRACE_HOURS, for which no webhook arrived. Each operation is asked once (recorded as\n' +
        'WebhookResendRequested); the webhooks that follow arrive at `recon serve` and are stored as usual.',
    )
    .option('--pos <POS_ID...>', 'only these PSP projects (pos_id)')
    .option('--limit <N>', 'ask for at most N operations per project in this run', '10000')
    .action(async (opts: { pos?: string[]; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new UsageError(`--limit: expected a positive whole number, got ${opts.limit}`);
      const { healMissingWebhooks } = await import('../../ingest/heal');
      const report = await withRuntime(async (rt, signal) =>
        healMissingWebhooks(
          {
            ...runnerDepsOf(rt),
            projects: rt.config.projects,
            pspTimeoutMs: rt.config.pspTimeoutMs,
            resendConcurrency: rt.config.healConcurrency,
          },
          { posIds: opts.pos, limit, signal },
        ),
      );
      for (const r of report.requests) {
        process.stdout.write(
          `${r.posId} order ${r.orderId} ${r.method}${r.transactionId ? ` (transaction ${r.transactionId})` : ''}: ${r.outcome}${r.detail ? ` (${r.detail})` : ''}\n`,
        );
      }
      process.stdout.write(
        `heal: ${report.candidates} operations without webhook, ${report.requested} re-sends requested, ${report.failed} failed\n`,
      );
      if (report.failed > 0) process.exitCode = 1;
    });
}
