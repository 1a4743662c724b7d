import { allJobs } from '../../jobs/index';
import { createHttpApp } from '../http/http-app';
import { createWebhookReceiver } from '../http/receiver';
import { createAuditorApi } from '../http/auditor-api';
import { createOrdersApi } from '../http/orders-api';
import { followProjections } from '../projection/runner';
import { createScheduler } from '../scheduler/scheduler';
import { storeReadiness } from '../store/transaction-counter';
import { asyncRoute } from '../http/routes';
import type { Runtime } from './runtime';

export interface WorkerOptions {
  readonly port: number;
  readonly host: string;
  readonly scheduler?: boolean;
  readonly projections?: boolean;
}

/**
 * The long-running worker: webhook receiver and auditor API on one HTTP server, live projections and the
 * job scheduler. Resolves when `signal` aborts and everything has stopped: the HTTP server finishes the
 * requests in flight, pending webhook appends are flushed, running jobs see their signal and finish.
 */
export async function runWorker(rt: Runtime, signal: AbortSignal, opts: WorkerOptions): Promise<void> {
  const { config, log } = rt;
  const receiver = createWebhookReceiver({
    store: rt.store,
    projects: config.projects,
    log,
    options: config.webhook,
    ready: storeReadiness(rt.store, rt.sql),
  });
  const auditor = createAuditorApi({ sql: rt.sql, token: config.auditorToken, timezone: config.timezone });
  const orders = createOrdersApi({
    store: rt.store,
    token: config.ordersToken,
    sql: rt.sql,
    auditorToken: config.auditorToken,
  });
  const app = createHttpApp({
    routes: [receiver.handle, asyncRoute('/api/orders', orders, log), asyncRoute('/api', auditor, log)],
    log,
  });
  const { url } = await app.listen(opts.port, opts.host);
  log.info('worker listening', {
    url,
    projects: config.projects.map((p) => p.posId),
    auditorApi: config.auditorToken !== undefined,
  });
  process.stdout.write(
    `recon worker listening on ${url} (webhooks: POST /webhooks/<pos_id>; auditor API: GET /api/...)\n`,
  );

  const projections =
    opts.projections === false
      ? Promise.resolve()
      : followProjections(
          {
            sql: rt.sql,
            store: rt.store,
            log,
            timezone: config.timezone,
            graceHours: config.graceHours,
            bank: config.bank,
          },
          { signal, pollMs: 500 },
        ).catch((e: unknown) => {
          if (!signal.aborted) log.error('live projections stopped', { error: e });
        });

  const scheduler =
    opts.scheduler === false
      ? undefined
      : createScheduler({
          jobs: allJobs({ config, sql: rt.sql, store: rt.store, log }),
          sql: rt.sql,
          timezone: config.timezone,
          log,
          worker: `pid-${process.pid}`,
        });
  if (scheduler) {
    scheduler.start();
    for (const s of scheduler.schedules())
      log.info('job scheduled', { job: s.name, cron: s.cron, nextRun: s.nextRun.toISOString() });
  }

  await new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  log.info('worker stopping');
  await app.close({ graceMs: 10_000 });
  await receiver.drain();
  await scheduler?.stop();
  await projections;
  log.info('worker stopped', { webhooks: receiver.metrics() });
}
