import { writeFileSync } from 'node:fs';
import { exceptionPolicyOf } from '../exceptions/policy';
import path from 'node:path';
import { DateTime } from 'luxon';
import type { Config, PspProject } from '../config/env';
import { statementsConfigFromEnv } from '../config/statements';
import { writeNightlyReportFor } from '../export/nightly/report';
import { ensureOutDir } from '../export/out-dir';
import { issueStatements } from '../export/statements/issue';
import { createHttpApp } from '../http/http-app';
import { createWebhookReceiver } from '../http/receiver';
import { formatMinor } from '../ingest/bank/amount';
import { healMissingWebhooks } from '../ingest/heal';
import { importSubMerchants, parseSubMerchantCsv } from '../ingest/sub-merchants';
import { syncRange } from '../ingest/sync';
import type { Logger } from '../log';
import { defaultThreads, runProjections, threadSource } from '../projector/runner';
import { RECONCILIATION_TYPES } from '../reconciliation/discrepancy-types';
import { demoStatementsConfig, withLegalDetails } from '../sandbox/legal-details';
import { type Sandbox, startSandbox } from '../sandbox/server';
import { demoBankConfig, writeDemoConfig } from './demo-bank';
import {
  checkLines,
  compareFindings,
  countByType,
  type DemoCheck,
  pspFindingKey,
  pspTruthKeys,
  standingDiscrepancies,
} from './demo-check';
import { importSandboxIntent, orderFindingKey } from './demo-intent';
import { livePurchases } from './demo-live';
import { moneyLoop } from './demo-money';
import { printPayoutCheck } from './demo-payout-check';
import { DEMO_WEBHOOK_SENDERS, type DemoOptions, type DemoStage, type DemoSummary, isMoneyType } from './demo-types';
import { closeRuntime, openRuntime, runnerDepsOf } from './runtime';

export type { DemoOptions, DemoStage, DemoSummary };

type Runtime = Awaited<ReturnType<typeof openRuntime>>;
type Receiver = ReturnType<typeof createWebhookReceiver>;

/** What every step of the month is given: the month, the sandbox, recon's runtime, and the clock. */
interface DemoRun {
  readonly opts: DemoOptions & { readonly month: string };
  readonly monthStart: DateTime;
  readonly from: string;
  readonly to: string;
  readonly config: Config;
  readonly projects: PspProject[];
  readonly rt: Runtime;
  readonly log: Logger;
  readonly sandbox: Sandbox;
  /** a line of progress, after the seconds since the start */
  readonly step: (text: string) => void;
  /** runs one stage of the month, told to opts.onStage with what it went through */
  readonly stage: <T>(name: string, unit: string, run: () => Promise<T>, items: (result: T) => number) => Promise<T>;
  /** what must be closed however the month ends (the webhook receiver's server): else a failed month never exits */
  readonly closing: Array<() => Promise<unknown>>;
}

