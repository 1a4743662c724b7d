import { allJobs } from '../../jobs/index';
import { secretValues } from '../config/env';
import { unknownVariableWarnings } from '../config/unknown-variables';
import { createHttpApp } from '../http/http-app';
import { createWebhookReceiver } from '../http/receiver';
import { createAuditorApi } from '../http/auditor-api';
import { directoryReader } from '../people/authenticate';
import { createOrdersApi } from '../http/orders-api';
import { createPayoutRunsApi } from '../http/payout-runs-api';
import { paidByBankOf } from '../payout-runs/bank-paid';
import { resolvedNowOf } from '../payout-runs/resolved';
import { metricsRoute } from '../http/metrics';
import { createExceptionsApi } from '../http/exceptions-api';
import { exceptionPolicyOf } from '../exceptions/policy';
import { createConsole, LOGIN_LIMIT } from '../console/console';
import { createRejectionLimiter } from '../http/rate-limit';
import { followProjections, listQuarantine } from '../projector/runner';
import { createScheduler, type Scheduler } from '../scheduler/scheduler';
import { storeReadiness } from '../store/transaction-counter';
import { asyncRoute, type Degradation, readinessRoute } from '../http/routes';
import type { Sql } from '../db/connect';
import type { Logger } from '../log';
import { boundStop, stopBounds } from './shutdown';
import { type Runtime, runnerDepsOf } from './runtime';

/** The projections' side of /readyz: events set aside, and a live run that keeps failing. */
function projectionHealth(sql: Sql) {
  let failing: { error: string; since: Date } | undefined;
  return {
    failed(e: unknown) {
      failing = { error: e instanceof Error ? e.message : String(e), since: failing?.since ?? new Date() };
    },
    succeeded() {
      failing = undefined;
    },
    async degraded(): Promise<Degradation[]> {
      const byName = new Map<string, number>();
      for (const q of await listQuarantine(sql)) byName.set(q.projection, (byName.get(q.projection) ?? 0) + 1);
      const out: Degradation[] = [...byName].map(([projection, count]) => ({
        reason: 'events_quarantined',
        projection,
        count,
        detail: `${count} event${count === 1 ? '' : 's'} set aside by projection ${projection} (recon quarantine list)`,
      }));
      if (failing)
        out.push({
          reason: 'projections_failing',
          detail: `live projections failing since ${failing.since.toISOString()}: ${failing.error}`,
        });
      return out;
    },
  };
}

async function warnQuarantined(sql: Sql, log: Logger): Promise<void> {
  const open = await listQuarantine(sql).catch(() => []);
  if (open.length > 0)
    log.warn('events set aside by projections are waiting: recon quarantine list, then retry once fixed', {
      events: open.length,
      projections: [...new Set(open.map((q) => q.projection))],
    });
}

export interface WorkerOptions {
  readonly port: number;
  readonly host: string;
  readonly scheduler?: boolean;
  readonly projections?: boolean;
  /** which projections this worker may keep live, and how many at once (shared with other workers) */
  readonly share?: { readonly names?: readonly string[]; readonly max?: number };
}

/** The console (src/console), on the worker's store, users, settings and scheduler. */
function consoleOf(rt: Runtime, directory: ReturnType<typeof directoryReader>, scheduler: Scheduler) {
  const { config, log } = rt;
  return createConsole({
    sql: rt.sql,
    store: rt.store,
    directory,
    auditorToken: config.auditorToken,
    timezone: config.timezone,
    outDir: config.outDir,
    trust: config.webhook,
    scheduler,
    log,
    loginLimiter: createRejectionLimiter(LOGIN_LIMIT),
    policy: exceptionPolicyOf(config.exceptions).policy,
    bank: config.bank,
  });
}

