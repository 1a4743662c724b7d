import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect } from '../src/db/connect';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../src/db/embedded';
import { migrate } from '../src/db/migrate';
import { createLogger } from '../src/log';
import { formatNumber, judge, type BenchContext, type Figure, type FigureResult } from './harness';

/**
 * `npm run bench -- [--quick] [name...]`: runs bench/<name>.ts (each exports `run(ctx)`), all of them when no
 * name is given. One PostgreSQL for the run (embedded in a temp dir, or BENCH_DATABASE_URL); each benchmark
 * gets a fresh database and a process of its own, so that its memory figures are its own.
 */

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const NOT_BENCHMARKS = new Set(['run', 'harness', 'cpu', 'webhook-load']);
const FIGURE_PREFIX = '@@bench-figure ';

function available(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .filter((n) => !NOT_BENCHMARKS.has(n) && !n.startsWith('_'))
    .sort();
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function createDatabase(serverUrl: string, prefix: string, opts: { migrate?: boolean; max?: number } = {}) {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = connect(serverUrl, { max: 1 });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  const sql = connect(url, { max: opts.max ?? 20 });
  if (opts.migrate !== false) await migrate(sql, createLogger({ level: 'warn' }));
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 }).catch(() => {});
      const a = connect(serverUrl, { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await a.end();
    },
  };
}

// ---------------------------------------------------------------- child: runs one benchmark