export async function runDemo(baseConfig: Config, log: Logger, opts: DemoOptions): Promise<DemoSummary> {
  const zone = baseConfig.timezone;
  const month = opts.month ?? DateTime.now().setZone(zone).minus({ months: 1 }).toFormat('yyyy-MM');
  const monthStart = DateTime.fromFormat(month, 'yyyy-MM', { zone });
  const started = Date.now();
  const step = (text: string) => opts.print(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${text}`);
  const stage = async <T>(name: string, unit: string, run: () => Promise<T>, items: (result: T) => number) => {
    const t0 = performance.now();
    const result = await run();
    await opts.onStage?.({ name, unit, ms: performance.now() - t0, items: items(result) });
    return result;
  };

  step(`sandbox PSP: generating ${opts.payments} payments for ${month} (seed ${opts.seed}, zone ${zone})`);
  const sandbox = await startSandbox({ scenario: { seed: opts.seed, payments: opts.payments, month, timezone: zone } });
  const projects: PspProject[] = sandbox.projects.map((p) => ({ ...p }));
  const config: Config = {
    ...baseConfig,
    projects,
    reportPollMaxWaitMs: Math.min(baseConfig.reportPollMaxWaitMs, 60_000),
    // the demo's bank accounts are its own, as its PSP is: the demo needs no configuration
    bank: demoBankConfig(),
  };
  // the sandbox's servers would keep the process alive after the error is reported
  const rt = await openRuntime(config, { log, maxConnections: 16, subMerchants: true }).catch(async (e: unknown) => {
    await sandbox.close();
    throw e;
  });
  const app = createHttpApp({ routes: [], log });
  try {
    const from = monthStart.toISODate()!;
    const to = monthStart.plus({ months: 1 }).toISODate()!;
    const run: DemoRun = {
      opts: { ...opts, month },
      monthStart,
      from,
      to,
      config,
      projects,
      rt,
      log,
      sandbox,
      step,
      stage,
      closing: [],
    };
    try {
      return await theMonth(run);
    } finally {
      for (const close of run.closing) await close().catch(() => {});
    }
  } finally {
    await app.close({ graceMs: 100 }).catch(() => {});
    await sandbox.close();
    await closeRuntime(rt);
  }
}

/** The month, step by step: what the marketplace and its PSP did, recon's reading of it, and the documents. */
async function theMonth(run: DemoRun): Promise<DemoSummary> {
  const { config, rt } = run;
  run.step(
    `database ready (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}`}), event store: ${rt.store.backend}`,
  );
  // written first: a command run beside a long demo reads the views as the demo builds them
  const configFile = writeDemoConfig(config.dataDir);
  const read = await readTheMonth(run);
  const { findings, webhooks } = read;
  const docs = await monthDocuments(run);
  findings.checks.push(docs.money.check);
  await printPayoutCheck({ ...rt, bank: config.bank, scenario: run.sandbox.scenario }, run.opts.month, run.step);
  const report = await run.stage(
    'nightly report',
    'reports',
    () => nightlyReport(run),
    () => 1,
  );

  const metrics = webhooks.receiver.metrics();
  await webhooks.app.close({ graceMs: 2000 });
  const [events] = await rt.sql<{ n: number }[]>`select count(*)::int as n from es_events`.catch(() => [{ n: -1 }]);
  return {
    month: run.opts.month,
    posId: run.projects[0]!.posId,
    events: events?.n ?? -1,
    sync: { windows: read.sync.completed, records: read.sync.records, appended: read.sync.appended },
    webhooks: {
      delivered: read.delivery.delivered,
      duplicates: read.delivery.duplicatesSent,
      lost: read.delivery.lostByScenario + read.delivery.lostOnDelivery,
      accepted: metrics.accepted,
      rejected: metrics.received - metrics.accepted,
    },
    healing: { requested: read.heal.requested },
    projections: Object.fromEntries(read.projected.projections.map((p) => [p.name, p.applied])),
    ...findingsSummary(findings, read.intent.expected),
    statements: {
      files: docs.issued.files.map((f) => f.path),
      position: docs.issued.position,
      figuresSha256: docs.issued.figuresSha256,
      newRun: docs.issued.newEvent,
    },
    nightlyReport: report.file,
    configFile,
    money: docs.money,
  };
}

/** Recon reads the month: the directory and orders, live purchases, sync, webhooks, healing, projections. */
async function readTheMonth(run: DemoRun) {
  const { rt, stage } = run;
  const intent = await stage(
    'sandbox directory, orders and fee contract',
    'orders',
    () => importIntent(run),
    (i) => i.orders,
  );
  const webhooks = await listenForWebhooks(run);
  const live = await livePurchases(
    rt.store,
    run.projects[0]!,
    run.sandbox.scenario.subMerchants.slice(0, 2).map((s) => s.id),
    `${webhooks.url}/webhooks/${run.projects[0]!.posId}`,
    run.log,
    run.opts.month,
  );
  run.step(`live purchases through the client: ${live.join('; ')}`);
  const sync = await stage(
    'sync',
    'records',
    () => syncMonth(run),
    (s) => s.records,
  );
  const delivery = await stage(
    'webhooks',
    'webhooks',
    () => deliverWebhooks(run, webhooks),
    (d) => d.delivered,
  );
  const heal = await stage(
    'healing',
    're-sends',
    () => healMonth(run, webhooks.receiver),
    (h) => h.requested,
  );
  // events: the most any projection applied (each reads the whole month)
  const projected = await stage(
    'projections',
    'events',
    () => projectMonth(run),
    (p) => p.projections.reduce((n, x) => Math.max(n, x.applied), 0),
  );
  const findings = await judgeFindings(run, intent);
  return { intent, webhooks, sync, delivery, heal, projected, findings };
}

