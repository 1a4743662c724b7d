import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { connect, type Sql } from '../src/db/connect';
import { ensureEmbeddedPostgres } from '../src/db/embedded';
import { migrate } from '../src/db/migrate';
import { createLogger, silentLogger } from '../src/log';
import type { Projection } from '../src/projector/projection';
import { rebuildProjection } from '../src/projector/runner';
import { createPostgresEventStore } from '../src/store/postgres';
import type { Position } from '../src/store/types';
import { projection } from '../projections/reconciliation';
import { appendChunks, scenarioFor } from '../fixtures/scenario-events';
import { reconciliationEvents } from '../fixtures/reconciliation-events';
import { perSecond, sampleRss, timed, type BenchContext, type Figure } from './harness';

/**
 * The reconciliation projection alone (`npm run bench -- reconciliation`): rebuild from zero over a
 * realistic ingest stream (sandbox scenario: register rows per receiver, period records, webhooks, plus
 * sync windows, re-syncs and webhook re-send requests; fixtures/reconciliation-events.ts). Prints events/s and
 * peak RSS at each 100k events applied, so that memory can be seen flat as the event count grows.
 * BENCH_RECON_EVENTS sets the size (default 500000; --quick 50000), BENCH_RECON_BATCH the batch (5000).
 *
 * Standalone (reuses a filled database between runs, for profiling):
 *   BENCH_RECON_EVENTS=100000 node --expose-gc --import tsx bench/reconciliation.ts
 */

const MB = 1024 * 1024;

async function fill(sql: Sql, target: number): Promise<{ events: number; ms: number }> {
  const store = createPostgresEventStore(sql);
  const [have] = await sql<{ n: number }[]>`select count(*)::int as n from es_events`;
  if (have!.n >= target) return { events: have!.n, ms: 0 };
  if (have!.n > 0) throw new Error(`database holds ${have!.n} events, fewer than ${target}: use an empty one`);
  const payments = Math.ceil(target / 4.7);
  const scenario = scenarioFor({
    seed: 'bench-reconciliation',
    payments,
    month: '2025-01',
    timezone: 'Europe/Kyiv',
    subMerchants: 200,
  });
  const r = await timed(async () => {
    let n = 0;
    for (const requests of appendChunks(reconciliationEvents(scenario), 2_000)) {
      await store.appendMany(requests);
      n += requests.reduce((s, q) => s + q.events.length, 0);
      if (n >= target) break;
    }
    return n;
  });
  return { events: r.result, ms: r.ms };
}

export async function measure(
  sql: Sql,
  opts: {
    events: number;
    batchSize: number;
    note: (t: string) => void;
    figure: (f: Figure) => void;
    projection?: Projection;
    /** CPU seconds used so far by the database server's processes (standalone runs on a server of their own) */
    serverCpu?: () => number;
  },
): Promise<void> {
  const filled = await fill(sql, opts.events);
  if (filled.ms)
    opts.note(`${filled.events.toLocaleString('en-US')} events appended in ${(filled.ms / 1000).toFixed(1)} s`);
  const store = createPostgresEventStore(sql);
  const total = filled.events;
  // the ceiling: readAll alone over the same events and batch size
  const read = await timed(async () => {
    let from: Position | undefined;
    let n = 0;
    for (;;) {
      const batch = await store.readAll(from, { maxCount: opts.batchSize });
      if (batch.length === 0) return n;
      n += batch.length;
      from = batch[batch.length - 1]!.position;
    }
  });
  (globalThis as { gc?: () => void }).gc?.();
  const rss = sampleRss(20);
  const marks: Array<{ applied: number; ms: number; peak: number }> = [];
  const t0 = performance.now();
  let peakSoFar = process.memoryUsage.rss();
  const timer = setInterval(() => (peakSoFar = Math.max(peakSoFar, process.memoryUsage.rss())), 20);
  timer.unref();
  let nextMark = 100_000;
  const cpu0 = process.cpuUsage();
  const server0 = opts.serverCpu?.();
  const rebuild = await timed(() =>
    rebuildProjection(
      {
        sql,
        store,
        log: silentLogger,
        timezone: 'Europe/Kyiv',
        graceHours: 48,
        projections: [opts.projection ?? projection],
      },
      'reconciliation',
      {
        batchSize: opts.batchSize,
        onProgress: (p) => {
          if (p.applied >= nextMark || p.applied >= total) {
            peakSoFar = Math.max(peakSoFar, process.memoryUsage.rss());
            marks.push({ applied: p.applied, ms: performance.now() - t0, peak: peakSoFar });
            while (nextMark <= p.applied) nextMark += 100_000;
          }
        },
      },
    ),
  );
  clearInterval(timer);
  const peak = rss.stop();
  // CPU time per 1,000 events: less at the mercy of other work on the machine than events/s
  const cpu = process.cpuUsage(cpu0);
  const perK = (seconds: number) => ((seconds * 1000) / (total / 1000)).toFixed(1);
  opts.note(
    `CPU per 1,000 events: node ${perK((cpu.user + cpu.system) / 1e6)} ms` +
      (server0 !== undefined ? `, database server ${perK(opts.serverCpu!() - server0)} ms` : ''),
  );
  for (const m of marks) {
    opts.note(
      `after ${m.applied.toLocaleString('en-US')} events: ${Math.round(perSecond(m.applied, m.ms)).toLocaleString('en-US')} events/s, peak RSS so far ${(m.peak / MB).toFixed(0)} MB`,
    );
  }
  const [counts] = await sql<{ ops: number; disc: number; open: number }[]>`
    select (select count(*)::int from recon.operations) as ops, (select count(*)::int from recon.discrepancies) as disc,
           (select count(*)::int from recon.discrepancies where status = 'open') as open`;
  opts.note(
    `operations ${counts!.ops.toLocaleString('en-US')}, discrepancies ${counts!.disc.toLocaleString('en-US')} (${counts!.open} open)`,
  );
  opts.figure({
    name: 'reconciliation rebuild',
    value: perSecond(total, rebuild.ms),
    unit: 'events/s',
    reference: { name: 'readAll alone', value: perSecond(read.result, read.ms) },
    target: { min: 20_000, text: '≥ 20,000 events/s' },
  });
  const first = marks.find((m) => m.applied >= 100_000) ?? marks[0];
  if (first && first.applied < total)
    opts.figure({
      name: `peak RSS at ${first.applied.toLocaleString('en-US')} events`,
      value: first.peak / MB,
      unit: 'MB',
    });
  opts.figure({
    name: `peak RSS at ${total.toLocaleString('en-US')} events`,
    value: peak / MB,
    unit: 'MB',
    target: { max: 512, text: '< 512 MB' },
  });
  if (first && marks.length > 1)
    opts.figure({
      name: 'peak RSS growth after the first 100k events',
      value: Math.max(0, peak - first.peak) / MB,
      unit: 'MB',
      target: { max: 64, text: '< 64 MB (flat)' },
    });
}

