import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PDFDocument from 'pdfkit';
import type { DemoStage } from '../src/cli/demo';
import { connect } from '../src/db/connect';
import { serverCpuTracker } from './cpu';
import { ceilingWorkbook } from './export';
import { formatNumber, perSecond, sampleRss, timed, type BenchContext } from './harness';

/**
 * `npm run bench -- month [--quick] [--sizes 10000,30000]` (issue 26): a large marketplace's whole month
 * through recon's own code paths, `recon demo`'s stages (src/cli/demo.ts runDemo: sandbox → sync → webhooks →
 * healing → projections → statements with PDFs → bank import → nightly report) at 10k, 100k and 1M payments
 * (--quick stops at 100k). Each size runs in a process of its own (its peak RSS is the month's, data
 * generation included) against a fresh database of the run's server. Per stage: seconds, items per second,
 * peak RSS, disk used (database + files); the growth from one size to the next; and each rate beside its
 * reference measured in the same process right after the month: readAll over the month's events
 * (projections), a raw multi-row INSERT of them (sync, webhooks), exceljs and pdfkit alone writing as many
 * lines (statements). BENCH_MONTH_CPU_PROF=<dir> profiles each month (node --cpu-prof).
 */

const BENCH_FILE = fileURLToPath(import.meta.url);
const RESULT_PREFIX = '@@month-result ';
const MB = 1024 * 1024;

interface StageResult extends DemoStage {
  /** the process's peak RSS during the stage, bytes */
  readonly peakRss: number;
  /** database + recon's data directory + --out, bytes, when the stage ended */
  readonly disk: number;
  /** CPU (user + system) since the stage before ended, ms: recon's process (every thread) and its PostgreSQL server */
  readonly cpuMs: number;
  readonly serverCpuMs: number;
}

interface MonthResult {
  readonly payments: number;
  readonly wallMs: number;
  readonly peakRss: number;
  readonly disk: number;
  readonly events: number;
  readonly check: boolean;
  /** CPU of the whole month, ms: recon's process and its PostgreSQL server */
  readonly cpuMs: number;
  readonly serverCpuMs: number;
  readonly stages: readonly StageResult[];
  /** reference rates measured right after the month, per second */
  readonly references: Readonly<Record<'readAll' | 'rawAppend' | 'exceljs' | 'pdfkit', number>>;
}

// ---------------------------------------------------------------- parent: one child per size, the report

export async function run(ctx: BenchContext): Promise<void> {
  const sizes = monthSizes(ctx.quick);
  ctx.note(`month: ${sizes.map((s) => s.toLocaleString('en-US')).join(', ')} payments, one process each`);
  const results: MonthResult[] = [];
  for (const payments of sizes) {
    const db = await ctx.createDatabase({ migrate: false, max: 1 });
    await db.sql.end();
    const result = await monthInChild(payments, db.url, ctx);
    results.push(result);
    printMonth(ctx, result);
    monthFigures(ctx, result);
  }
  for (let i = 1; i < results.length; i++) growthFigures(ctx, results[i - 1]!, results[i]!);
}

function monthSizes(quick: boolean): number[] {
  const given = process.env['BENCH_SIZES'] ?? process.env['BENCH_MONTH_SIZES'];
  if (given) return given.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
  return quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
}

function monthInChild(payments: number, url: string, ctx: BenchContext): Promise<MonthResult> {
  const prof = process.env['BENCH_MONTH_CPU_PROF'];
  // BENCH_MONTH_MAX_OLD_SPACE_MB: the month under a V8 heap ceiling, as an operator would run a worker
  // (docs/scale.md, "What holds memory": most of the RSS is heap V8 grew lazily, not live data)
  const heapMb = process.env['BENCH_MONTH_MAX_OLD_SPACE_MB'];
  const execArgv = [
    ...process.execArgv,
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    ...(heapMb ? [`--max-old-space-size=${Number(heapMb)}`] : []),
  ];
  const child = spawn(process.execPath, [...execArgv, BENCH_FILE, '--month-child', String(payments)], {
    env: { ...process.env, BENCH_MONTH_DB_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let result: MonthResult | undefined;
  let buffered = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.startsWith(RESULT_PREFIX)) result = JSON.parse(line.slice(RESULT_PREFIX.length)) as MonthResult;
      else if (process.env['BENCH_MONTH_VERBOSE']) ctx.note(line);
      nl = buffered.indexOf('\n');
    }
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      result && code === 0 ? resolve(result) : reject(new Error(`the ${payments}-payment month failed (exit ${code})`)),
    ),
  );
}

