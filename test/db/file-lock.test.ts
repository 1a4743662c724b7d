import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/db/file-lock';

/**
 * The embedded server's start/stop lock (pg.lock, src/db/file-lock.ts): stale locks are recognised, live ones
 * are waited for, and a signal (a command's SIGINT/SIGTERM) ends the wait. A lock naming this process's own pid (left by a process killed with -9
 * before a container restart, whose pid the new process got: pids start again from 1) was waited for until
 * the timeout, and an empty lock file (its holder killed between creating it and writing its pid) was never
 * taken over, at every later start.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-file-lock-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const lockFile = () => path.join(dir, `pg-${++n}.lock`);
const attempt = (file: string, timeoutMs: number) =>
  withFileLock(file, async () => 'ran', timeoutMs).catch((e: Error) => e.message);

/** A live process that is not a recon process holding any lock. */
function sleeper(): number {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  children.push(c);
  return c.pid!;
}

/** The pid of a process that has exited and been reaped (a fixed wait is too short on a loaded machine). */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => c.once('exit', resolve));
  return c.pid!;
}

describe('file lock: stale locks are taken over', () => {
  it("a lock holding this process's own pid (as a killed holder of that pid leaves it, before tokens)", async () => {
    const file = lockFile();
    writeFileSync(file, String(process.pid));
    expect(await attempt(file, 2_000)).toBe('ran');
    expect(existsSync(file)).toBe(false);
  });

  it("a lock holding this process's pid with another process's token", async () => {
    const file = lockFile();
    writeFileSync(file, JSON.stringify({ pid: process.pid, token: 'nonce:0123456789abcdef' }));
    expect(await attempt(file, 2_000)).toBe('ran');
  });

  it('a lock whose pid is now an unrelated process started at another time (pid reused)', async () => {
    if (!existsSync('/proc/self/stat')) return; // the start-time check is Linux's
    const file = lockFile();
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    writeFileSync(file, JSON.stringify({ pid: sleeper(), token: `linux:${boot}:1` }));
    expect(await attempt(file, 2_000)).toBe('ran');
  });

  it('a lock of a process that has exited', async () => {
    const file = lockFile();
    const pid = await deadPid();
    expect(() => process.kill(pid, 0)).toThrow();
    writeFileSync(file, JSON.stringify({ pid, token: 'nonce:x' }));
    expect(await attempt(file, 2_000)).toBe('ran');
  });

  it('an empty lock file, once it has stayed empty for a second (not at once: it may be being written)', async () => {
    const file = lockFile();
    writeFileSync(file, '');
    expect(await attempt(file, 300)).toMatch(/timed out waiting for lock .* \(empty or unreadable lock file\)/);
    const t0 = Date.now();
    expect(await attempt(file, 2_000)).toBe('ran');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  });
});

describe('file lock: live locks are waited for', () => {
  it('a lock of a live process (pid only, as written before tokens) is not taken over', async () => {
    const file = lockFile();
    writeFileSync(file, String(sleeper()));
    expect(await attempt(file, 300)).toMatch(/timed out waiting for lock .* held by pid \d+/);
    expect(existsSync(file)).toBe(true);
  });

  it('calls in one process run one at a time, in any number', async () => {
    const file = lockFile();
    let inside = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withFileLock(file, async () => {
          most = Math.max(most, ++inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
          return i;
        }),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(1);
    expect(existsSync(file)).toBe(false);
  });

  it("a call in this process waits for another call's lock until its timeout, naming this process", async () => {
    const file = lockFile();
    let release!: () => void;
    const first = withFileLock(file, () => new Promise<void>((r) => (release = r)));
    expect(await attempt(file, 200)).toMatch(/held by this process/);
    release();
    await first;
    expect(await attempt(file, 200)).toBe('ran');
  });

  it('processes taking it at once never hold it together (no lost update), and leave nothing behind', async () => {
    const file = lockFile();
    const counter = path.join(dir, 'counter');
    writeFileSync(counter, '0');
    const fixture = path.join(import.meta.dirname, 'fixtures/file-lock-user.ts');
    const runs = Array.from({ length: 3 }, () => {
      const c = spawn(process.execPath, ['--import', 'tsx', fixture, file, counter, '25'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      return new Promise<{ code: number | null; stderr: string }>((resolve) =>
        c.once('close', (code) => resolve({ code, stderr })),
      );
    });
    for (const r of await Promise.all(runs)) expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(counter, 'utf8')).toBe('75');
    expect(
      readdirSync(dir).filter((f) => f.startsWith(`.${path.basename(file)}`) || f === path.basename(file)),
    ).toEqual([]);
  }, 60_000);
});

describe('file lock: a signal ends the wait', () => {
  it('an abort stops the wait for a live holder at once, with its reason', async () => {
    const file = lockFile();
    writeFileSync(file, String(sleeper()));
    const controller = new AbortController();
    const outcome = withFileLock(file, async () => 'ran', 30_000, { signal: controller.signal }).catch(
      (e: Error) => e.message,
    );
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    controller.abort(new Error('interrupted by SIGTERM'));
    expect(await outcome).toMatch(/^interrupted by SIGTERM while waiting for lock .* held by pid \d+$/);
    expect(Date.now() - t0).toBeLessThan(200);
    expect(existsSync(file)).toBe(true);
  });

  it('an abort stops a wait behind another call of this process', async () => {
    const file = lockFile();
    let release!: () => void;
    const first = withFileLock(file, () => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const outcome = withFileLock(file, async () => 'ran', 30_000, { signal: controller.signal }).catch(
      (e: Error) => e.message,
    );
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error('interrupted by SIGINT'));
    expect(await outcome).toMatch(/^interrupted by SIGINT while waiting for lock /);
    release();
    await first;
  });

  it("recon: one SIGTERM while it waits for the embedded server's start/stop lock ends it", async () => {
    const dataDir = mkdtempSync(path.join(dir, 'data-'));
    const holder = sleeper();
    writeFileSync(path.join(dataDir, 'pg.lock'), String(holder));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      RECON_DATA_DIR: dataDir,
      RECON_LOG_LEVEL: 'info',
    };
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'migrate'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    for (let i = 0; i < 300 && !stderr.includes('waiting for the embedded PostgreSQL start/stop lock'); i++)
      await new Promise((r) => setTimeout(r, 50));
    const [waitLine] = stderr
      .split('\n')
      .filter((l) => l.includes('"waiting for the embedded PostgreSQL start/stop lock"'));
    expect(JSON.parse(waitLine!)).toMatchObject({ lock: path.join(dataDir, 'pg.lock'), holder: `pid ${holder}` });
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 5_000)),
    ]);
    if (code === 'still running') child.kill('SIGKILL');
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(
      `recon: interrupted by SIGTERM while waiting for lock ${path.join(dataDir, 'pg.lock')} held by pid ${holder}`,
    );
  }, 30_000);
});