/** The HTTP side: webhook receiver, orders and auditor APIs, readiness, on one server. */
async function startHttp(
  rt: Runtime,
  opts: WorkerOptions,
  health: ReturnType<typeof projectionHealth>,
  scheduler: Scheduler,
) {
  const { config, log } = rt;
  const receiver = createWebhookReceiver({
    store: rt.store,
    projects: config.projects,
    log,
    options: config.webhook,
    ready: storeReadiness(rt.store, rt.sql),
  });
  // one view of the users for every surface: a revoked token stops everywhere at once
  const directory = directoryReader(rt.store);
  const auditor = createAuditorApi({
    sql: rt.sql,
    token: config.auditorToken,
    directory,
    timezone: config.timezone,
  });
  const orders = createOrdersApi({
    store: rt.store,
    token: config.ordersToken,
    sql: rt.sql,
    auditorToken: config.auditorToken,
  });
  const payoutRuns = createPayoutRunsApi({
    store: rt.store,
    directory,
    auditorToken: config.auditorToken,
    timezone: config.timezone,
    bank: config.bank,
    resolvedNow: resolvedNowOf(rt.sql),
    paidByBank: () => paidByBankOf(rt.sql, rt.store, config.bank.payouts, config.timezone),
  });
  const exceptions = createExceptionsApi({
    sql: rt.sql,
    store: rt.store,
    directory,
    policy: exceptionPolicyOf(config.exceptions).policy,
    auditorToken: config.auditorToken,
  });
  const consoleRoute = consoleOf(rt, directory, scheduler);
  const readiness = readinessRoute({ ready: storeReadiness(rt.store, rt.sql), degraded: () => health.degraded() }, log);
  const metrics = metricsRoute({
    sql: rt.sql,
    store: rt.store,
    timezone: config.timezone,
    token: config.metricsToken,
    log,
  });
  const app = createHttpApp({
    routes: [
      readiness,
      metrics,
      receiver.handle,
      asyncRoute('/api/orders', orders, log),
      asyncRoute('/api/payout-runs', payoutRuns, log),
      asyncRoute('/api/exceptions', exceptions, log),
      asyncRoute('/api', auditor, log),
      asyncRoute('/console', consoleRoute, log),
    ],
    log,
  });
  const { url } = await app.listen(opts.port, opts.host);
  log.info('worker listening', {
    url,
    projects: config.projects.map((p) => p.posId),
    auditorApi: config.auditorToken !== undefined,
  });
  process.stdout.write(
    `recon worker listening on ${url} (webhooks: POST /webhooks/<pos_id>; auditor API: GET /api/...; console: ${url}/console)\n`,
  );
  return { app, receiver };
}

/**
 * The live projections of this worker: those whose claim it holds (src/projector/claims.ts), so that several
 * workers on one database share them and take over those of a worker that dies.
 */
function followLive(
  rt: Runtime,
  signal: AbortSignal,
  opts: WorkerOptions,
  health: ReturnType<typeof projectionHealth>,
): Promise<void> {
  if (opts.projections === false) return Promise.resolve();
  const { log } = rt;
  return followProjections(runnerDepsOf(rt), {
    signal,
    pollMs: 500,
    share: opts.share ?? {},
    onReport: () => health.succeeded(),
    onError: (e) => health.failed(e),
  }).catch((e: unknown) => {
    if (!signal.aborted) log.error('live projections stopped', { error: e });
  });
}

/** The jobs' scheduler: made before the HTTP side (the console's "run now" uses it), its loops started after. */
function makeScheduler(rt: Runtime): Scheduler {
  const { config, log } = rt;
  return createScheduler({
    jobs: allJobs({ config, sql: rt.sql, store: rt.store, log }),
    sql: rt.sql,
    timezone: config.timezone,
    log,
    worker: `pid-${process.pid}`,
    secrets: secretValues(config),
  });
}

function startScheduler(rt: Runtime, opts: WorkerOptions, scheduler: Scheduler): void {
  if (opts.scheduler === false) return;
  scheduler.start();
  for (const s of scheduler.schedules())
    rt.log.info('job scheduled', { job: s.name, cron: s.cron, nextRun: s.nextRun.toISOString() });
}

/**
 * The long-running worker: webhook receiver and auditor API on one HTTP server, live projections and the
 * job scheduler. Resolves when `signal` aborts and everything has stopped: the HTTP server finishes the
 * requests in flight, pending webhook appends are flushed, running jobs see their signal and finish.
 */
export async function runWorker(rt: Runtime, signal: AbortSignal, opts: WorkerOptions): Promise<void> {
  const { log } = rt;
  // armed first: whatever the worker waits for when the signal comes, it stops within the bounds
  boundStop(rt.sql, signal, log, stopBounds({ graceMs: 15_000, hardMs: 10_000 }), 'recon start');
  const health = projectionHealth(rt.sql);
  const scheduler = makeScheduler(rt);
  const { app, receiver } = await startHttp(rt, opts, health, scheduler);
  void warnQuarantined(rt.sql, log);
  for (const w of unknownVariableWarnings(process.env)) log.warn(`configuration: ${w}`);
  const projections = followLive(rt, signal, opts, health);
  startScheduler(rt, opts, scheduler);

  await new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  log.info('worker stopping');
  await app.close({ graceMs: 10_000 });
  await receiver.drain();
  // also when its loops were off: it waits for a run started from the console
  await scheduler.stop();
  await projections;
  log.info('worker stopped', { webhooks: receiver.metrics() });
}