/** Which reference each stage's rate stands beside. */
const REFERENCE_OF: Record<string, { key: keyof MonthResult['references']; name: string } | undefined> = {
  sync: { key: 'rawAppend', name: 'raw multi-row INSERT of the events' },
  webhooks: { key: 'rawAppend', name: 'raw multi-row INSERT of the events' },
  projections: { key: 'readAll', name: 'readAll alone' },
  statements: { key: 'exceljs', name: 'exceljs streaming writer alone' },
};

function printMonth(ctx: BenchContext, r: MonthResult): void {
  const cpuCells = (wallMs: number, cpuMs: number, serverCpuMs: number) => [
    (cpuMs / 1000).toFixed(1),
    (serverCpuMs / 1000).toFixed(1),
    wallMs > 0 ? ((cpuMs + serverCpuMs) / wallMs).toFixed(2) : '',
  ];
  const rows = r.stages.map((s) => [
    s.name,
    (s.ms / 1000).toFixed(1),
    `${formatNumber(s.items)} ${s.unit}`,
    formatNumber(perSecond(s.items, s.ms)),
    (s.peakRss / MB).toFixed(0),
    (s.disk / MB).toFixed(0),
    ...cpuCells(s.ms, s.cpuMs, s.serverCpuMs),
  ]);
  const staged = r.stages.reduce((n, s) => n + s.ms, 0);
  rows.push(['rest (live purchases, checks)', ((r.wallMs - staged) / 1000).toFixed(1), '', '', '', '', '', '', '']);
  rows.push([
    'month',
    (r.wallMs / 1000).toFixed(1),
    `${formatNumber(r.events)} events`,
    '',
    '',
    '',
    ...cpuCells(r.wallMs, r.cpuMs, r.serverCpuMs),
  ]);
  const head = [
    'stage',
    's',
    'items',
    'items/s',
    'peak RSS MB',
    'disk MB',
    'recon CPU s',
    'server CPU s',
    'cores busy',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)));
  ctx.note(`month of ${r.payments.toLocaleString('en-US')} payments (check ${r.check ? 'PASSED' : 'FAILED'})`);
  for (const l of [line(head), widths.map((w) => '-'.repeat(w)), ...rows.map(line)]) ctx.note(`  ${l.join('  ')}`);
  ctx.note(
    `  references after the month: readAll ${formatNumber(r.references.readAll)} events/s, raw append ${formatNumber(r.references.rawAppend)} events/s, ` +
      `exceljs alone ${formatNumber(r.references.exceljs)} lines/s, pdfkit alone ${formatNumber(r.references.pdfkit)} lines/s`,
  );
  // a stage's CPU is counted from the end of the stage before (the rest between them included); "cores busy" is
  // both processes' CPU over the stage's wall time: near the machine's cores, the stage waits on nothing
  ctx.note(
    `  CPU of the month: recon ${((r.cpuMs ?? 0) / 1000).toFixed(0)} s + its PostgreSQL ${((r.serverCpuMs ?? 0) / 1000).toFixed(0)} s ` +
      `over ${(r.wallMs / 1000).toFixed(0)} s of wall on ${availableParallelism()} cores`,
  );
}

function monthFigures(ctx: BenchContext, r: MonthResult): void {
  const size =
    r.payments >= 1_000_000
      ? `${r.payments / 1_000_000}M`
      : r.payments >= 1000
        ? `${r.payments / 1000}k`
        : String(r.payments);
  const wallTarget = r.payments === 100_000 ? 180 : r.payments === 1_000_000 ? 1800 : undefined;
  ctx.figure({
    name: `month ${size}: wall`,
    value: r.wallMs / 1000,
    unit: 's',
    ...(wallTarget ? { target: { max: wallTarget, text: `<= ${wallTarget} s` } } : {}),
  });
  ctx.figure({
    name: `month ${size}: peak RSS`,
    value: r.peakRss / MB,
    unit: 'MB',
    ...(r.payments >= 1_000_000 ? { target: { max: 1024, text: '< 1 GB' } } : {}),
  });
  ctx.figure({ name: `month ${size}: disk used`, value: r.disk / MB, unit: 'MB' });
  ctx.figure({
    name: `month ${size}: CPU, recon + its PostgreSQL`,
    value: (r.cpuMs + r.serverCpuMs) / 1000,
    unit: 's',
  });
  for (const s of r.stages) {
    const ref = REFERENCE_OF[s.name];
    ctx.figure({
      name: `month ${size}: ${s.name} (${s.unit}/s)`,
      value: perSecond(s.items, s.ms),
      unit: `${s.unit}/s`,
      ...(ref ? { reference: { name: ref.name, value: r.references[ref.key] } } : {}),
      ...(s.name === 'statements' ? { target: { minRatio: 0.7, text: '>= 0.70 of exceljs alone' } } : {}),
    });
  }
  const statements = r.stages.find((s) => s.name === 'statements');
  if (statements)
    ctx.figure({
      name: `month ${size}: statements beside pdfkit alone (lines/s)`,
      value: perSecond(statements.items, statements.ms),
      unit: 'lines/s',
      reference: { name: 'pdfkit alone', value: r.references.pdfkit },
    });
}

