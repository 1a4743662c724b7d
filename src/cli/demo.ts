import { statementsConfigFromEnv } from '../config/statements';
import { demoStatementsConfig, withLegalDetails } from '../sandbox/legal-details';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import type { Config, PspProject } from '../config/env';
import { ensureOutDir } from '../export/out-dir';
import { issueStatements } from '../export/statements/issue';
import { cutDay, payoutStatusesAt } from '../export/payouts/paid-out';
import { payoutStatusFileName, writePayoutStatusWorkbook } from '../export/payouts/workbook';
import { formatPosition } from '../store/types';
import { writeNightlyReportFor } from '../export/nightly/report';
import { createHttpApp } from '../http/http-app';
import { healMissingWebhooks } from '../ingest/heal';
import { createWebhookReceiver } from '../http/receiver';
import { syncRange } from '../ingest/sync';
import { createPspPurchaseClient } from '../psp/purchase-client';
import { maskPan } from '../log';
import { listDiscrepancies } from '../reconciliation/discrepancy-queries';
import { RECONCILIATION_TYPES } from '../reconciliation/discrepancy-types';
import { runProjections } from '../projector/runner';
import { importSubMerchants, parseSubMerchantCsv } from '../ingest/sub-merchants';
import { startSandbox } from '../sandbox/server';
import { importSandboxIntent, orderFindingKey } from './demo-intent';
import { recordingPurchases } from '../ingest/orders/purchase-orders';
import type { EventStore } from '../store/types';
import { formatMinor } from '../ingest/bank/amount';
import { bankLoop, bookedCharges, demoBankConfig, paidOutLines, statusTruth } from './demo-bank';
import { printPayoutCheck } from './demo-payout-check';
import { openRuntime, closeRuntime } from './runtime';
import type { Logger } from '../log';
import { checkLines, compareFindings, countByType, type DemoCheck, pspFindingKey, pspTruthKeys } from './demo-check';

/**
 * `recon demo`: the whole main job on the embedded default, against the sandbox PSP, with no
 * configuration. Every step is idempotent, so a second run appends nothing new and issues the same
 * statements (same position, same figures hash).
 */
