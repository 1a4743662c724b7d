import { advanceAll } from './advance';
import { buildsOf, ensureBuilds } from './builds';
import { ProjectionsFailedError } from './errors';
import { selectProjections } from './load';
import type { Projection } from './projection';
import { promote } from './promote';
import type { BuildRow, ProjectionReport, Report, RunnerDeps, RunOptions, Target } from './runner-types';
import { headText } from './store-feed';
import { refuseBuildsNotOnStore } from './store-check';

/** One run: every projection's builds made ready, checked against the store, advanced, and gone live. */

interface Plan {
  readonly p: Projection;
  readonly live: BuildRow | undefined;
  readonly building: BuildRow | undefined;
}

/** Makes each projection's builds ready; the targets are the builds this run advances. */
async function plan(deps: RunnerDeps, list: readonly Projection[], fresh: boolean) {
  const targets: Target[] = [];
  const plans: Plan[] = [];
  for (const p of list) {
    await ensureBuilds(deps, p, fresh);
    const builds = await buildsOf(deps.sql, p.name);
    const live = builds.find((b) => b.status === 'live');
    const building = builds.find((b) => b.status === 'building');
    plans.push({ p, live, building });
    // The live build keeps serving fresh data while a new one builds, when its code is still the current one.
    if (live && live.version === p.version)
      targets.push({ p, build: live, applied: 0, active: true, caughtUp: false, busy: false, setAside: [] });
    if (building)
      targets.push({ p, build: building, applied: 0, active: true, caughtUp: false, busy: false, setAside: [] });
  }
  return { targets, plans };
}

/** A caught-up build goes live; the report shows the build that serves after the run (or is still building). */
async function finish(deps: RunnerDeps, plan: Plan, targets: Target[], opts: RunOptions): Promise<ProjectionReport> {
  const { p, live, building } = plan;
  const mine = targets.filter((t) => t.p === p);
  let busy = mine.some((t) => t.busy);
  let wentLive = false;
  let shown = live;
  const b = mine.find((t) => t.build === building);
  if (building && b?.caughtUp && !opts.signal?.aborted) {
    if (await promote(deps, p, building)) {
      wentLive = true;
      shown = building;
    } else busy = true;
  } else if (building) shown = building;
  return {
    name: p.name,
    version: p.version,
    schema: shown!.schema_name,
    status: shown!.status === 'live' ? 'live' : 'building',
    applied: mine.reduce((s, t) => s + t.applied, 0),
    totalApplied: Number(shown!.events_applied),
    position: shown!.checkpoint,
    wentLive,
    busy,
    setAside: mine.flatMap((t) => t.setAside),
  };
}

async function runAll(
  deps: RunnerDeps,
  list: readonly Projection[],
  opts: RunOptions,
  fresh: boolean,
): Promise<ProjectionReport[]> {
  const { targets, plans } = await plan(deps, list, fresh);
  await refuseBuildsNotOnStore(deps, targets, plans);
  await advanceAll(deps, targets, opts);
  const reports: ProjectionReport[] = [];
  for (const pl of plans) reports.push(await finish(deps, pl, targets, opts));
  // after every other projection went as far as it could, and every caught-up build went live
  const failures = targets.flatMap((t) => (t.failed ? [t.failed] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new ProjectionsFailedError(failures);
  return reports;
}

/** Catches every projection (or `opts.names`) up to the head of the store and returns. */
export async function runProjections(deps: RunnerDeps, opts: RunOptions = {}): Promise<Report> {
  const list = await selectProjections(deps, opts.names);
  const reports = await runAll(deps, list, opts, false);
  return { projections: reports, head: await headText(deps.store) };
}

/**
 * Rebuilds from zero, beside the live build, the named projection (or every one), then swaps it in.
 * The live build keeps serving (and following the store) until the new one has caught up.
 */
export async function rebuildProjection(
  deps: RunnerDeps,
  name?: string,
  opts: Omit<RunOptions, 'names'> = {},
): Promise<Report> {
  const list = await selectProjections(deps, name ? [name] : undefined);
  const reports = await runAll(deps, list, opts, true);
  return { projections: reports, head: await headText(deps.store) };
}
