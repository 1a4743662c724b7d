import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { connect } from '../src/db/connect';
import { createHttpApp } from '../src/http/http-app';
import { createWebhookReceiver } from '../src/http/receiver';
import { createLogger } from '../src/log';
import { encodeBase64Url, sign } from '../src/psp/signature';
import { createPostgresEventStore } from '../src/store/postgres';
import { cpuPer, serverCpuMeter } from './cpu';
import { perSecond, sampleRss, type BenchContext } from './harness';
import { signedAhead, webhookRequests } from './webhook-load';

/**
 * Issue 4's ingestion benchmarks.
 *  1. Webhook receiver under autocannon (64 connections, or INGEST_BENCH_CONNECTIONS: each one a sender
 *     waiting for its answer; distinct signed webhooks, INGEST_BENCH_SECONDS, default 20 s): durable
 *     webhooks/s and p99 beside the same receiver answering without the append (the ceiling); afterwards
 *     every webhook answered 200 is looked up in the store.
 *  2. Sync: register reports from the sandbox into the store (see syncBench below).
 * The receiver runs in a child process of its own (this file with RECON_BENCH_RECEIVER=1), so the load
 * generator does not share its thread.
 */

interface LoadResult {
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
  latency: { p50: number; p99: number };
}
// autocannon ships no type declarations: the few fields used here are typed by hand.
const autocannon = createRequire(import.meta.url)('autocannon') as (
  opts: Record<string, unknown>,
) => Promise<LoadResult>;

const POS_ID = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const SECRET = 'sk_bench_webhook_secret';
const THIS_FILE = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------- receiver child

async function receiverChild(): Promise<void> {
  const sql = connect(process.env.RECON_BENCH_DB_URL!, { max: 16 });
  const store = createPostgresEventStore(sql);
  const log = createLogger({ level: 'error' });
  const projects = [{ name: 'bench', posId: POS_ID, apiSecret: SECRET }];
  const options = { allowedIps: [], trustProxy: false, maxBodyBytes: 65_536 };
  // INGEST_BENCH_GROUP=maxBatch,maxInFlight tries other group-commit settings than the receiver's defaults.
  const [maxBatch, maxInFlight] = (process.env.INGEST_BENCH_GROUP ?? '')
    .split(',')
    .map((v) => (v ? Number(v) : undefined));
  const groupCommit = { maxBatch, maxInFlight };
  const durable = createHttpApp({
    routes: [createWebhookReceiver({ store, projects, log, options, groupCommit }).handle],
    log,
  });
  const ceiling = createHttpApp({
    routes: [createWebhookReceiver({ store, projects, log, options, durable: false }).handle],
    log,
  });
  const a = await durable.listen(0);
  const b = await ceiling.listen(0);
  process.stdout.write(JSON.stringify({ durable: a.url, ceiling: b.url }) + '\n');
  process.once('SIGTERM', () => {
    void (async () => {
      await durable.close({ graceMs: 5000 });
      await ceiling.close({ graceMs: 5000 });
      await sql.end({ timeout: 5 });
      process.exit(0);
    })();
  });
}

if (process.env.RECON_BENCH_RECEIVER === '1') void receiverChild();

async function startReceiver(dbUrl: string): Promise<{ child: ChildProcess; durable: string; ceiling: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', THIS_FILE], {
    env: { ...process.env, RECON_BENCH_RECEIVER: '1', RECON_BENCH_DB_URL: dbUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  });
  const urls = JSON.parse(line) as { durable: string; ceiling: string };
  return { child, ...urls };
}

function webhookForm(paymentId: string, n: number): string {
  const body = {
    payment_id: paymentId,
    order_id: `bench-${n}`,
    transaction_id: randomUUID(),
    pos_id: POS_ID,
    mode: 'direct',
    method: 'purchase',
    amount: Number(((1000 + (n % 90_000)) / 100).toFixed(2)),
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'transaction is successful',
    fee: { amount: 2.5, currency: 'UAH' },
    cc_mask: '537541******7421',
    created_at: '2025-03-01T10:00:00.000',
    processed_at: '2025-03-01T10:00:02.000',
  };
  const data = encodeBase64Url(JSON.stringify(body));
  return `data=${data}&signature=${encodeURIComponent(sign(SECRET, data))}`;
}

let signedSoFar = 0;
const CONNECTIONS = Number(process.env.INGEST_BENCH_CONNECTIONS ?? 64);

