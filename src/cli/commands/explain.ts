import type { Command } from 'commander';
import { explain } from '../../reconciliation/explain';
import { explanationText } from '../../reconciliation/explain-text';
import { runProjections } from '../../projector/runner';
import { UsageError } from '../errors';
import { withRuntime, runnerDepsOf } from '../runtime';

export function register(program: Command): void {
  program
    .command('explain <ref>')
    .description(
      'every event about a payment (or every payment of an order), in order, and the state and entries derived from them',
    )
    .option('--format <format>', 'text or json', 'text')
    .option('--no-catch-up', 'read the views as they are, without applying new events first')
    .action(async (ref: string, opts: { format: string; catchUp: boolean }) => {
      if (!['text', 'json'].includes(opts.format))
        throw new UsageError(`--format must be text or json (got ${opts.format})`);
      await withRuntime(async (rt, signal) => {
        if (opts.catchUp) {
          await runProjections(runnerDepsOf(rt), { signal });
        }
        const x = await explain({ sql: rt.sql, store: rt.store, posIds: rt.config.projects.map((p) => p.posId) }, ref);
        if (opts.format === 'json')
          process.stdout.write(JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
        else process.stdout.write(explanationText(x));
        if (x.payments.length === 0 && !x.order) process.exitCode = 1;
      });
    });
}
