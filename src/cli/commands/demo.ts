import path from 'node:path';
import type { Command } from 'commander';
import { runDemo, formatSummary } from '../demo';
import { serveDemo } from '../demo-serve';
import { UsageError } from '../errors';
import { outDirOption } from '../options';
import { MAX_DEMO_PAYMENTS, parseDemoOptions } from '../demo-options';
import { requireConfig } from '../../config/env';
import { Interrupted } from '../../errors';
import { loggerFor } from '../runtime';

interface DemoCommandOptions {
  seed: string;
  payments: string;
  month?: string;
  out: string;
  json?: boolean;
  serve?: boolean;
  port: string;
  host: string;
}

export function register(program: Command): void {
  program
    .command('demo')
    .summary('run the main job end to end against a sandbox PSP (no configuration needed)')
    .description(
      'run the main job end to end on the embedded default with no configuration: a sandbox PSP with a generated\n' +
        'month of split payments (and injected discrepancies), sync, webhooks delivered to a receiver, healing,\n' +
        "projections, then the month's payout statements and a nightly report in --out, and a short summary.\n" +
        'Running it again appends nothing new and issues the same statements.',
    )
    .option('--seed <S>', 'sandbox scenario seed', 'recon-demo')
    .option('--payments <N>', `payments in the generated month (1..${MAX_DEMO_PAYMENTS})`, '300')
    .option('--month <YYYY-MM>', 'month to generate (default: the previous month in RECON_TIMEZONE)')
    .option('--out <DIR>', 'where statements and the report are written', './out')
    .option('--json', 'print the summary as JSON')
    .option('--serve', 'then serve the console (/console) on --port with a fresh admin and analyst, until Ctrl-C')
    .option('--port <N>', 'port of --serve (0: any free port)', '8080')
    .option('--host <ADDRESS>', 'address of --serve', '127.0.0.1')
    .action(async (opts: DemoCommandOptions) => {
      const { payments } = parseDemoOptions(opts);
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`--port: expected 0..65535, got ${opts.port}`);
      outDirOption('--out', opts.out);
      const config = requireConfig();
      // The demo talks to its own sandbox: PSP_* variables, if set, are not used.
      const log = loggerFor(config);
      const controller = new AbortController();
      const onSignal = () => controller.abort(new Interrupted('interrupted'));
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const summary = await runDemo(config, log, {
          seed: opts.seed,
          payments,
          ...(opts.month ? { month: opts.month } : {}),
          outDir: path.resolve(opts.out),
          print: (line) => process.stdout.write(opts.json ? '' : line + '\n'),
          signal: controller.signal,
        });
        process.stdout.write(opts.json ? JSON.stringify(summary, null, 2) + '\n' : formatSummary(summary) + '\n');
        // the demo's own check failed: recon found other than the sandbox injected
        if (!summary.check.passed) process.exitCode = 1;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      if (opts.serve)
        await serveDemo(config, log, {
          port,
          host: opts.host,
          outDir: path.resolve(opts.out),
          actingToken: process.env.RECON_TOKEN || undefined,
        });
    });
}
