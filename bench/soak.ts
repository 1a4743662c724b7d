import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { encodeBase64Url, sign } from '../src/psp/signature';
import { pspEnv } from '../fixtures/psp-env';
import type { BenchContext } from './harness';
import { signedAhead, webhookRequests } from './webhook-load';

/**
 * Issue 7's soak: `recon serve` (a process of its own) takes signed webhooks at a fixed rate (SOAK_RATE,
 * default 2,000/s) for SOAK_SECONDS (default 60; 10 with --quick), twice in the same run:
 *   1. reference: the receiver alone;
 *   2. the same receiver with `recon sync` running alongside (a sandbox PSP in another process, the sync
 *      run again and again until the load ends), against the same database.
 * Then the count: every webhook answered 200 must be in the store exactly once. Figures: p99 of each
 * phase (target < 100 ms with the sync), rate achieved, answers other than 200, store count.
 * The load generator (autocannon) is this process; receiver, sandbox and sync are children.
 */

interface LoadResult {
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
  requests: { total: number };
  latency: { p50: number; p99: number; max: number };
  statusCodeStats?: Record<string, { count: number }>;
}
// autocannon ships no type declarations: the few fields used here are typed by hand.
const autocannon = createRequire(import.meta.url)('autocannon') as (
  opts: Record<string, unknown>,
) => Promise<LoadResult>;

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/recon.mjs');

interface Project {
  posId: string;
  baseUrl: string;
  reportUrl: string;
  apiKey: string;
  apiSecret: string;
  endpointsKey: string;
}

function onceLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const m = pattern.exec(line);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code} before it was ready`)));
  });
}

async function startSandbox(payments: number): Promise<{ child: ChildProcess; project: Project }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'sandbox',
      '--port',
      '0',
      '--seed',
      'soak',
      '--payments',
      String(payments),
      '--month',
      '2025-01',
      '--not-ready-polls',
      '0',
    ],
    {
      env: { ...process.env, RECON_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const vars: Record<string, string> = {};
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const m = /^\s+(PSP_[A-Z_]+)=(\S+)$/.exec(line);
      if (m) vars[m[1]!] = m[2]!;
      if (/press Ctrl-C/.test(line)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return {
    child,
    project: {
      posId: vars.PSP_POS_ID!,
      baseUrl: vars.PSP_BASE_URL!,
      reportUrl: vars.PSP_REPORT_URL!,
      apiKey: vars.PSP_API_KEY!,
      apiSecret: vars.PSP_API_SECRET!,
      endpointsKey: vars.PSP_ENDPOINTS_KEY!,
    },
  };
}

function reconEnv(dbUrl: string, p: Project): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: dbUrl,
    RECON_TIMEZONE: 'UTC',
    RECON_LOG_LEVEL: 'error',
    RECON_REPORT_MAX_WAIT_MS: '120000',
    RECON_PSP_TIMEOUT_MS: '120000',
    ...pspEnv(p),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

function webhookForm(p: Project, paymentId: string, n: number): string {
  const body = {
    payment_id: paymentId,
    order_id: `soak-${n}`,
    transaction_id: randomUUID(),
    pos_id: p.posId,
    mode: 'direct',
    method: 'purchase',
    amount: Number(((1000 + (n % 90_000)) / 100).toFixed(2)),
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'transaction is successful',
    fee: { amount: 2.5, currency: 'UAH' },
    created_at: '2025-03-01T10:00:00.000',
    processed_at: '2025-03-01T10:00:02.000',
  };
  const data = encodeBase64Url(JSON.stringify(body));
  return `data=${data}&signature=${encodeURIComponent(sign(p.apiSecret, data))}`;
}

interface Phase {
  ok: string[];
  other: Record<string, number>;
  errors: number;
  sent: number;
  rate: number;
  p50: number;
  p99: number;
  max: number;
}

let signedSoFar = 0;

async function load(url: string, p: Project, seconds: number, rate: number): Promise<Phase> {
  const ok: string[] = [];
  const form = (paymentId: string, n: number) => webhookForm(p, paymentId, n);
  // The phase's webhooks, signed before the load starts (see webhook-load.ts): more than it can send.
  const ahead = signedAhead(form, Math.ceil(rate * seconds * 1.05) + 100, signedSoFar);
  signedSoFar += ahead.length;
  const result = await autocannon({
    url: `${url}/webhooks/${p.posId}`,
    connections: 64,
    overallRate: rate,
    duration: seconds,
    timeout: 30,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    requests: webhookRequests(form, ahead, signedSoFar, ok),
  });
  const other: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) if (code !== '200') other[code] = s.count;
  return {
    ok,
    other,
    errors: result.errors + result.timeouts,
    sent: result.requests.total,
    rate: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
  };
}

/** `recon sync` again and again (each run re-reads January) until `until` resolves. */
function syncAlongside(env: NodeJS.ProcessEnv, until: Promise<unknown>, note: (t: string) => void) {
  let stopping = false;
  let current: ChildProcess | undefined;
  const runs: { code: number | null; out: string; ms: number }[] = [];
  void until.then(() => {
    stopping = true;
    current?.kill('SIGTERM');
  });
  const done = (async () => {
    while (!stopping) {
      const started = Date.now();
      const child = spawn(process.execPath, [BIN, 'sync', '--from', '2025-01-01', '--to', '2025-02-01'], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      current = child;
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      runs.push({ code, out, ms: Date.now() - started });
      const last = out.trim().split('\n').pop() ?? '';
      note(
        `sync run ${runs.length}: exit ${code}${stopping ? ' (stopped with the load)' : ''}, ${((Date.now() - started) / 1000).toFixed(1)} s; ${last}`,
      );
      if (code !== 0 && !stopping) break;
    }
  })();
  return { done, runs };
}

async function countInStore(
  ctx: BenchContext,
  p: Project,
  ok: readonly string[],
): Promise<{ once: number; missing: number; doubled: number }> {
  const byStream = new Map<string, number>();
  const rows = await ctx.sql<{ stream: string; n: number }[]>`
    select stream_id as stream, count(*)::int as n from es_events where type = 'WebhookReceived' group by stream_id`;
  for (const r of rows) byStream.set(r.stream, r.n);
  let once = 0;
  let missing = 0;
  let doubled = 0;
  for (const id of ok) {
    const n = byStream.get(`payment-${p.posId}-${id}`) ?? 0;
    if (n === 1) once++;
    else if (n === 0) missing++;
    else doubled++;
  }
  return { once, missing, doubled };
}

export async function run(ctx: BenchContext): Promise<void> {
  const seconds = Number(process.env.SOAK_SECONDS ?? (ctx.quick ? 10 : 60));
  const rate = Number(process.env.SOAK_RATE ?? 2000);
  // About 3.4 register rows per payment: 20,000 payments ≈ 68k register + 20k period records per sync run.
  const payments = Number(process.env.SOAK_SYNC_PAYMENTS ?? (ctx.quick ? 3000 : 20_000));
  ctx.note(
    `soak: ${rate} webhooks/s for ${seconds} s per phase (64 connections); sync of a ${payments}-payment January alongside in phase 2`,
  );

  const sandbox = await startSandbox(payments);
  const env = reconEnv(ctx.url, sandbox.project);
  const receiver = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = (await onceLine(receiver, /listening on (http:\/\/\S+)/, 'recon serve'))[1]!;
    // Warm-up (connections, JIT), not counted.
    await load(url, sandbox.project, 2, Math.min(rate, 500));

    const alone = await load(url, sandbox.project, seconds, rate);
    ctx.note(
      `phase 1, receiver alone: ${alone.sent} sent, ${alone.ok.length} answered 200 (${alone.rate.toFixed(0)}/s), other ${JSON.stringify(alone.other)}, errors ${alone.errors}; p50 ${alone.p50} ms, p99 ${alone.p99} ms, max ${alone.max} ms`,
    );

    const loadDone = load(url, sandbox.project, seconds, rate);
    const sync = syncAlongside(env, loadDone, ctx.note);
    const busy = await loadDone;
    await sync.done;
    ctx.note(
      `phase 2, with sync alongside: ${busy.sent} sent, ${busy.ok.length} answered 200 (${busy.rate.toFixed(0)}/s), other ${JSON.stringify(busy.other)}, errors ${busy.errors}; p50 ${busy.p50} ms, p99 ${busy.p99} ms, max ${busy.max} ms`,
    );

    const [records] = await ctx.sql<{ register: number; period: number }[]>`
      select count(*) filter (where type = 'RegisterRecordObserved')::int as register, count(*) filter (where type = 'PeriodRecordObserved')::int as period from es_events`;
    ctx.note(
      `store after the sync: ${records!.register} register and ${records!.period} period observations (${sync.runs.length} sync runs, ${sync.runs.filter((r) => r.code === 0).length} completed)`,
    );

    const ok = [...alone.ok, ...busy.ok];
    const c = await countInStore(ctx, sandbox.project, ok);
    ctx.note(
      `webhooks answered 200: ${ok.length}; in the store exactly once: ${c.once}; missing: ${c.missing}; stored twice or more: ${c.doubled}`,
    );

    ctx.figure({
      name: 'webhook p99 with sync alongside',
      value: busy.p99,
      unit: 'ms',
      reference: { name: 'same receiver alone p99', value: alone.p99 },
      target: { max: 100, text: '< 100 ms' },
    });
    ctx.figure({
      name: 'webhooks answered 200 per second with sync',
      value: busy.rate,
      unit: 'webhooks/s',
      reference: { name: 'alone', value: alone.rate },
      target: { min: rate * 0.98, text: `${rate}/s offered` },
    });
    const notOk = (ph: Phase) => Object.values(ph.other).reduce((s, n) => s + n, 0) + ph.errors;
    ctx.figure({
      name: 'webhooks not answered 200 with sync',
      value: notOk(busy),
      unit: 'requests',
      reference: { name: 'alone', value: notOk(alone) },
      target: { max: 0, text: 'none' },
    });
    ctx.figure({
      name: 'webhooks answered 200 not stored exactly once',
      value: c.missing + c.doubled,
      unit: 'webhooks',
      target: { max: 0, text: 'none' },
    });
  } finally {
    await stop(receiver);
    await stop(sandbox.child);
  }
}