function growthFigures(ctx: BenchContext, small: MonthResult, large: MonthResult): void {
  const factor = large.payments / small.payments;
  const label = `${formatNumber(small.payments)} → ${formatNumber(large.payments)}`;
  ctx.figure({
    name: `month growth ${label} (×${factor} payments): wall`,
    value: large.wallMs / small.wallMs,
    unit: '×',
    target: { max: factor * 1.1, text: `<= ×${formatNumber(factor * 1.1)}` },
  });
  ctx.figure({ name: `month growth ${label}: peak RSS`, value: large.peakRss / small.peakRss, unit: '×' });
  for (const s of large.stages) {
    const before = small.stages.find((x) => x.name === s.name);
    if (before && before.ms > 0)
      ctx.figure({ name: `month growth ${label}: ${s.name}`, value: s.ms / before.ms, unit: '×' });
  }
}

// ---------------------------------------------------------------- child: one month, then the references

async function monthChild(payments: number): Promise<void> {
  const url = process.env['BENCH_MONTH_DB_URL']!;
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-month-'));
  const dataDir = path.join(dir, 'data');
  const outDir = path.join(dir, 'out');
  const { requireConfig } = await import('../src/config/env');
  const { createLogger } = await import('../src/log');
  const { runDemo } = await import('../src/cli/demo');
  const threads = process.env['RECON_PROJECTION_THREADS'];
  const config = requireConfig({
    DATABASE_URL: url,
    RECON_DATA_DIR: dataDir,
    RECON_LOG_LEVEL: 'error',
    TZ: 'UTC',
    // the projections' threads, as `recon demo` takes them from the environment
    ...(threads ? { RECON_PROJECTION_THREADS: threads } : {}),
  });
  const sql = connect(url, { max: 2 });
  const stages: StageResult[] = [];
  const server = await serverCpuTracker(sql);
  try {
    let rss = sampleRss(50);
    const cpu0 = { self: process.cpuUsage(), server: server.totalMs() };
    let cpu = cpu0;
    const started = performance.now();
    const summary = await runDemo(config, createLogger({ level: 'error' }), {
      seed: 'recon-demo',
      payments,
      month: '2026-09',
      outDir,
      // BENCH_MONTH_SENDERS: the sandbox's webhook senders at once (the demo's DEMO_WEBHOOK_SENDERS unless given)
      ...(process.env['BENCH_MONTH_SENDERS'] ? { webhookSenders: Number(process.env['BENCH_MONTH_SENDERS']) } : {}),
      print: (line) => process.stdout.write(`${line}\n`),
      onStage: async (s) => {
        const peakRss = rss.stop();
        const now = { self: process.cpuUsage(), server: server.totalMs() };
        const cpuMs = cpuMsBetween(cpu.self, now.self);
        stages.push({
          ...s,
          peakRss,
          cpuMs,
          serverCpuMs: now.server - cpu.server,
          disk: (await databaseBytes(sql)) + directoryBytes(dir),
        });
        cpu = now;
        rss = sampleRss(50);
      },
    });
    const wallMs = performance.now() - started;
    const monthCpu = {
      cpuMs: cpuMsBetween(cpu0.self, process.cpuUsage()),
      serverCpuMs: server.totalMs() - cpu0.server,
    };
    rss.stop();
    const disk = (await databaseBytes(sql)) + directoryBytes(dir);
    // the kernel's high-water mark of the month itself, before the references run in this process
    const peakRss = process.resourceUsage().maxRSS * 1024;
    const statementLines = stages.find((s) => s.name === 'statements')?.items ?? 0;
    const references = await measureReferences(sql, dir, summary.events, statementLines);
    const result: MonthResult = {
      payments,
      wallMs,
      peakRss,
      disk,
      events: summary.events,
      check: summary.check.passed,
      ...monthCpu,
      stages,
      references,
    };
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
  } finally {
    server.stop();
    await sql.end({ timeout: 5 });
    rmSync(dir, { recursive: true, force: true });
  }
}

const cpuMsBetween = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1000;

