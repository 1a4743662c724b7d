import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it, vi } from 'vitest';

/**
 * The embedded server's password file (RECON_DATA_DIR/pg-credentials.json) when several processes start on a
 * fresh data directory at once. It was read, and made when absent, before the start/stop
 * lock was taken, with a plain write; with "A: absent, B: absent, A writes its password, B writes its own",
 * initdb used A's and the file kept B's, so B and every later process failed to connect. It is now read
 * and made under the lock, written whole.
 *
 * The first test replays that interleaving deterministically: the first two existence checks of the file
 * answer "absent", as two processes see it when both look before either has written. Everything else is the
 * real code (a real initdb and a real server).
 */

const hook = vi.hoisted(() => ({ absentAnswers: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const existsSync = (p: import('node:fs').PathLike) => {
    if (String(p).endsWith('pg-credentials.json') && hook.absentAnswers > 0) {
      hook.absentAnswers--;
      return false;
    }
    return fs.existsSync(p);
  };
  return { ...fs, existsSync, default: { ...fs, existsSync } };
});

const { ensureEmbeddedPostgres, stopEmbeddedPostgres } = await import('../../src/db/embedded');
const { silentLogger } = await import('../../src/log');

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'recon-credentials-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) {
    await stopEmbeddedPostgres(d, silentLogger).catch(() => {});
    rmSync(d, { recursive: true, force: true });
  }
});

async function canConnect(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select 1`;
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const filePassword = (dataDir: string) =>
  (JSON.parse(readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { password: string }).password;
const urlWith = (password: string, port: number) =>
  `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

describe('embedded PostgreSQL: the password of a fresh data directory', () => {
  const dataDir = freshDir();

  it('two starts at once that both find no password file: both connect, and so does every later process', async () => {
    hook.absentAnswers = 2;
    const [a, b] = await Promise.all([
      ensureEmbeddedPostgres(dataDir, silentLogger),
      ensureEmbeddedPostgres(dataDir, silentLogger),
    ]);
    expect(await canConnect(a.url)).toBe('ok');
    expect(await canConnect(b.url)).toBe('ok');
    // A later process reads the password from the file: it must be the cluster's.
    expect(await canConnect(urlWith(filePassword(dataDir), a.port))).toBe('ok');
  }, 120_000);

  it('is written whole, readable by its owner only, with no temporary file left', () => {
    expect(statSync(path.join(dataDir, 'pg-credentials.json')).mode & 0o777).toBe(0o600);
    expect(filePassword(dataDir)).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(readdirSync(dataDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a cluster whose password file is gone is refused with a message naming it (no new password is made)', async () => {
    await stopEmbeddedPostgres(dataDir, silentLogger);
    const file = path.join(dataDir, 'pg-credentials.json');
    renameSync(file, `${file}.saved`);
    await expect(ensureEmbeddedPostgres(dataDir, silentLogger)).rejects.toThrow(
      /pg-credentials\.json is missing but the embedded PostgreSQL .* was initialised/,
    );
    expect(readdirSync(dataDir)).not.toContain('pg-credentials.json');
    renameSync(`${file}.saved`, file);
    const s = await ensureEmbeddedPostgres(dataDir, silentLogger);
    expect(await canConnect(s.url)).toBe('ok');
  }, 120_000);
});

// The same start with real processes, end to end. Their start-up times spread them too far apart to hit the
// old window (two adjacent file calls) reliably: this is the user's view, the test above is the proof.
describe('embedded PostgreSQL: real processes initialising one fresh data directory at once', () => {
  it("all succeed, and the password file is the cluster's", async () => {
    const dataDir = freshDir();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      RECON_DATA_DIR: dataDir,
      RECON_LOG_LEVEL: 'warn',
    };
    const run = () =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const c = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'migrate'], {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        c.once('close', (code) => resolve({ code, stderr }));
      });
    for (const r of await Promise.all([run(), run(), run()])) expect(r.code, r.stderr).toBe(0);
    const s = await ensureEmbeddedPostgres(dataDir, silentLogger);
    expect(await canConnect(urlWith(filePassword(dataDir), s.port))).toBe('ok');
  }, 120_000);
});