/** The month's documents: statements, then the bank pays and its statements are imported and matched. */
async function monthDocuments(run: DemoRun) {
  const { rt, config, stage } = run;
  const issued = await stage(
    'statements',
    'lines',
    () => issueMonthStatements(run),
    (i) => i.lines,
  );
  const money = await stage(
    'bank import',
    'entries',
    () => moneyLoop(rt, config, run.log, run.sandbox.scenario, run.opts, run.step),
    (m) => m.imported.entries,
  );
  return { issued, money };
}

function findingsSummary(findings: Awaited<ReturnType<typeof judgeFindings>>, expected: string[]) {
  return {
    discrepancies: findings.discrepancies,
    groundTruth: findings.groundTruth,
    check: { passed: findings.checks.every((c) => c.passed), checks: findings.checks },
    orders: { found: findings.orderFound, expected },
  };
}

/** The sub-merchant directory (RECON_SUB_MERCHANTS when set, else the sandbox's), then orders and fee contract. */
async function importIntent(run: DemoRun) {
  const { config, rt, step, sandbox } = run;
  // RECON_SUB_MERCHANTS, when set, is the directory in force (imported at open); else the sandbox's own.
  const configured = rt.subMerchantDirectory;
  if (configured) {
    step(
      `sub-merchant directory: RECON_SUB_MERCHANTS=${configured.path}: ${configured.rows} sub-merchants (${configured.registered} new), version ${configured.version}`,
    );
  } else {
    const csv = withLegalDetails(sandbox.scenario.subMerchantCsv());
    const csvFile = path.join(config.dataDir, 'demo', 'sub-merchants.csv');
    ensureOutDir(path.dirname(csvFile));
    writeFileSync(csvFile, csv);
    const directory = parseSubMerchantCsv(csv, csvFile);
    if (!directory.ok)
      throw new Error(`sandbox sub-merchant directory is invalid: ${JSON.stringify(directory.issues[0])}`);
    const imported = await importSubMerchants(rt.store, directory.rows);
    step(
      `sub-merchant directory: ${directory.rows.length} sub-merchants (${imported.registered} new) from ${path.relative(process.cwd(), csvFile)}`,
    );
  }
  const intentDir = path.join(config.dataDir, 'demo', 'intent');
  const intent = await importSandboxIntent(rt.store, sandbox.scenario, intentDir);
  step(
    `orders and fee contract: ${intent.orders} orders (${intent.appended} new versions), ${intent.feeLines} contract lines (${intent.feeSet} new) from ${path.relative(process.cwd(), intentDir)}`,
  );
  return intent;
}

/** The receiver listens before anything is sent to it; the sandbox re-sends there on request too. */
async function listenForWebhooks(run: DemoRun) {
  const { rt, config, log } = run;
  const receiver = createWebhookReceiver({
    store: rt.store,
    projects: run.projects,
    log,
    options: config.webhook,
    ready: () => rt.sql`select 1`,
  });
  const server = createHttpApp({ routes: [receiver.handle], log });
  const { url } = await server.listen(0, '127.0.0.1');
  let closed: Promise<unknown> | undefined;
  // closed once: at the month's end, or on the way out when the month failed
  const app = { close: (o: { graceMs: number }) => (closed ??= server.close(o)) };
  run.closing.push(() => app.close({ graceMs: 100 }));
  run.step(`webhook receiver on ${url}`);
  return { receiver, app, url };
}