async function load(
  url: string,
  seconds: number,
): Promise<{ ok: string[]; non2xx: number; errors: number; rps: number; p99: number; p50: number }> {
  const ok: string[] = [];
  // Signed before the load starts (see webhook-load.ts): more than the receiver can take.
  const ahead = signedAhead(webhookForm, 8_000 * seconds, signedSoFar);
  signedSoFar += ahead.length;
  const result = await autocannon({
    url: `${url}/webhooks/${POS_ID}`,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    requests: webhookRequests(webhookForm, ahead, signedSoFar, ok),
  });
  return {
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    rps: result['2xx'] / result.duration,
    p99: result.latency.p99,
    p50: result.latency.p50,
  };
}

async function webhookBench(ctx: BenchContext): Promise<void> {
  const seconds = Number(process.env.INGEST_BENCH_SECONDS ?? (ctx.quick ? 3 : 20));
  const receiver = await startReceiver(ctx.url);
  try {
    const serverCpu = await serverCpuMeter(ctx.sql);
    const ceilingCpu = await cpuPer(
      (r) => r.ok.length,
      { serverCpu, otherPid: receiver.child.pid },
      () => load(receiver.ceiling, seconds),
    );
    const durableCpu = await cpuPer(
      (r) => r.ok.length,
      { serverCpu, otherPid: receiver.child.pid },
      () => load(receiver.durable, seconds),
    );
    const ceiling = ceilingCpu.result;
    const durable = durableCpu.result;
    for (const [name, c] of [
      ['ceiling', ceilingCpu],
      ['durable', durableCpu],
    ] as const) {
      ctx.note(
        `  CPU per webhook, ${name}: receiver ${c.other} µs, PostgreSQL ${c.server} µs, load generator ${c.self} µs`,
      );
    }
    ctx.note(
      `webhooks: ${CONNECTIONS} connections, ${seconds} s each; ceiling ${ceiling.ok.length} answered 200 (p50 ${ceiling.p50} ms), durable ${durable.ok.length} answered 200 (p50 ${durable.p50} ms), non-2xx ${durable.non2xx}, errors ${durable.errors}`,
    );
    ctx.figure({
      name: 'durable webhooks',
      value: durable.rps,
      unit: 'webhooks/s',
      reference: { name: 'same receiver without append', value: ceiling.rps },
      target: { min: 3000, text: '≥ 3,000/s' },
    });
    ctx.figure({
      name: 'durable webhook p99 latency',
      value: durable.p99,
      unit: 'ms',
      reference: { name: 'without append p99', value: ceiling.p99 },
      target: { max: 50, text: '< 50 ms' },
    });
    // Every 200 must be in the store: look each answered payment up.
    const found = await countStored(ctx, durable.ok);
    ctx.note(
      `webhooks answered 200: ${durable.ok.length}; found in the store: ${found}${found === durable.ok.length ? ' (all)' : ' (MISSING SOME)'}`,
    );
    ctx.figure({
      name: 'webhooks answered 200 missing from the store',
      value: durable.ok.length - found,
      unit: 'webhooks',
      target: { max: 0, text: 'none' },
    });
  } finally {
    receiver.child.kill('SIGTERM');
    await new Promise((r) => receiver.child.once('exit', r));
  }
}

async function countStored(ctx: BenchContext, paymentIds: string[]): Promise<number> {
  let found = 0;
  for (let i = 0; i < paymentIds.length; i += 10_000) {
    const streams = paymentIds.slice(i, i + 10_000).map((id) => `payment-${POS_ID}-${id}`);
    const [row] = await ctx.sql<{ n: number }[]>`
      select count(distinct stream_id)::int as n from es_events where stream_id = any(${streams}::text[]) and type = 'WebhookReceived'`;
    found += row?.n ?? 0;
  }
  return found;
}

export async function run(ctx: BenchContext): Promise<void> {
  const only = process.env.INGEST_BENCH_ONLY;
  // Sync first: its peak RSS is sampled in this process, and the webhook load's signed bodies would
  // still be resident after it (RSS does not shrink back after a collection).
  if (!only || only === 'sync') await syncBench(ctx);
  if (!only || only === 'webhooks') await webhookBench(ctx);
}

// ---------------------------------------------------------------- sync

