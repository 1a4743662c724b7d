import type { Command } from 'commander';
import { alertDepsFrom } from '../../../jobs/alerts';
import { evaluateAlerts } from '../../alerts/evaluate';
import { listAlerts } from '../../alerts/list';
import { sendTestAlert } from '../../alerts/test-alert';
import { requireConfig } from '../../config/env';
import { EMPTY_ALERTS_CONFIG } from '../../config/alerts';
import { printable } from '../../input-rules';
import { positiveWhole } from '../options';
import { UsageError } from '../errors';
import { withRuntime } from '../runtime';

/**
 * `recon alerts run|list` (docs/exceptions.md, "Alerts"): evaluate the rules now (as the alerts job does), or
 * list the alerts raised and their deliveries. Never prints a channel's address or secret: channels by name.
 */

const line = (s: string) => printable(s, { oneLine: true });

function format(f: string): 'table' | 'json' {
  if (f !== 'table' && f !== 'json') throw new UsageError(`--format must be table or json (got ${line(f)})`);
  return f;
}

/** `recon alerts run`'s table: what was raised, then each delivery. */
function printRun(r: Awaited<ReturnType<typeof evaluateAlerts>>): void {
  const verb = r.dryRun ? 'would raise' : 'raised';
  process.stdout.write(`${verb} ${r.raised.length} alert${r.raised.length === 1 ? '' : 's'}\n`);
  for (const a of r.raised)
    process.stdout.write(
      `  ${a.alertId}  ${line(a.rule)}  ${a.kind}  ${line(a.title)}${a.coveredBy ? `  (in summary ${a.coveredBy})` : ''}\n`,
    );
  process.stdout.write(`deliveries${r.dryRun ? ' due' : ''}: ${r.deliveries.length}\n`);
  for (const d of r.deliveries)
    process.stdout.write(
      `  ${d.alertId}  ${line(d.channel)}  attempt ${d.attempt}  ${d.outcome}${d.error ? `  ${line(d.error)}` : ''}\n`,
    );
}

export function register(program: Command): void {
  const group = program
    .command('alerts')
    .description('alerts on exceptions, failed jobs and late syncs: the `alerts` rules of RECON_CONFIG');

  group
    .command('run')
    .option('--dry-run', 'list what would be raised and delivered; change nothing, send nothing')
    .option('--format <format>', 'table or json', 'table')
    .description('evaluate the rules now: raise what is new (once each) and deliver what is due')
    .action(async (opts: { dryRun?: boolean; format: string }) => {
      const fmt = format(opts.format);
      await withRuntime(async (rt) => {
        const r = await evaluateAlerts(alertDepsFrom(rt), { dryRun: opts.dryRun === true });
        // a delivery that failed (tried again later) is an item that failed: exit 1, as statements send and alerts test
        if (r.deliveries.some((d) => d.outcome === 'failed')) process.exitCode = 1;
        if (fmt === 'json') return void process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        printRun(r);
      });
    });

  group
    .command('test')
    .argument('<rule>', 'the name of a rule of the `alerts` object of RECON_CONFIG')
    .description("send a test alert to each of the rule's channels now (not recorded; sent every time)")
    .action(async (rule: string) => {
      // no database: only the configuration (a ConfigError names every problem)
      const all = requireConfig();
      const config = all.alerts ?? EMPTY_ALERTS_CONFIG;
      const out = await sendTestAlert(config, rule, { mail: all.mail }, new Date());
      if (!out)
        throw new UsageError(
          `no alert rule named ${line(rule)} (rules: ${config.rules.map((r) => r.name).join(', ') || 'none'})`,
        );
      for (const o of out) process.stdout.write(`${line(o.channel)}: ${o.outcome} (${line(o.detail)})\n`);
      if (out.some((o) => o.outcome === 'failed')) process.exitCode = 1;
    });

  group
    .command('list')
    .option('--limit <n>', 'at most n alerts, newest first', '100')
    .option('--pending', 'only alerts with a delivery still to make')
    .option('--format <format>', 'table or json', 'table')
    .description('the alerts raised, newest first, and each delivery: sent, failed (attempts, next try) or given up')
    .action(async (opts: { limit: string; pending?: boolean; format: string }) => {
      const fmt = format(opts.format);
      const limit = positiveWhole('--limit', opts.limit);
      await withRuntime(async (rt) => {
        const retry = (rt.config.alerts ?? EMPTY_ALERTS_CONFIG).retry;
        const list = await listAlerts({ sql: rt.sql, store: rt.store, retry }, { limit, pendingOnly: opts.pending });
        if (fmt === 'json') return void process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        for (const a of list) {
          process.stdout.write(`${a.raisedAt}  ${a.alertId}  ${line(a.rule)}  ${a.kind}  ${line(a.title)}\n`);
          if (a.coveredBy) process.stdout.write(`    sent as part of summary ${a.coveredBy}\n`);
          for (const c of a.deliveries) {
            const state = c.sent
              ? 'sent'
              : c.givenUp
                ? `given up after ${c.attempts} attempts`
                : c.attempts === 0
                  ? 'not yet attempted'
                  : `failed ${c.attempts}×, next try ${c.retryAt?.toISOString() ?? 'now'}`;
            process.stdout.write(
              `    ${line(c.channel)}: ${state}${c.lastError && !c.sent ? ` (${line(c.lastError)})` : ''}\n`,
            );
          }
        }
        if (list.length === 0) process.stdout.write('no alerts raised\n');
      });
    });
}
