/**
 * Proof that a change of structure changed no output: the demo's events, projected and turned into
 * statements by two trees of recon, give the same read models and the same statement files.
 *
 *   node --import tsx scripts/compare-outputs.ts --base <dir of the other tree> [--head <dir, default .>]
 *        [--seed compare] [--payments 200] [--month 2025-03]
 *
 * One embedded PostgreSQL (a temporary directory) holds everything. The demo runs once, with the base tree,
 * into a source database. Each tree then gets a copy of it (`create database … template`), rebuilds every
 * projection from zero with its own code (`recon project --rebuild`) and issues the month's statements again
 * at the demo's cut (`recon statements --at-position`: the run the demo recorded, so its statement numbers and
 * issue time are the recorded ones). Compared: every view of schema `recon`, row by row as text in one order, and every
 * statement file byte for byte (a workbook, a zip whose entries carry their write time, part by part). Exit 0 when everything is identical, 1 otherwise.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
// jszip comes with exceljs (which reads and writes workbooks with it)
import JSZip from 'jszip';
import { connect } from '../src/db/connect';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../src/db/embedded';
import { silentLogger } from '../src/log';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    head: { type: 'string', default: '.' },
    seed: { type: 'string', default: 'compare' },
    payments: { type: 'string', default: '200' },
    month: { type: 'string', default: '2025-03' },
    keep: { type: 'boolean', default: false },
  },
});
if (!args.base) {
  process.stderr.write(
    'usage: scripts/compare-outputs.ts --base <dir> [--head <dir>] [--seed s] [--payments n] [--month YYYY-MM]\n',
  );
  process.exit(2);
}
const TIMEZONE = 'Europe/Kyiv';
const trees = { base: path.resolve(args.base), head: path.resolve(args.head) };

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

function run(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/recon.mjs', ...argv], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`recon ${argv.join(' ')} in ${cwd} exited ${code}:\n${err.slice(-3000)}`)),
    );
  });
}

async function dumpViews(url: string): Promise<Map<string, string>> {
  const sql = connect(url, { max: 1 });
  try {
    const views = await sql<{ v: string }[]>`
      select table_name as v from information_schema.views where table_schema = 'recon' order by table_name`;
    const out = new Map<string, string>();
    for (const { v } of views) {
      const [r] = await sql<{ rows: string; n: number }[]>`
        select coalesce(string_agg(t::text, E'\\n' order by t::text), '') as rows, count(*)::int as n
        from recon.${sql(v)} t`;
      out.set(v, `${r!.n} rows\n${r!.rows}`);
    }
    return out;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The parts of a workbook (an .xlsx is a zip), each as bytes: the zip container carries each part's write
 * time, so two workbooks of identical content differ as files.
 */
async function partsOf(file: string): Promise<Map<string, Buffer>> {
  const zip = await JSZip.loadAsync(readFileSync(file));
  const out = new Map<string, Buffer>();
  for (const name of Object.keys(zip.files).sort()) {
    const entry = zip.files[name]!;
    if (!entry.dir) out.set(name, await entry.async('nodebuffer'));
  }
  return out;
}

async function samePartsOf(a: string, b: string): Promise<boolean> {
  const x = await partsOf(a);
  const y = await partsOf(b);
  return x.size === y.size && [...x].every(([name, bytes]) => y.get(name)?.equals(bytes) === true);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 16);

async function main(): Promise<number> {
  const work = mkdtempSync(path.join(tmpdir(), 'recon-compare-'));
  // as root, PostgreSQL runs as the 'postgres' user, which must be able to reach its data directory
  chmodSync(work, 0o755);
  const pgDir = path.join(work, 'pg');
  const server = await ensureEmbeddedPostgres(pgDir, silentLogger);
  const admin = connect(server.url, { max: 1 });
  const env = (db: string, name: string): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: withDatabase(server.url, db),
      RECON_DATA_DIR: path.join(work, name, 'data'),
      RECON_TIMEZONE: TIMEZONE,
      RECON_LOG_LEVEL: 'warn',
    };
    for (const k of Object.keys(e)) if (k.startsWith('PSP_')) delete e[k];
    return e;
  };
  try {
    await admin`create database cmp_source`;
    process.stdout.write(`demo (${args.payments} payments, seed ${args.seed}, ${args.month}) with ${trees.base}\n`);
    const demo = await run(
      trees.base,
      [
        'demo',
        '--seed',
        args.seed!,
        '--payments',
        args.payments!,
        '--month',
        args.month!,
        '--out',
        path.join(work, 'demo-out'),
        '--json',
      ],
      env('cmp_source', 'source'),
    );
    const cut = (JSON.parse(demo) as { statements: { position: string } }).statements.position;
    const views: Record<string, Map<string, string>> = {};
    const files: Record<string, string> = {};
    for (const [name, tree] of Object.entries(trees)) {
      const db = `cmp_${name}`;
      await admin`create database ${admin(db)} template cmp_source`;
      const e = env(db, name);
      const started = Date.now();
      await run(tree, ['project', '--rebuild'], e);
      process.stdout.write(
        `${name}: ${tree}: projections rebuilt from zero in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
      files[name] = path.join(work, name, 'statements');
      mkdirSync(files[name], { recursive: true });
      // the demo's statements issued again at their cut: the same run, so the same numbers and issue time
      await run(tree, ['statements', '--month', args.month!, '--at-position', cut, '--out', files[name]], e);
      views[name] = await dumpViews(withDatabase(server.url, db));
    }
    let differences = 0;
    const viewNames = [...new Set([...views.base!.keys(), ...views.head!.keys()])].sort();
    for (const v of viewNames) {
      const a = views.base!.get(v);
      const b = views.head!.get(v);
      const same = a === b;
      if (!same) {
        differences++;
        writeFileSync(path.join(work, `view-${v}.base.txt`), a ?? '(no such view)\n');
        writeFileSync(path.join(work, `view-${v}.head.txt`), b ?? '(no such view)\n');
      }
      process.stdout.write(`  view recon.${v}: ${same ? 'identical' : 'DIFFERENT'} (${(a ?? '').split('\n', 1)[0]})\n`);
    }
    const fileNames = [...new Set([...readdirSync(files.base!), ...readdirSync(files.head!)])].sort();
    for (const f of fileNames) {
      const read = (dir: string) => {
        try {
          return readFileSync(path.join(dir, f));
        } catch {
          return undefined;
        }
      };
      const a = read(files.base!);
      const b = read(files.head!);
      if (a && b && a.equals(b)) {
        process.stdout.write(`  file ${f}: identical bytes (sha-256 ${sha(a)}…)\n`);
        continue;
      }
      if (a && b && f.endsWith('.xlsx') && (await samePartsOf(path.join(files.base!, f), path.join(files.head!, f)))) {
        process.stdout.write(`  file ${f}: identical parts, byte for byte (the zip entries' write times differ)\n`);
        continue;
      }
      differences++;
      const cells = a && b ? 'content differs' : 'missing on one side';
      process.stdout.write(`  file ${f}: DIFFERENT (${cells})\n`);
    }
    process.stdout.write(
      differences === 0
        ? `identical: ${viewNames.length} views and ${fileNames.length} statement files\n`
        : `${differences} differences (kept in ${work})\n`,
    );
    return differences === 0 ? 0 : 1;
  } finally {
    await admin.end({ timeout: 5 });
    await stopEmbeddedPostgres(pgDir, silentLogger);
    if (!args.keep) rmSync(pgDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