export interface DemoOptions {
  readonly seed: string;
  readonly payments: number;
  readonly month?: string;
  readonly outDir: string;
  readonly print: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface DemoSummary {
  readonly month: string;
  readonly posId: string;
  readonly events: number;
  readonly sync: { windows: number; records: number; appended: number };
  readonly webhooks: { delivered: number; duplicates: number; lost: number; accepted: number; rejected: number };
  readonly healing: { requested: number };
  readonly projections: Record<string, number>;
  /** open (or accepted) discrepancies per type, money ones apart: what recon found */
  readonly discrepancies: Record<string, number>;
  /** per type, what the sandbox injected and recon must report open (PSP side and orders) */
  readonly groundTruth: Record<string, number>;
  /** the demo's own check, finding by finding (src/cli/demo-check.ts): passed when every one passed */
  readonly check: { readonly passed: boolean; readonly checks: readonly DemoCheck[] };
  /** order discrepancies found open and those the sandbox injected (order findings as orderFindingKey) */
  readonly orders: { found: string[]; expected: string[] };
  readonly statements: { files: string[]; position: string; figuresSha256: string; newRun: boolean };
  readonly nightlyReport: string;
  /** the money loop: the sandbox bank's statements imported, payouts matched (src/cli/demo-bank.ts) */
  readonly money: {
    readonly files: { camt053: number; mt940: number; dir: string };
    readonly imported: { statements: number; entries: number; known: number };
    readonly refused: string;
    readonly discrepancies: Record<string, number>;
    readonly groundTruth: Record<string, number>;
    readonly paidOut: ReadonlyArray<{
      reference: string;
      payee: string;
      currency: string;
      amount: string;
      paidOut: string;
      status: string;
      paidOn: string | null;
    }>;
    /** every expected payout's status as the statements read it (paid-out.ts), beside the bank's ground truth */
    readonly payoutStatuses: { found: Record<string, number>; truth: Record<string, number>; file: string };
    /** the bank's charges booked as bank fees, beside those the bank took */
    readonly charges: {
      booked: number;
      bookedByCurrency: Record<string, string>;
      taken: number;
      takenByCurrency: Record<string, string>;
    };
  };
}

const isMoneyType = (t: string) => t.startsWith('settlement_') || t.startsWith('payout_');

export async function runDemo(baseConfig: Config, log: Logger, opts: DemoOptions): Promise<DemoSummary> {
  const zone = baseConfig.timezone;
  const month = opts.month ?? DateTime.now().setZone(zone).minus({ months: 1 }).toFormat('yyyy-MM');
  const monthStart = DateTime.fromFormat(month, 'yyyy-MM', { zone });
  const from = monthStart.toISODate()!;
  const to = monthStart.plus({ months: 1 }).toISODate()!;
  const started = Date.now();
  const step = (text: string) => opts.print(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${text}`);

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
  const rt = await openRuntime(config, { log, maxConnections: 16, subMerchants: true });
  const app = createHttpApp({ routes: [], log });
  try {
    step(
      `database ready (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}`}), event store: ${rt.store.backend}`,
    );

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

    // The receiver listens before anything is sent to it; the sandbox re-sends there on request too.
    const receiver = createWebhookReceiver({
      store: rt.store,
      projects,
      log,
      options: config.webhook,
      ready: () => rt.sql`select 1`,
    });
    const demoApp = createHttpApp({ routes: [receiver.handle], log });
    const { url } = await demoApp.listen(0, '127.0.0.1');
    const target = `${url}/webhooks/{posId}`;
    step(`webhook receiver on ${url}`);

    const live = await livePurchases(
      rt.store,
      projects[0]!,
      sandbox.scenario.subMerchants.slice(0, 2).map((s) => s.id),
      `${url}/webhooks/${projects[0]!.posId}`,
      log,
      month,
    );
    step(`live purchases through the client: ${live.join('; ')}`);

    let lastProgress = 0;
    const sync = await syncRange(
      {
        store: rt.store,
        projects,
        log,
        timezone: zone,
        reportMaxWaitMs: config.reportPollMaxWaitMs,
        pspTimeoutMs: config.pspTimeoutMs,
        pollBaseMs: 50,
        pollMaxMs: 500,
      },
      {
        from,
        to,
        signal: opts.signal,
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

    const delivery = await sandbox.deliverWebhooks(target, { duplicateRate: 0.05, reorderWindow: 8, concurrency: 8 });
    await receiver.drain();
    step(
      `webhooks: ${delivery.delivered} delivered (${delivery.duplicatesSent} duplicates, ${delivery.lostByScenario + delivery.lostOnDelivery} lost on the way)`,
    );

    const heal = await healMissingWebhooks(
      {
        sql: rt.sql,
        store: rt.store,
        projects,
        log,
        graceHours: config.graceHours,
        timezone: zone,
        bank: config.bank,
        pspTimeoutMs: config.pspTimeoutMs,
      },
      { now: new Date() },
    );
    await sandbox.settled();
    await receiver.drain();
    step(
      `healing: ${heal.requested} re-send requests for webhooks that never arrived (${heal.failed} failed); re-sent webhooks ingested`,
    );

    const projected = await runProjections(
      { sql: rt.sql, store: rt.store, log, timezone: zone, graceHours: config.graceHours, bank: config.bank },
      { signal: opts.signal },
    );
    const applied = Object.fromEntries(projected.projections.map((p) => [p.name, p.applied]));
    step(`projections caught up: ${projected.projections.map((p) => `${p.name} +${p.applied}`).join(', ')}`);

    const found = await listDiscrepancies(rt.sql, { timezone: zone });
    if (!found.ok) throw new Error(found.message);
    // the money discrepancies (settlement_*, payout_*) are the money loop's, counted after the bank import;
    // a resolved one is no finding (an order not yet synced, a webhook healing brought)
    const standing = found.value.filter((d) => !isMoneyType(d.type) && d.status !== 'resolved');
    const pspFound = standing
      .filter((d) => (RECONCILIATION_TYPES as readonly string[]).includes(d.type))
      .map((d) => pspFindingKey({ type: d.type, paymentId: d.payment_id }));
    const pspExpected = pspTruthKeys(sandbox.scenario.groundTruth);
    const orderRows = await rt.sql<
      { type: string; order_id: string | null; payment_id: string | null; sub_merchant_id: string | null }[]
    >`select type, order_id, payment_id, sub_merchant_id from recon.order_discrepancies where status = 'open'`;
    const orderFound = orderRows
      .map((r) =>
        orderFindingKey({
          type: r.type,
          orderId: r.order_id,
          paymentId: r.payment_id,
          subMerchantId: r.sub_merchant_id,
        }),
      )
      .sort();
    const checks: DemoCheck[] = [
      compareFindings('PSP sources (type, payment)', pspFound, pspExpected),
      compareFindings("orders (type, order, payment, a fee's sub-merchant)", orderFound, intent.expected),
    ];
    const discrepancies = countByType([...pspFound, ...orderFound]);
    const groundTruth = countByType([...pspExpected, ...intent.expected]);
    step(
      `orders against the PSP: found ${
        Object.entries(countByType(orderFound))
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'nothing'
      }; ${checkLines([checks[1]!])[1]!.trim()}`,
    );

    ensureOutDir(opts.outDir, '--out');
    const issued = await issueStatements(
      {
        sql: rt.sql,
        store: rt.store,
        log,
        timezone: zone,
        statements: demoStatementsConfig(statementsConfigFromEnv()),
      },
      // a month not ended (asked for with --month) is shown as the draft it is
      { month, outDir: opts.outDir, provisional: monthStart.plus({ months: 1 }) > DateTime.now() },
    );
    step(
      `statements for ${month}: ${issued.statements} workbooks + payouts index, ${issued.lines} operation lines, cut at position ${issued.position}`,
    );
    const money = await moneyLoop(rt, config, log, sandbox.scenario, { ...opts, month }, step);
    checks.push(money.check);
    await printPayoutCheck({ ...rt, bank: config.bank, scenario: sandbox.scenario }, month, step);
    const reportDate = monthStart.plus({ months: 1 }).minus({ days: 1 }).toISODate()!;
    const report = await writeNightlyReportFor(
      { sql: rt.sql, store: rt.store },
      {
        date: reportDate,
        timezone: zone,
        graceHours: config.graceHours,
        outDir: opts.outDir,
        facts: [
          ['Run', 'recon demo'],
          ['Sandbox seed', opts.seed],
        ],
      },
    );
    step(`nightly report for ${reportDate}: ${path.relative(process.cwd(), report.file)}`);

    const metrics = receiver.metrics();
    await demoApp.close({ graceMs: 2000 });
    const [events] = await rt.sql<{ n: number }[]>`select count(*)::int as n from es_events`.catch(() => [{ n: -1 }]);
    return {
      month,
      posId: projects[0]!.posId,
      events: events?.n ?? -1,
      sync: { windows: sync.completed, records: sync.records, appended: sync.appended },
      webhooks: {
        delivered: delivery.delivered,
        duplicates: delivery.duplicatesSent,
        lost: delivery.lostByScenario + delivery.lostOnDelivery,
        accepted: metrics.accepted,
        rejected: metrics.received - metrics.accepted,
      },
      healing: { requested: heal.requested },
      projections: applied,
      discrepancies,
      groundTruth,
      check: { passed: checks.every((c) => c.passed), checks },
      orders: { found: orderFound, expected: intent.expected },
      statements: {
        files: issued.files.map((f) => f.path),
        position: issued.position,
        figuresSha256: issued.figuresSha256,
        newRun: issued.newEvent,
      },
      nightlyReport: report.file,
      money,
    };
  } finally {
    await app.close({ graceMs: 100 }).catch(() => {});
    await sandbox.close();
    await closeRuntime(rt);
  }
}

/** After the statements: the bank pays, its statements are imported, recon matches (src/cli/demo-bank.ts). */
async function moneyLoop(
  rt: Awaited<ReturnType<typeof openRuntime>>,
  config: Config,
  log: Logger,
  scenario: Parameters<typeof bankLoop>[0]['scenario'],
  opts: DemoOptions,
  step: (text: string) => void,
): Promise<DemoSummary['money'] & { check: DemoCheck }> {
  const deps = {
    sql: rt.sql,
    store: rt.store,
    log,
    timezone: config.timezone,
    graceHours: config.graceHours,
    bank: config.bank,
  };
  // the payouts read model learns the expected payouts the statements recorded
  await runProjections(deps, { signal: opts.signal });
  const loop = await bankLoop({
    sql: rt.sql,
    store: rt.store,
    bank: config.bank,
    scenario,
    outDir: opts.outDir,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  step(
    `sandbox bank: ${loop.expectedPayouts} expected payouts paid; ${loop.files.camt053} camt.053 and ${loop.files.mt940} MT940 statements in ${path.relative(process.cwd(), loop.files.dir)}`,
  );
  step(`bank import refused the statement that does not foot: ${loop.refused}`);
  step(
    `bank import: ${loop.imported.statements} statements, ${loop.imported.entries} new entries (${loop.imported.known} already known)`,
  );
  await runProjections(deps, { signal: opts.signal });
  const found = await listDiscrepancies(rt.sql, { timezone: config.timezone });
  if (!found.ok) throw new Error(found.message);
  // keyed as the bank's ground truth is: a payout by its reference, a settlement by the day(s) it was due
  const moneyFound = found.value
    .filter((d) => isMoneyType(d.type) && d.status !== 'resolved')
    .map((d) => `${d.type} ${String(d.values['reference'] ?? [d.values['due_on']].flat().join(','))}`);
  const moneyExpected = loop.truth.flatMap((t) =>
    'reference' in t ? [`${t.type} ${t.reference}`] : 'dueOn' in t ? [`${t.type} ${t.dueOn}`] : [],
  );
  const discrepancies = countByType(moneyFound);
  const groundTruth = countByType(moneyExpected);
  const paidOut = (await paidOutLines(rt.sql)).map((r) => ({
    reference: r.reference,
    payee: r.payee_name,
    currency: r.currency,
    amount: r.amount,
    paidOut: r.paid_out,
    status: r.status,
    paidOn: r.paid_on,
  }));
  step(
    `money: ${paidOut.filter((p) => p.status === 'paid').length} of ${paidOut.length} payouts paid; discrepancies ${JSON.stringify(discrepancies)}`,
  );
  const payoutStatuses = await payoutStatusReport(rt, config, opts.outDir, opts.month!, loop);
  step(
    `payout status (what the bank did, ${path.relative(process.cwd(), payoutStatuses.file)}): ${JSON.stringify(payoutStatuses.found)}; the bank's ground truth ${JSON.stringify(payoutStatuses.truth)}`,
  );
  const booked = await bookedCharges(rt.sql);
  const takenByCurrency: Record<string, string> = {};
  for (const c of loop.charges)
    takenByCurrency[c.currency] = (BigInt(takenByCurrency[c.currency] ?? '0') + c.amount).toString();
  const charges = {
    booked: booked.count,
    bookedByCurrency: booked.byCurrency,
    taken: loop.charges.length,
    takenByCurrency: Object.fromEntries(Object.entries(takenByCurrency).sort(([a], [b]) => a.localeCompare(b))),
  };
  step(
    `bank charges booked as bank fees: ${charges.booked} of the ${charges.taken} the bank took (${Object.entries(
      charges.bookedByCurrency,
    )
      .map(([c, v]) => `${formatMinor(BigInt(v))} ${c}`)
      .join(', ')})`,
  );
  return {
    files: loop.files,
    imported: loop.imported,
    refused: loop.refused,
    discrepancies,
    groundTruth,
    paidOut,
    payoutStatuses,
    charges,
    check: compareFindings('bank (type, payout reference or settlement day)', moneyFound, moneyExpected),
  };
}

/**
 * The month's payout status workbook, written after the bank paid (the statements were issued before it): every
 * expected payout with what the bank did, read as a statement reads it, and the bank world's ground truth.
 */
async function payoutStatusReport(
  rt: Awaited<ReturnType<typeof openRuntime>>,
  config: Config,
  outDir: string,
  month: string,
  loop: Awaited<ReturnType<typeof bankLoop>>,
): Promise<DemoSummary['money']['payoutStatuses']> {
  const head = await rt.store.headPosition();
  const day = head ? await cutDay(rt.store, head, config.timezone) : null;
  const all = head ? ((await payoutStatusesAt(rt.sql, head, config.bank.payouts, day)) ?? []) : [];
  const lines = all.filter((l) => l.month === month);
  const file = path.join(outDir, payoutStatusFileName(month));
  await writePayoutStatusWorkbook(file, lines, {
    month,
    position: head ? formatPosition(head) : '',
    writtenAt: new Date(),
  });
  const truth = statusTruth(
    lines.map((l) => l.reference),
    loop.truth,
  );
  return {
    found: countByType(lines.map((l) => l.status)),
    truth: countByType(Object.values(truth)),
    file,
  };
}

// Test cards of the sandbox: outcome by the last four digits (0002 declined). Card data goes to the PSP
// only; recon keeps masks.
const TEST_CARDS = ['4111111111111111', '4000000000000002'];

/** A few purchases made through the real client (direct with card data, hosted with a redirect). */
async function livePurchases(
  store: EventStore,
  project: PspProject,
  subMerchantIds: string[],
  serverUrl: string,
  log: Logger,
  month: string,
): Promise<string[]> {
  // the client records each purchase's order first (src/ingest/orders/purchase-orders.ts)
  const client = recordingPurchases(createPspPurchaseClient(project, { log }), store);
  const out: string[] = [];
  const customer = {
    customer_fname: 'Demo',
    customer_lname: 'Customer',
    customer_email: 'demo@example.com',
    customer_phone: '+380000000000',
  };
  const year = (new Date().getUTCFullYear() + 2) % 100;
  for (const [i, card] of TEST_CARDS.entries()) {
    const r = await client
      .splitPurchase({
        pos_id: project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 150.5,
        currency: 'UAH',
        description: 'demo direct purchase',
        order_id: `DEMO-${month}-D${i}`,
        order_3ds_bypass: 'always',
        cc_number: card,
        exp_month: 12,
        exp_year: year,
        card_cvv: '123',
        ...customer,
        customer_ip: '127.0.0.1',
        server_url: serverUrl,
        split: [
          { amount: 100, sub_merchant_id: subMerchantIds[0]! },
          { amount: 50.5, sub_merchant_id: subMerchantIds[1]! },
        ],
      })
      .catch((e: Error) => ({ kind: 'error' as const, message: e.message }));
    out.push(
      r.kind === 'direct'
        ? `direct ${maskPan(card)} → ${r.record.status}`
        : r.kind === 'error'
          ? `direct ${maskPan(card)} → ${r.message}`
          : 'direct → redirect',
    );
  }
  const hosted = await client
    .splitPurchase({
      pos_id: project.posId,
      mode: 'hosted',
      method: 'purchase',
      amount: 20,
      currency: 'UAH',
      description: 'demo hosted purchase',
      order_id: `DEMO-${month}-H0`,
      order_3ds_bypass: 'always',
      customer_patronym: 'Demovych',
      ...customer,
      server_url: serverUrl,
      split: [{ amount: 20, sub_merchant_id: subMerchantIds[0]! }],
    })
    .catch((e: Error) => ({ kind: 'error' as const, message: e.message }));
  out.push(
    hosted.kind === 'hosted'
      ? 'hosted → 303 to the checkout form'
      : hosted.kind === 'error'
        ? `hosted → ${hosted.message}`
        : 'hosted → record',
  );
  return out;
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
    'Next: npx recon discrepancies --format table · npx recon explain <payment_id> · open the workbooks in ./out',
  ];
  return lines.join('\n');
}
