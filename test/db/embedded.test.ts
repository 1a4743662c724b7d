import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { runningServer, stopEmbeddedPostgres } from '../../src/db/embedded';
import { silentLogger } from '../../src/log';

/**
 * The embedded PostgreSQL as a user meets it: real `recon` processes with RECON_DATA_DIR set and
 * DATABASE_URL unset, started one after another and side by side.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.join(import.meta.dirname, 'fixtures/embedded-user.ts');
const dataDir = mkdtempSync(path.join(tmpdir(), 'recon-embedded-'));
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
const env = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  RECON_DATA_DIR: dataDir,
  RECON_LOG_LEVEL: 'info',
};

afterAll(async () => {
  await stopEmbeddedPostgres(dataDir, silentLogger);
  rmSync(dataDir, { recursive: true, force: true });
});

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[]): { child: ChildProcess; done: Promise<Finished>; lines: AsyncIterator<string> } {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (l) => (stdout += l + '\n'));
  const done = new Promise<Finished>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, lines: lines[Symbol.asyncIterator]() };
}

const recon = (...args: string[]) => start([path.join(ROOT, 'bin/recon.mjs'), ...args]).done;
const user = (...args: string[]) => start(['--import', 'tsx', FIXTURE, ...args]);

/** Log lines (JSON on stderr) with the given message. */
const logged = (stderr: string, msg: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; pid?: number })
    .filter((l) => l.msg === msg);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function nextLine(it: AsyncIterator<string>): Promise<string> {
  const r = await it.next();
  if (r.done) throw new Error('process closed its output');
  return r.value;
}

function expectStopped(serverPid: number): void {
  expect(alive(serverPid)).toBe(false);
  expect(existsSync(pidFile)).toBe(false);
  expect(runningServer(dataDir)).toBeUndefined();
}

describe('embedded PostgreSQL', () => {
  let firstServerPid = 0;

  it('recon migrate initialises and starts a real server under RECON_DATA_DIR, and stops it on exit', async () => {
    const r = await recon('migrate');
    expect(r.stderr).not.toMatch(/"level":"error"/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^migrations: \d+ applied, latest \d+/);
    expect(logged(r.stderr, 'initialising embedded PostgreSQL')).toHaveLength(1);
    const [started] = logged(r.stderr, 'embedded PostgreSQL started');
    expect(started).toBeDefined();
    expect(logged(r.stderr, 'embedded PostgreSQL stopped')).toHaveLength(1);
    firstServerPid = started!.pid!;
    expect(existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
    expectStopped(firstServerPid);
  });

  it('reuses the same data on the next runs', async () => {
    const a = await user('append', '1').done;
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual({ appended: 1 });
    // Started again from the existing data, not initialised again.
    expect(logged(a.stderr, 'initialising embedded PostgreSQL')).toHaveLength(0);
    expect(logged(a.stderr, 'embedded PostgreSQL started')).toHaveLength(1);
    const r = await user('read').done;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([1]);
    expect(runningServer(dataDir)).toBeUndefined();
  });

  it('a second process reuses the running server; the last one to leave stops it; the data stays sound', async () => {
    const holder = user('hold');
    const ready = await nextLine(holder.lines);
    expect(ready).toMatch(/^ready \d+$/);
    const serverPid = Number(ready.split(' ')[1]);
    expect(alive(serverPid)).toBe(true);

    // Other processes come and go while the holder keeps its connection.
    const [m, a] = await Promise.all([recon('migrate'), user('append', '2').done]);
    expect(m.code, m.stderr).toBe(0);
    expect(a.code, a.stderr).toBe(0);
    for (const r of [m, a]) {
      expect(logged(r.stderr, 'embedded PostgreSQL started')).toHaveLength(0);
      expect(logged(r.stderr, 'embedded PostgreSQL stopped')).toHaveLength(0);
    }
    // The server they used is the holder's, still running and still serving the holder.
    expect(runningServer(dataDir)?.pid).toBe(serverPid);
    holder.child.stdin!.write('count\n');
    expect(await nextLine(holder.lines)).toBe('count 2');

    holder.child.stdin!.write('exit\n');
    const h = await holder.done;
    expect(h.code, h.stderr).toBe(0);
    expect(logged(h.stderr, 'embedded PostgreSQL stopped')).toHaveLength(1);
    expectStopped(serverPid);

    // Started again: the last shutdown was clean (no crash recovery) and every event is there.
    const r = await user('read').done;
    expect(JSON.parse(r.stdout)).toEqual([1, 2]);
    const log = readFileSync(path.join(dataDir, 'pg.log'), 'utf8');
    expect(log).not.toMatch(/not properly shut down|automatic recovery|PANIC|invalid page/);
  });

  it('two processes starting at once never start two servers on the same data', async () => {
    const logBefore = readFileSync(path.join(dataDir, 'pg.log'), 'utf8').length;
    const [a, b] = await Promise.all([user('append', '3').done, user('append', '4').done]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    // One started the server, or (when the first was done before the second got going) each in turn:
    // never a second postmaster on a data directory in use.
    const starts = logged(a.stderr + b.stderr, 'embedded PostgreSQL started').length;
    expect(starts === 1 || starts === 2).toBe(true);
    expect(readFileSync(path.join(dataDir, 'pg.log'), 'utf8').slice(logBefore)).not.toMatch(
      /lock file .* already exists|another server/,
    );
    expect(runningServer(dataDir)).toBeUndefined();
    expect(JSON.parse((await user('read').done).stdout)).toEqual(expect.arrayContaining([1, 2, 3, 4]));
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the server cleanly when its owner gets ${signal}`, async () => {
      const holder = user('hold');
      const serverPid = Number((await nextLine(holder.lines)).split(' ')[1]);
      expect(alive(serverPid)).toBe(true);
      holder.child.kill(signal);
      const h = await holder.done;
      expect(h.code, h.stderr).toBe(0);
      expect(logged(h.stderr, 'signal received, finishing')).toHaveLength(1);
      expect(logged(h.stderr, 'embedded PostgreSQL stopped')).toHaveLength(1);
      expectStopped(serverPid);
    });
  }
});
