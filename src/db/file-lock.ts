import { closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Interrupted } from '../errors';

/**
 * An exclusive lock file holding its owner's identity. A lock whose owner has died is taken over, so a killed
 * process never blocks the next one.
 *
 * The file is created whole: its content is written to a private temporary file first and then hard-linked
 * to the lock's name (link fails when the name exists), so no process ever sees a lock without its owner.
 * It holds JSON `{ pid, token }`: the token tells this process from an earlier one that had the same pid
 * (after a container restart pids start again from 1 and a new process commonly gets the pid of the one that
 * was killed holding the lock). On Linux the token is the boot id and the process's start time, which also
 * tells a live owner from an unrelated process that reuses its pid; elsewhere a random nonce.
 *
 * A lock is stale, and removed, when:
 * - it names this process's pid with another token (a process that had this pid before);
 * - it names a process that is gone (no such pid, another boot, or a pid now used by a process started at
 *   another time);
 * - it holds only a pid (the format before tokens) naming this process, or a dead one;
 * - it has been seen empty or unreadable for `UNREADABLE_STALE_MS` (its creator was killed between creating
 *   and writing it; whole-file creation leaves no such window, a version before it or a file system without
 *   hard links one of microseconds).
 *
 * Calls in one process are serialised by an in-process mutex per lock file before they touch the file; a lock
 * naming this pid and token is then held by another instance of this module in this process (a worker
 * thread, on Linux), and is waited for.
 */

const UNREADABLE_STALE_MS = 1_000;
const POLL_MS = 25;

interface Identity {
  readonly pid: number;
  readonly token: string;
}

let self: Identity | undefined;

function linuxToken(pid: number | 'self'): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const start = startTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return boot && start ? `linux:${boot}:${start}` : undefined;
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks after boot); field 2 may hold spaces and ')'. */
function startTicks(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const v = fields[19];
  return v && /^\d+$/.test(v) ? v : undefined;
}

function identity(): Identity {
  self ??= { pid: process.pid, token: linuxToken('self') ?? `nonce:${randomBytes(12).toString('hex')}` };
  return self;
}

type Recorded =
  | { readonly kind: 'owner'; readonly pid: number; readonly token?: string }
  | { readonly kind: 'unreadable' };

function parse(text: string): Recorded {
  const t = text.trim();
  if (/^\d+$/.test(t)) return { kind: 'owner', pid: Number(t) }; // written before tokens
  try {
    const v = JSON.parse(t) as { pid?: unknown; token?: unknown };
    if (Number.isInteger(v.pid) && (v.pid as number) > 0 && typeof v.token === 'string')
      return { kind: 'owner', pid: v.pid as number, token: v.token };
  } catch {
    /* below */
  }
  return { kind: 'unreadable' };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

/** Whether the recorded owner still holds the lock. */
function ownerAlive(owner: { pid: number; token?: string }): boolean {
  const me = identity();
  if (owner.pid === me.pid) return owner.token === me.token;
  if (!pidExists(owner.pid)) return false;
  if (owner.token?.startsWith('linux:') && me.token.startsWith('linux:')) {
    const now = linuxToken(owner.pid);
    // unreadable /proc entry (hidepid): trust the pid
    if (now !== undefined) return now === owner.token;
  }
  return true;
}

/** Creates the lock file with its content in one step; false when it exists. */
function tryCreate(file: string, content: string): boolean {
  const me = identity();
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${me.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
    // A file system without hard links: create and write (an empty file is then visible for an instant).
    try {
      const lfd = openSync(file, 'wx', 0o644);
      try {
        writeSync(lfd, content);
      } finally {
        closeSync(lfd);
      }
      return true;
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e2;
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* gone */
    }
  }
}

// In-process mutex: one holder per lock file in this module instance.
const held = new Map<string, Promise<void>>();

/** Resolves after `ms`, or at once when the signal is aborted. */
function pause(ms: number, signal: AbortSignal | undefined, also?: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    also?.then(done, done);
  });
}

function interrupted(signal: AbortSignal, file: string): Error {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  return new Interrupted(`${reason} while waiting for lock ${file}`);
}

async function acquireInProcess(
  key: string,
  deadline: number,
  file: string,
  signal: AbortSignal | undefined,
  onWait: () => void,
): Promise<() => void> {
  for (;;) {
    if (signal?.aborted) throw interrupted(signal, file);
    const current = held.get(key);
    if (current === undefined) {
      let release!: () => void;
      const mine = new Promise<void>((r) => (release = r));
      held.set(key, mine);
      return () => {
        if (held.get(key) === mine) held.delete(key);
        release();
      };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`timed out waiting for lock ${file} held by this process (pid ${process.pid})`);
    onWait();
    await pause(remaining, signal, current);
  }
}

export interface FileLockOptions {
  /** Stops the wait for a live holder (not `fn`) with an error naming its reason. */
  readonly signal?: AbortSignal;
  /** Called once, when the lock is busy and the call starts waiting; `holder` describes who holds it. */
  readonly onWait?: (holder: string) => void;
}

/** Runs `fn` holding the lock, waiting for a live holder up to `timeoutMs`. */
export async function withFileLock<T>(
  file: string,
  fn: () => Promise<T>,
  timeoutMs = 60_000,
  opts: FileLockOptions = {},
): Promise<T> {
  const { signal } = opts;
  const deadline = Date.now() + timeoutMs;
  let waiting = false;
  const onWait = (holder: string) => {
    if (waiting) return;
    waiting = true;
    opts.onWait?.(holder);
  };
  const releaseInProcess = await acquireInProcess(path.resolve(file), deadline, file, signal, () =>
    onWait('this process'),
  );
  try {
    const me = identity();
    const content = JSON.stringify({ pid: me.pid, token: me.token });
    let unreadableSince: { ino: number; at: number } | undefined;
    for (;;) {
      if (tryCreate(file, content)) break;
      let text: string;
      let ino: number;
      try {
        ino = statSync(file).ino;
        text = readFileSync(file, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        text = '';
        ino = -1;
      }
      const recorded = parse(text);
      let stale: boolean;
      let holder: string;
      if (recorded.kind === 'owner') {
        unreadableSince = undefined;
        stale = !ownerAlive(recorded);
        holder = `pid ${recorded.pid}`;
      } else {
        // Timed by this process (not by the file's mtime, which a network file system's clock may skew).
        if (unreadableSince?.ino !== ino) unreadableSince = { ino, at: Date.now() };
        stale = Date.now() - unreadableSince.at >= UNREADABLE_STALE_MS;
        holder = 'an unknown owner (empty or unreadable lock file)';
      }
      if (stale) {
        try {
          unlinkSync(file);
          unreadableSince = undefined;
          continue;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') continue; // another process removed it first
          holder += ` (stale, but it cannot be removed: ${code})`;
        }
      }
      if (signal?.aborted) throw interrupted(signal, `${file} held by ${holder}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${file} held by ${holder}`);
      onWait(holder);
      await pause(POLL_MS, signal);
    }
    try {
      return await fn();
    } finally {
      // Only our own lock: one taken over from us (wrongly judged stale) belongs to its new owner.
      try {
        if (readFileSync(file, 'utf8') === content) unlinkSync(file);
      } catch {
        /* already gone */
      }
    }
  } finally {
    releaseInProcess();
  }
}
