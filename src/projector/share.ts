import { comparePositions, parsePosition, type Position } from '../store/types';
import { buildsOf } from './builds';
import { projectionClaims } from './claims';
import { selectProjections } from './load';
import type { Projection } from './projection';
import { runProjections } from './run';
import type { ProjectionReport, Report, RunnerDeps, RunOptions } from './runner-types';
import { headText, storeHead } from './store-feed';

/**
 * Several workers sharing the projections of one store (`recon project --share`): each takes the
 * projections whose claim it can get (claims.ts), catches them up to the head and lets them go; one another
 * worker holds is waited for, and taken over when that worker dies (its claims go with its connection).
 * The run ends when every projection is caught up to the head as it was when the run began, by whichever
 * worker.
 */

export interface ShareOptions extends Omit<RunOptions, 'until'> {
  /** at most this many projections claimed at once (default: every free one) */
  readonly max?: number;
  /** how often a projection held by another worker is looked at again, ms (default 250) */
  readonly pollMs?: number;
}

export async function shareProjections(deps: RunnerDeps, opts: ShareOptions = {}): Promise<Report> {
  const list = await selectProjections(deps, opts.names);
  const target = await storeHead(deps.store);
  const claims = projectionClaims(deps.sql, { log: deps.log, ...(opts.max ? { max: opts.max } : {}) });
  const done = new Map<string, ProjectionReport>();
  try {
    while (done.size < list.length && !opts.signal?.aborted) {
      const before = done.size;
      const open = list.filter((p) => !done.has(p.name));
      const mine = await claims.refresh(open.map((p) => p.name));
      if (mine.length > 0) await runClaimed(deps, mine, opts, done, (n) => claims.release(n));
      for (const p of open)
        if (!mine.includes(p.name) && !done.has(p.name)) {
          const other = await caughtUpElsewhere(deps, p, target);
          if (other) done.set(p.name, other);
        }
      if (done.size === before && done.size < list.length) await pause(opts.pollMs ?? 250, opts.signal);
    }
  } finally {
    await claims.close();
  }
  const projections = list.flatMap((p) => done.get(p.name) ?? []);
  return { projections, head: await headText(deps.store) };
}

/** Catches the claimed projections up; those that went to the head are done and let go. */
async function runClaimed(
  deps: RunnerDeps,
  names: readonly string[],
  opts: ShareOptions,
  done: Map<string, ProjectionReport>,
  release: (name: string) => Promise<void>,
): Promise<void> {
  const { max: _max, pollMs: _poll, ...run } = opts;
  const report = await runProjections(deps, { ...run, names });
  for (const r of report.projections) {
    if (r.busy || r.status !== 'live' || opts.signal?.aborted) continue;
    done.set(r.name, r);
    await release(r.name);
  }
}

/**
 * A projection another worker holds is done once its live build, of the current version, is at the head
 * the run began with and no build of it is under way.
 */
async function caughtUpElsewhere(
  deps: RunnerDeps,
  p: Projection,
  target: Position | undefined,
): Promise<ProjectionReport | undefined> {
  const builds = await buildsOf(deps.sql, p.name);
  const live = builds.find((b) => b.status === 'live');
  if (!live || live.version !== p.version || builds.some((b) => b.status === 'building')) return undefined;
  const reached =
    target === undefined || (live.checkpoint !== null && comparePositions(parsePosition(live.checkpoint), target) >= 0);
  if (!reached) return undefined;
  return {
    name: p.name,
    version: p.version,
    schema: live.schema_name,
    status: 'live',
    applied: 0,
    totalApplied: Number(live.events_applied),
    position: live.checkpoint,
    wentLive: false,
    busy: true,
    setAside: [],
  };
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