async function syncMonth(run: DemoRun) {
  const { rt, config, step, from, to } = run;
  let lastProgress = 0;
  const sync = await syncRange(
    {
      store: rt.store,
      projects: run.projects,
      log: run.log,
      timezone: config.timezone,
      reportMaxWaitMs: config.reportPollMaxWaitMs,
      pspTimeoutMs: demoPspTimeoutMs(config.pspTimeoutMs, run.opts.payments),
      pollBaseMs: 50,
      pollMaxMs: 500,
    },
    {
      from,
      to,
      signal: run.opts.signal,
      onProgress: (p) => {
        if (Date.now() - lastProgress > 1000 || p.phase === 'completed') {
          lastProgress = Date.now();
          step(
            `  sync ${p.window.from.slice(0, 10)}…${p.window.to.slice(0, 10)}: ${p.phase}, ${p.records} records, windows ${p.windowsDone}/${p.windowsTotal}`,
          );
        }
      },
    },
  );
  step(
    `sync ${from} → ${to}: ${sync.completed} windows, ${sync.records} records read, ${sync.appended} events appended${sync.failed ? `, ${sync.failed} FAILED` : ''}`,
  );
  return sync;
}

/**
 * The stand-in PSP answers a register report's start only once it has counted the month's records, on this same
 * thread (a real PSP counts from its own index): 15 µs of CPU a payment on the development machine, 2–3 times that
 * in wall time when the machine is loaded. So the demo waits for it in proportion to the month, never less than
 * RECON_PSP_TIMEOUT_MS: a 1M month 300 s rather than timing out and starting the count again.
 */
export const demoPspTimeoutMs = (configured: number, payments: number): number =>
  Math.min(600_000, Math.max(configured, Math.ceil(payments * 0.3)));

async function deliverWebhooks(run: DemoRun, webhooks: { receiver: Receiver; url: string }) {
  const delivery = await run.sandbox.deliverWebhooks(`${webhooks.url}/webhooks/{posId}`, {
    duplicateRate: 0.05,
    reorderWindow: 8,
    concurrency: run.opts.webhookSenders ?? DEMO_WEBHOOK_SENDERS,
    ...(run.opts.signal ? { signal: run.opts.signal } : {}),
  });
  await webhooks.receiver.drain();
  run.step(
    `webhooks: ${delivery.delivered} delivered (${delivery.duplicatesSent} duplicates, ${delivery.lostByScenario + delivery.lostOnDelivery} lost on the way)`,
  );
  return delivery;
}

async function healMonth(run: DemoRun, receiver: Receiver) {
  const { rt, config } = run;
  const heal = await healMissingWebhooks(
    {
      sql: rt.sql,
      store: rt.store,
      projects: run.projects,
      log: run.log,
      graceHours: config.graceHours,
      timezone: config.timezone,
      bank: config.bank,
      pspTimeoutMs: config.pspTimeoutMs,
      resendConcurrency: config.healConcurrency,
    },
    { now: new Date() },
  );
  await run.sandbox.settled();
  await receiver.drain();
  // a re-sent webhook no 2xx answered stays missing (the stand-in PSP does not send again): said, not hidden
  const lost = run.sandbox.stats.webhooks.notDelivered;
  run.step(
    `healing: ${heal.requested} re-send requests for webhooks that never arrived (${heal.failed} failed); re-sent webhooks ingested` +
      (lost.length
        ? `, ${lost.length} not delivered by the PSP (${lost
            .slice(0, 3)
            .map((w) => `${w.paymentId} ${w.method}: ${w.error}`)
            .join('; ')}${lost.length > 3 ? '; …' : ''})`
        : ''),
  );
  return heal;
}

async function projectMonth(run: DemoRun) {
  const { rt, config } = run;
  const projected = await runProjections(
    { ...runnerDepsOf(rt, run.log), threadSource: threadSource(rt.config, rt.sql) },
    // one thread unless RECON_PROJECTION_THREADS asks for more (src/projector/threads.ts)
    { signal: run.opts.signal, threads: config.projectionThreads ?? defaultThreads() },
  );
  run.step(`projections caught up: ${projected.projections.map((p) => `${p.name} +${p.applied}`).join(', ')}`);
  return projected;
}