export async function run(ctx: BenchContext): Promise<void> {
  const events = Number(process.env['BENCH_RECON_EVENTS'] ?? (ctx.quick ? 50_000 : 500_000));
  const batchSize = Number(process.env['BENCH_RECON_BATCH'] ?? 5_000);
  ctx.note(`reconciliation projection alone, ${events.toLocaleString('en-US')} events, batch ${batchSize}`);
  await measure(ctx.sql, { events, batchSize, note: ctx.note, figure: ctx.figure });
}

/** utime + stime of the server's processes (postmaster and backends), from /proc. */
export function serverCpuSeconds(dataDir: string): number {
  const ticks = 100; // USER_HZ on Linux
  let sum = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('postgres')) continue;
      const own =
        cmd.includes(dataDir) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[3] === postmasterPid(dataDir);
      if (!own) continue;
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      sum += (Number(f[11]) + Number(f[12])) / ticks;
    } catch {
      // the process ended meanwhile
    }
  }
  return sum;
}

function postmasterPid(dataDir: string): string | undefined {
  try {
    return readFileSync(`${dataDir}/pg/postmaster.pid`, 'utf8').split('\n')[0];
  } catch {
    return undefined;
  }
}

// Standalone: a persistent embedded server in /tmp, one database per size (filled once).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const events = Number(process.env['BENCH_RECON_EVENTS'] ?? 100_000);
  const batchSize = Number(process.env['BENCH_RECON_BATCH'] ?? 5_000);
  const server = await ensureEmbeddedPostgres(
    process.env['BENCH_RECON_PGDATA'] ?? '/tmp/recon-bench-reconciliation-pg',
    createLogger({ level: 'warn' }),
  );
  const name = `recon_bench_${events}`;
  const admin = connect(server.url, { max: 1 });
  if (!(await admin`select 1 from pg_database where datname = ${name}`).length)
    await admin.unsafe(`create database ${name}`);
  await admin.end();
  const u = new URL(server.url);
  u.pathname = `/${name}`;
  const sql = connect(u.toString(), { max: 20 });
  await migrate(sql, silentLogger);
  const dataDir = process.env['BENCH_RECON_PGDATA'] ?? '/tmp/recon-bench-reconciliation-pg';
  await measure(sql, {
    events,
    batchSize,
    serverCpu: () => serverCpuSeconds(dataDir),
    note: (t) => console.log(`  ${t}`),
    figure: (f) =>
      console.log(
        `  ${f.name}: ${f.value.toFixed(0)} ${f.unit}${f.reference ? ` (${f.reference.name}: ${f.reference.value.toFixed(0)} ${f.unit})` : ''}`,
      ),
  });
  await sql.end();
  process.exit(0);
}