/** Sandbox child: one sandbox per size, so that report generation has its own process and memory. */
async function sandboxChild(): Promise<void> {
  const { startSandbox } = await import('../src/sandbox/server');
  const sizes = (process.env.RECON_BENCH_SANDBOX_PAYMENTS ?? '').split(',').map(Number);
  const out = [];
  for (const payments of sizes) {
    const sb = await startSandbox({
      scenario: { seed: `bench-${payments}`, month: '2025-01', timezone: 'UTC', payments },
      faults: { reportNotReadyPolls: 0 },
    });
    out.push({ payments, projects: sb.projects });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

if (process.env.RECON_BENCH_SANDBOX === '1') void sandboxChild();

// January's register holds about 3.4 rows per payment (split operations give one row per receiver).
const ROWS_PER_PAYMENT = 3.42;

async function syncBench(ctx: BenchContext): Promise<void> {
  const { syncRange } = await import('../src/ingest/sync');
  const { createPspClient } = await import('../src/psp/client');
  const { registerObservation } = await import('./store');
  const { toAppendRequests } = await import('../src/ingest/observations');
  const targets = ctx.quick ? [10_000, 40_000] : [50_000, 200_000];
  const child = spawn(process.execPath, ['--import', 'tsx', THIS_FILE], {
    env: {
      ...process.env,
      RECON_BENCH_SANDBOX: '1',
      RECON_BENCH_SANDBOX_PAYMENTS: targets.map((t) => Math.ceil(t / ROWS_PER_PAYMENT)).join(','),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
    });
    const sandboxes = JSON.parse(line) as Array<{
      payments: number;
      projects: import('../src/config/env').PspProject[];
    }>;

    // Reference: the raw batched append rate of the store (batches of 1,000 observations), same run.
    const store = createPostgresEventStore(ctx.sql);
    const rawCount = ctx.quick ? 20_000 : 50_000;
    const serverCpu = await serverCpuMeter(ctx.sql);
    const t0 = performance.now();
    const raw = await cpuPer(
      () => rawCount,
      { serverCpu },
      async () => {
        for (let i = 0; i < rawCount; i += 1000) {
          const batch = Array.from({ length: 1000 }, (_, k) => registerObservation(i + k, 'raw'));
          // one request per stream, as sync's batches (two observations per payment)
          await store.appendMany(
            toAppendRequests(batch.map((b) => ({ stream: `payment-${POS_ID}-${b.paymentId}`, event: b.event }))),
          );
        }
      },
    );
    const rawRate = perSecond(rawCount, performance.now() - t0);
    ctx.note(
      `raw batched append: ${rawCount} events; CPU per event: PostgreSQL ${raw.server} µs, this process ${raw.self} µs (building the events included)`,
    );

    for (const sb of sandboxes) {
      const db = await ctx.createDatabase({ max: 10 });
      const deps = {
        store: createPostgresEventStore(db.sql),
        projects: sb.projects,
        log: ctx.log,
        timezone: 'UTC',
        reportMaxWaitMs: 60_000,
        clientFor: (p: import('../src/config/env').PspProject) => createPspClient(p, { timeoutMs: 120_000 }),
      };
      (globalThis as { gc?: () => void }).gc?.();
      const rss = sampleRss(20);
      const started = performance.now();
      // One 31-day window: January.
      const cpu = await cpuPer(
        (r) => r.records,
        { serverCpu, otherPid: child.pid },
        () => syncRange(deps, { from: '2025-01-01', to: '2025-02-01' }),
      );
      const report = cpu.result;
      const ms = performance.now() - started;
      const peak = rss.stop();
      const w = report.windows[0]!;
      const records = (w.registerRecords ?? 0) + (w.periodRecords ?? 0);
      ctx.note(
        `sync of ${w.registerRecords} register + ${w.periodRecords} period records (${sb.payments} payments): ${(ms / 1000).toFixed(1)} s, ${report.appended} events appended, peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`,
      );
      ctx.note(
        `  CPU per record: sync ${cpu.self} µs, sandbox ${cpu.other} µs, PostgreSQL ${cpu.server} µs (background ${cpu.serverBackground} µs); wall ${((ms * 1000) / records).toFixed(0)} µs (2 cores shared)`,
      );
      ctx.figure({
        name: `sync end to end, ${w.registerRecords} register records`,
        value: perSecond(records, ms),
        unit: 'records/s',
        reference: { name: 'raw batched append', value: rawRate },
        target: { min: 20_000, text: '≥ 20k/s' },
      });
      ctx.figure({ name: `sync peak RSS, ${w.registerRecords} register records`, value: peak / 2 ** 20, unit: 'MB' });
    }
  } finally {
    child.kill('SIGTERM');
  }
}