/** What recon found open beside what the sandbox injected: the PSP's sources and the orders. */
async function judgeFindings(run: DemoRun, intent: Awaited<ReturnType<typeof importIntent>>) {
  const { rt, config } = run;
  // the money discrepancies (settlement_*, payout_*) are the money loop's, counted after the bank import;
  // a resolved one is no finding (an order not yet synced, a webhook healing brought)
  const standing = (await standingDiscrepancies(rt.sql, config.timezone)).filter((d) => !isMoneyType(d.type));
  const pspFound = standing
    .filter((d) => (RECONCILIATION_TYPES as readonly string[]).includes(d.type))
    .map((d) => pspFindingKey({ type: d.type, paymentId: d.payment_id }));
  const pspExpected = pspTruthKeys(run.sandbox.scenario.groundTruth, run.sandbox.stats.webhooks.notDelivered);
  const orderRows = await rt.sql<
    { type: string; order_id: string | null; payment_id: string | null; sub_merchant_id: string | null }[]
  >`select type, order_id, payment_id, sub_merchant_id from recon.order_discrepancies where status = 'open'`;
  const orderFound = orderRows
    .map((r) =>
      orderFindingKey({ type: r.type, orderId: r.order_id, paymentId: r.payment_id, subMerchantId: r.sub_merchant_id }),
    )
    .sort();
  const checks: DemoCheck[] = [
    compareFindings('PSP sources (type, payment)', pspFound, pspExpected),
    compareFindings("orders (type, order, payment, a fee's sub-merchant)", orderFound, intent.expected),
  ];
  run.step(
    `orders against the PSP: found ${
      Object.entries(countByType(orderFound))
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'nothing'
    }; ${checkLines([checks[1]!])[1]!.trim()}`,
  );
  return {
    checks,
    orderFound,
    discrepancies: countByType([...pspFound, ...orderFound]),
    groundTruth: countByType([...pspExpected, ...intent.expected]),
  };
}

async function issueMonthStatements(run: DemoRun) {
  const { rt, config, opts, monthStart } = run;
  ensureOutDir(opts.outDir, '--out');
  const issued = await issueStatements(
    {
      sql: rt.sql,
      store: rt.store,
      log: run.log,
      timezone: config.timezone,
      statements: demoStatementsConfig(statementsConfigFromEnv()),
    },
    // a month not ended (asked for with --month) is shown as the draft it is
    { month: opts.month, outDir: opts.outDir, provisional: monthStart.plus({ months: 1 }) > DateTime.now() },
  );
  run.step(
    `statements for ${opts.month}: ${issued.statements} workbooks + payouts index, ${issued.lines} operation lines, cut at position ${issued.position}`,
  );
  return issued;
}

async function nightlyReport(run: DemoRun) {
  const { rt, config, opts } = run;
  const reportDate = run.monthStart.plus({ months: 1 }).minus({ days: 1 }).toISODate()!;
  const report = await writeNightlyReportFor(
    { sql: rt.sql, store: rt.store },
    {
      date: reportDate,
      timezone: config.timezone,
      policy: exceptionPolicyOf(config.exceptions).policy,
      graceHours: config.graceHours,
      outDir: opts.outDir,
      facts: [
        ['Run', 'recon demo'],
        ['Sandbox seed', opts.seed],
      ],
    },
  );
  run.step(`nightly report for ${reportDate}: ${path.relative(process.cwd(), report.file)}`);
  return report;
}