async function databaseBytes(sql: ReturnType<typeof connect>): Promise<number> {
  const [row] = await sql<{ n: string }[]>`select pg_database_size(current_database())::text as n`;
  return Number(row!.n);
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(path.join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return total;
}

// Enough work for a steady rate without doubling a 1M month's time: the references run up to this many items.
const REFERENCE_CAP = 200_000;

async function measureReferences(
  sql: ReturnType<typeof connect>,
  dir: string,
  events: number,
  statementLines: number,
): Promise<MonthResult['references']> {
  const { createPostgresEventStore } = await import('../src/store/postgres');
  const store = createPostgresEventStore(sql);
  const readAll = await timed(async () => {
    let count = 0;
    let from: Awaited<ReturnType<typeof store.headPosition>> | undefined;
    for (;;) {
      const page = await store.readAll(from ?? undefined, { maxCount: 1000 });
      if (page.length === 0 || count >= REFERENCE_CAP) return count;
      count += page.length;
      from = page[page.length - 1]!.position;
    }
  });
  const raw = await rawAppend(sql, Math.min(events, REFERENCE_CAP));
  const lines = Math.max(1000, Math.min(statementLines, REFERENCE_CAP));
  const excel = await timed(() => ceilingWorkbook(path.join(dir, 'ceiling.xlsx'), 0, lines));
  const pdf = await timed(() => pdfkitAlone(path.join(dir, 'ceiling.pdf'), lines));
  return {
    readAll: perSecond(readAll.result, readAll.ms),
    rawAppend: perSecond(raw.count, raw.ms),
    exceljs: perSecond(lines, excel.ms),
    pdfkit: perSecond(lines, pdf.ms),
  };
}

/** The month's own events appended again to a plain table (no uniqueness, no trigger) by multi-row INSERTs of 1,000. */
async function rawAppend(sql: ReturnType<typeof connect>, count: number): Promise<{ count: number; ms: number }> {
  await sql`create table bench_raw_append (
    id bigserial primary key, event_id uuid not null, stream_id text not null, stream_revision bigint not null,
    type text not null, version int not null, data jsonb not null, metadata jsonb not null)`;
  let ms = 0;
  let done = 0;
  let after = 0n;
  while (done < count) {
    const rows = await sql<
      {
        id: string;
        event_id: string;
        stream_id: string;
        stream_revision: string;
        type: string;
        version: number;
        data: unknown;
        metadata: unknown;
      }[]
    >`select global_position::text as id, event_id::text, stream_id, stream_revision::text, type, version, data, metadata
      from es_events where global_position > ${after.toString()}::bigint order by global_position limit 1000`;
    if (rows.length === 0) break;
    after = BigInt(rows[rows.length - 1]!.id);
    // serialising the JSON is part of any append: timed with the INSERT
    const t = await timed(
      () =>
        sql`insert into bench_raw_append ${sql(
          rows.map((r) => ({
            event_id: r.event_id,
            stream_id: r.stream_id,
            stream_revision: r.stream_revision,
            type: r.type,
            version: r.version,
            data: JSON.stringify(r.data),
            metadata: JSON.stringify(r.metadata),
          })),
        )}`,
    );
    ms += t.ms;
    done += rows.length;
  }
  return { count: done, ms };
}

/** pdfkit alone: as many table lines as the statements wrote, eight cells each, landscape A4, no project code. */
async function pdfkitAlone(file: string, lines: number): Promise<void> {
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: 36 });
  const out = createWriteStream(file);
  const finished = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  doc.pipe(out);
  doc.font('Helvetica').fontSize(7);
  const widths = [90, 110, 200, 60, 70, 70, 70, 70];
  let y = 36;
  for (let k = 0; k < lines; k++) {
    if (y > 540) {
      doc.addPage();
      y = 36;
    }
    const cells = [
      '2026-09-14 12:31',
      `SBX-ABCDEF-${String(k).padStart(6, '0')}`,
      `0a1b2c3d-5e6f-4a9b-8c7d-${k.toString(16).padStart(12, '0')}`,
      'purchase',
      (1000 + (k % 5000)).toFixed(2),
      ((1000 + (k % 5000)) / 40).toFixed(2),
      '0.00',
      ((1000 + (k % 5000)) * 0.975).toFixed(2),
    ];
    let x = 36;
    for (let c = 0; c < cells.length; c++) {
      doc.text(cells[c]!, x, y, { width: widths[c]!, lineBreak: false });
      x += widths[c]!;
    }
    y += 11;
    if (k % 2000 === 1999) await new Promise((r) => setImmediate(r));
  }
  doc.end();
  await finished;
}

if (process.argv[2] === '--month-child') {
  await monthChild(Number(process.argv[3]));
}
