import { readFileSync, readdirSync } from 'node:fs';
import type { BenchContext } from './harness';

/**
 * CPU time (user + system, ms) of a process from /proc, and of a PostgreSQL server's processes (the
 * children of its postmaster): where a record's time goes, measured beside the rates. Linux and a local
 * server only; undefined otherwise.
 */
export function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** A client backend's title names its client address; every other server process works in the background. */
function isBackground(pid: number): boolean {
  try {
    return !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * CPU of the server's processes so far, per pid, and whether each works in the background (checkpointer,
 * WAL writer, autovacuum) rather than for a client. A delta counts what each process present at the end
 * used since the start (its whole CPU if it started since): a backend that exited in between (a closed
 * pool) is left out rather than subtracted.
 */
export type CpuSnapshot = Map<number, { ms: number; background: boolean }>;
export async function serverCpuMeter(sql: BenchContext['sql']): Promise<() => CpuSnapshot | undefined> {
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const postmaster = parentOf(row!.pid);
  return () => {
    if (postmaster === undefined || processCpuMs(postmaster) === undefined) return undefined;
    const snapshot: CpuSnapshot = new Map([[postmaster, { ms: processCpuMs(postmaster)!, background: true }]]);
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d) || parentOf(Number(d)) !== postmaster) continue;
      const ms = processCpuMs(Number(d));
      if (ms !== undefined) snapshot.set(Number(d), { ms, background: isBackground(Number(d)) });
    }
    return snapshot;
  };
}

export function cpuSince(
  before: CpuSnapshot | undefined,
  after: CpuSnapshot | undefined,
  only?: 'background',
): number | undefined {
  if (!before || !after) return undefined;
  let ms = 0;
  for (const [pid, now] of after) if (!only || now.background) ms += now.ms - (before.get(pid)?.ms ?? 0);
  return ms;
}

/**
 * CPU of this process, another process and the PostgreSQL server over `fn`, in µs per unit of work;
 * `serverBackground` is the part of `server` spent by the server's background processes.
 */
export async function cpuPer<T>(
  units: (r: T) => number,
  meters: { serverCpu: () => CpuSnapshot | undefined; otherPid?: number },
  fn: () => Promise<T>,
) {
  const self0 = process.cpuUsage();
  const other0 = meters.otherPid ? processCpuMs(meters.otherPid) : undefined;
  const server0 = meters.serverCpu();
  const r = await fn();
  const self = process.cpuUsage(self0);
  const other1 = meters.otherPid ? processCpuMs(meters.otherPid) : undefined;
  const server1 = meters.serverCpu();
  const n = units(r);
  const per = (ms: number | undefined) => (ms === undefined ? 'n/a' : ((ms * 1000) / n).toFixed(0));
  return {
    result: r,
    self: per((self.user + self.system) / 1000),
    other: per(other0 !== undefined && other1 !== undefined ? other1 - other0 : undefined),
    server: per(cpuSince(server0, server1)),
    serverBackground: per(cpuSince(server0, server1, 'background')),
  };
}

/**
 * The server's CPU over a long run whose backends come and go (pools closing idle connections, a worker
 * thread's pool at its end): sampled every `everyMs`, each process's last sample kept after it exits, so a
 * stage's figure loses at most one interval of a backend that ended within it. `totalMs()` samples once more
 * and adds up every process seen so far.
 */
export async function serverCpuTracker(sql: BenchContext['sql'], everyMs = 500) {
  const meter = await serverCpuMeter(sql);
  const seen = new Map<number, number>();
  const sample = () => {
    for (const [pid, { ms }] of meter() ?? []) seen.set(pid, Math.max(ms, seen.get(pid) ?? 0));
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    totalMs(): number {
      sample();
      let ms = 0;
      for (const v of seen.values()) ms += v;
      return ms;
    },
    stop: () => clearInterval(timer),
  };
}