export function formatSummary(s: DemoSummary): string {
  const types = [...new Set([...Object.keys(s.discrepancies), ...Object.keys(s.groundTruth)])].sort();
  const rel = (f: string) => path.relative(process.cwd(), f);
  const lines = [
    '',
    `recon demo — ${s.month}, PSP project ${s.posId}`,
    `  events in the store      ${s.events}`,
    `  register+period records  ${s.sync.records} read in ${s.sync.windows} windows, ${s.sync.appended} new events`,
    `  webhooks                 ${s.webhooks.accepted} accepted, ${s.webhooks.duplicates} duplicates sent, ${s.webhooks.lost} lost, ${s.healing.requested} re-send requests`,
    '  discrepancies by type    found (injected by the sandbox)',
    ...types.map(
      (t) => `    ${t.padEnd(24)} ${String(s.discrepancies[t] ?? 0).padStart(4)} (${s.groundTruth[t] ?? 0})`,
    ),
    `  statements               ${s.statements.files.length} files, position ${s.statements.position}, figures sha256 ${s.statements.figuresSha256.slice(0, 16)}…${s.statements.newRun ? '' : ' (same run as before)'}`,
    ...s.statements.files.slice(0, 3).map((f) => `    ${rel(f)}`),
    ...(s.statements.files.length > 3
      ? [`    … and ${s.statements.files.length - 3} more in ${rel(path.dirname(s.statements.files[0]!))}`]
      : []),
    `  nightly report           ${rel(s.nightlyReport)}`,
    `  bank statements          ${s.money.files.camt053} camt.053 + ${s.money.files.mt940} MT940 in ${rel(s.money.files.dir)}; ${s.money.imported.entries} entries imported (${s.money.imported.known} already known)`,
    `  refused                  ${s.money.refused}`,
    '  money discrepancies      found (injected by the sandbox bank)',
    ...[...new Set([...Object.keys(s.money.discrepancies), ...Object.keys(s.money.groundTruth)])]
      .sort()
      .map(
        (t) =>
          `    ${t.padEnd(24)} ${String(s.money.discrepancies[t] ?? 0).padStart(4)} (${s.money.groundTruth[t] ?? 0})`,
      ),
    '  paid out                 reference, payee, due, paid out, status, paid on',
    ...s.money.paidOut.map(
      (p) =>
        `    ${p.reference.padEnd(28)} ${p.payee.slice(0, 24).padEnd(24)} ${formatMinor(BigInt(p.amount)).padStart(12)} ${formatMinor(BigInt(p.paidOut)).padStart(12)} ${p.currency} ${p.status.padEnd(9)} ${p.paidOn ?? ''}`,
    ),
    `  payout status            ${Object.entries(s.money.payoutStatuses.found)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')} (the bank: ${Object.entries(s.money.payoutStatuses.truth)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}) in ${rel(s.money.payoutStatuses.file)}`,
    `  bank charges             ${s.money.charges.booked} booked as bank fees (the bank took ${s.money.charges.taken}), none judged a payout`,
    '',
    ...checkLines(s.check.checks).map((l) => `  ${l}`),
    '',
    ...nextSteps(s),
  ];
  return lines.join('\n');
}

/** What to type next: the demo's bank accounts for the commands after it, the files, a person's token. */
function nextSteps(s: DemoSummary): string[] {
  const out = path.relative(process.cwd(), path.dirname(s.nightlyReport)) || '.';
  const ownConfig = (process.env.RECON_CONFIG ?? '').trim() !== '';
  const config =
    s.configFile === null
      ? ["Next: the demo's bank accounts could not be written to its data directory; later commands see none"]
      : ownConfig
        ? [
            `Next: the demo's bank accounts are in ${shellWord(s.configFile)}; put its "bank" section in your`,
            '  RECON_CONFIG to read what the demo built (without, the payout and settlement views are rebuilt',
            '  with no bank accounts):',
          ]
        : [
            'Next: read what the demo built with its bank accounts (without, the payout and settlement views are',
            '  rebuilt with no bank accounts):',
            `  export RECON_CONFIG=${shellWord(s.configFile)}`,
          ];
  return [
    ...config,
    `  npx recon payouts --month ${s.month} · npx recon discrepancies --status open · npx recon explain <payment_id>`,
    `  the workbooks and PDFs are in ${out}; the exceptions commands need a person's token:`,
    '  npx recon users add ID --name N --role admin (the first needs none) prints it, for RECON_TOKEN',
  ];
}

/** A path as one word of a POSIX shell command line. */
const shellWord = (text: string) => (/^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);
