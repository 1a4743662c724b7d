import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { startSandbox } from '../../sandbox/server';
import { UsageError } from '../errors';

interface SandboxCommandOptions {
  port: string;
  seed: string;
  payments: string;
  month?: string;
  timezone: string;
  webhookTarget?: string;
  notReadyPolls: string;
  subMerchantsCsv?: string;
  groundTruth?: string;
}

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/**
 * `recon sandbox`: the sandbox PSP in the foreground, for trying recon without credentials. Needs no
 * database. The credentials it prints are the sandbox's own, generated from the seed.
 */
export function register(program: Command): void {
  program
    .command('sandbox')
    .description('run a sandbox PSP (deterministic scenario, PSP paths, webhooks) on 127.0.0.1 until stopped')
    .option('--port <port>', 'port to listen on (0: any free port)', '8787')
    .option('--seed <seed>', 'scenario seed: the same seed gives the same data', '1')
    .option('--payments <n>', 'number of orders in the scenario', '300')
    .option('--month <YYYY-MM>', 'month of the scenario (default: the previous month)')
    .option('--timezone <zone>', 'business time zone of the month', process.env.RECON_TIMEZONE || 'UTC')
    .option(
      '--webhook-target <url>',
      'deliver the scenario webhooks there at start, and re-sent ones later ("{posId}" is replaced)',
    )
    .option('--not-ready-polls <n>', 'register fetches answered report_not_ready before the report is served', '1')
    .option('--sub-merchants-csv <file>', 'write the sub-merchant directory (as recon imports it) to this file')
    .option('--ground-truth <file>', 'write the scenario ground truth (injected disagreements) as JSON to this file')
    .action(runSandbox);
}

async function runSandbox(o: SandboxCommandOptions): Promise<void> {
  const { port, payments, polls, month } = checkOptions(o);
  const sandbox = await startSandbox({
    scenario: { seed: o.seed, payments, month, timezone: o.timezone },
    port,
    faults: { reportNotReadyPolls: polls },
    webhookTarget: o.webhookTarget,
  });
  const s = sandbox.scenario;
  if (o.subMerchantsCsv) writeFileSync(o.subMerchantsCsv, s.subMerchantCsv());
  if (o.groundTruth) writeFileSync(o.groundTruth, JSON.stringify(s.groundTruth, null, 2) + '\n');
  const out = process.stdout;
  printCredentials(sandbox, o, month);
  if (o.webhookTarget) {
    const stats = await sandbox.deliverWebhooks(o.webhookTarget);
    out.write(
      `  webhooks: ${stats.delivered} delivered, ${stats.failed} failed, ${stats.lostByScenario} lost by the scenario\n`,
    );
  }
  out.write('press Ctrl-C to stop\n');
  await untilStopped();
  await sandbox.close();
}

/** The options as numbers and a month, or a usage error naming the option. */
function checkOptions(o: SandboxCommandOptions): { port: number; payments: number; polls: number; month: string } {
  const port = Number(o.port);
  const payments = Number(o.payments);
  const polls = Number(o.notReadyPolls);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port: expected 0 to 65535, got ${o.port}`);
  if (!Number.isInteger(payments) || payments < 1)
    throw new UsageError(`--payments: expected a positive whole number, got ${o.payments}`);
  if (!Number.isInteger(polls) || polls < 0)
    throw new UsageError(`--not-ready-polls: expected a whole number, got ${o.notReadyPolls}`);
  const month = o.month ?? DateTime.now().setZone(o.timezone).minus({ months: 1 }).toFormat('yyyy-MM');
  if (!/^\d{4}-\d{2}$/.test(month)) throw new UsageError(`--month: expected YYYY-MM, got ${month}`);
  if (o.webhookTarget) {
    try {
      new URL(o.webhookTarget.replace('{posId}', 'x'));
    } catch {
      throw new UsageError(`--webhook-target: not a URL: ${o.webhookTarget}`);
    }
  }
  return { port, payments, polls, month };
}

function printCredentials(sandbox: Sandbox, o: SandboxCommandOptions, month: string): void {
  const s = sandbox.scenario;
  const out = process.stdout;
  out.write(`sandbox PSP listening (seed ${s.seed}, ${s.orderCount} orders, ${month} in ${s.timezone})\n`);
  out.write(`  PSP_BASE_URL=${sandbox.baseUrl}\n  PSP_REPORT_URL=${sandbox.reportUrl}\n`);
  for (const p of sandbox.projects) {
    out.write(
      `  PSP_POS_ID=${p.posId}\n  PSP_API_KEY=${p.apiKey}\n  PSP_API_SECRET=${p.apiSecret}\n  PSP_ENDPOINTS_KEY=${p.endpointsKey}\n`,
    );
  }
  out.write(`  (sandbox test credentials; ${s.groundTruth.length} injected disagreements in the ground truth)\n`);
  if (o.subMerchantsCsv) out.write(`  sub-merchant directory written to ${o.subMerchantsCsv}\n`);
}

/** Until SIGINT or SIGTERM. */
function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