async function runChild(name: string): Promise<void> {
  const serverUrl = process.env.BENCH_SERVER_URL!;
  const url = process.env.BENCH_CHILD_DB_URL!;
  const log = createLogger({
    level: (process.env.BENCH_LOG_LEVEL as 'info' | undefined) ?? 'warn',
    base: { bench: name },
  });
  const sql = connect(url, { max: 20 });
  const extra: { drop(): Promise<void> }[] = [];
  const ctx: BenchContext = {
    name,
    url,
    sql,
    serverUrl,
    log,
    quick: process.env.BENCH_QUICK === '1',
    figure: (f: Figure) => process.stdout.write(FIGURE_PREFIX + JSON.stringify(f) + '\n'),
    note: (text: string) => process.stdout.write(`  ${text}\n`),
    async createDatabase(opts) {
      const db = await createDatabase(serverUrl, `bench_${name}_extra`, opts);
      extra.push(db);
      return { url: db.url, sql: db.sql };
    },
  };
  const mod = (await import(pathToFileURL(path.join(BENCH_DIR, `${name}.ts`)).href)) as {
    run?: (ctx: BenchContext) => Promise<void>;
  };
  if (typeof mod.run !== 'function') throw new Error(`bench/${name}.ts does not export run(ctx)`);
  try {
    await mod.run(ctx);
  } catch (e) {
    // Said first: dropping the extra databases may make stray clients fail noisily afterwards.
    process.stderr.write(`bench ${name} failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  } finally {
    for (const db of extra) await db.drop();
    await sql.end({ timeout: 5 });
  }
}

// ---------------------------------------------------------------- parent: server, databases, report

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function printTable(results: readonly FigureResult[]): void {
  const rows = results.map((r) => [
    r.bench,
    r.name,
    `${formatNumber(r.value)} ${r.unit}`,
    r.reference ? r.reference.name : '',
    r.reference ? `${formatNumber(r.reference.value)} ${r.unit}` : '',
    r.ratio !== undefined ? r.ratio.toFixed(2) : '',
    r.target?.text ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
  ]);
  const head = ['bench', 'figure', 'value', 'reference (same run)', 'reference value', 'ratio', 'target', 'met'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, i === 2 || i === 4 || i === 5)).join('  ');
  process.stdout.write('\n' + line(head) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  for (const r of rows) process.stdout.write(line(r) + '\n');
  process.stdout.write('\n');
}

function jsonLine(r: FigureResult): string {
  return JSON.stringify({
    bench: r.bench,
    figure: r.name,
    value: Number(r.value.toFixed(3)),
    unit: r.unit,
    reference: r.reference?.name ?? null,
    referenceValue: r.reference ? Number(r.reference.value.toFixed(3)) : null,
    ratio: r.ratio !== undefined ? Number(r.ratio.toFixed(4)) : null,
    target: r.target?.text ?? null,
    met: r.met ?? null,
  });
}

async function runInChild(
  name: string,
  serverUrl: string,
  dbUrl: string,
  quick: boolean,
): Promise<{ code: number; figures: FigureResult[] }> {
  const figures: FigureResult[] = [];
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', name], {
    env: { ...process.env, BENCH_SERVER_URL: serverUrl, BENCH_CHILD_DB_URL: dbUrl, BENCH_QUICK: quick ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    if (line.startsWith(FIGURE_PREFIX)) {
      const r = judge(name, JSON.parse(line.slice(FIGURE_PREFIX.length)) as Figure);
      figures.push(r);
      process.stdout.write(
        `  ${r.name}: ${formatNumber(r.value)} ${r.unit}` +
          (r.reference
            ? ` | ${r.reference.name}: ${formatNumber(r.reference.value)} ${r.unit} | ratio ${r.ratio?.toFixed(2)}`
            : '') +
          (r.met === undefined ? '' : ` | target ${r.target?.text ?? ''}: ${r.met ? 'met' : 'NOT MET'}`) +
          '\n',
      );
    } else process.stdout.write(line + '\n');
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c, sig) => resolve(c ?? (sig ? 128 : 1))));
  return { code, figures };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    await runChild(args[1]!);
    return;
  }
  const quick = args.includes('--quick');
  // --sizes 10000,30000: the sizes a benchmark that takes them runs (bench/month.ts), passed on as BENCH_SIZES
  const sizesAt = args.indexOf('--sizes');
  if (sizesAt >= 0) process.env.BENCH_SIZES = args.splice(sizesAt, 2)[1] ?? '';
  const requested = args.filter((a) => !a.startsWith('--'));
  const present = available();
  const names = requested.length ? requested : present;
  const missing = names.filter((n) => !present.includes(n));
  for (const n of missing) {
    process.stderr.write(
      `bench: no benchmark named "${n}" (bench/${n}.ts does not exist yet); available: ${present.join(', ') || 'none'}\n`,
    );
  }
  const toRun = names.filter((n) => present.includes(n));
  if (toRun.length === 0) {
    process.exitCode = 2;
    return;
  }

  const log = createLogger({ level: 'warn' });
  let serverUrl = process.env.BENCH_DATABASE_URL;
  let embeddedDir: string | undefined;
  const cleanup = async () => {
    if (embeddedDir && existsSync(embeddedDir)) {
      await stopEmbeddedPostgres(embeddedDir, log);
      rmSync(embeddedDir, { recursive: true, force: true });
    }
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().finally(() => process.exit(143)));
  if (!serverUrl) {
    embeddedDir = mkdtempSync(path.join(tmpdir(), 'recon-bench-pg-'));
    serverUrl = (await ensureEmbeddedPostgres(embeddedDir, log)).url;
  }
  const server = connect(serverUrl, { max: 1 });
  const [{ version }] = (await server<
    { version: string }[]
  >`select current_setting('server_version') as version`) as unknown as [{ version: string }];
  await server.end();
  process.stdout.write(
    `recon benchmarks: ${toRun.join(', ')}${quick ? ' (quick)' : ''}\n` +
      `PostgreSQL ${version} (${embeddedDir ? `embedded, ${embeddedDir}` : 'BENCH_DATABASE_URL'}); node ${process.version}; ` +
      `${(await import('node:os')).cpus().length} CPUs\n`,
  );

  const all: FigureResult[] = [];
  let failed = missing.length > 0;
  try {
    for (const name of toRun) {
      process.stdout.write(`\n== ${name}\n`);
      const db = await createDatabase(serverUrl, `bench_${name}`);
      await db.sql.end();
      try {
        const { code, figures } = await runInChild(name, serverUrl, db.url, quick);
        all.push(...figures);
        if (code !== 0) {
          failed = true;
          process.stdout.write(`  ${name} failed (exit ${code})\n`);
        }
      } finally {
        await db.drop();
      }
    }
  } finally {
    await cleanup();
  }
  if (all.length) {
    printTable(all);
    for (const r of all) process.stdout.write(`BENCH ${jsonLine(r)}\n`);
  }
  if (failed) process.exitCode = 1;
}

await main();
