import { advanceAll } from './advance';
import { buildsOf, ensureBuilds } from './builds';
import { ProjectionApplyError, ProjectionsFailedError } from './errors';
import { selectProjections } from './load';
import type { Projection } from './projection';
import { promote } from './promote';
import type { BuildRow, ProjectionReport, Report, RunnerDeps, RunOptions, Target } from './runner-types';
import { headText } from './store-feed';
import { refuseBuildsNotOnStore } from './store-check';
import { applyFailuresOf, ProjectionThreadError, runOnThread, spreadPlan, type ThreadError } from './threads';

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

export async function runAll(
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

/**
 * `runAll` over `opts.threads` threads (threads.ts): the first group of projections here, each other in a worker
 * thread; every group goes as far as it can, then the reports come back in the list's order and the failures
 * of every group are thrown together, as one run's are.
 */
async function runSpread(
  deps: RunnerDeps,
  list: readonly Projection[],
  opts: RunOptions,
  fresh: boolean,
): Promise<ProjectionReport[]> {
  const groups = await spreadPlan(deps, list, opts.threads);
  if (!groups) return runAll(deps, list, opts, fresh);
  const [here, ...away] = groups;
  const job = { timezone: deps.timezone, graceHours: deps.graceHours, fresh, source: deps.threadSource! };
  const settled = await Promise.allSettled([
    runAll(deps, here!, opts, fresh),
    ...away.map((g) =>
      runOnThread(
        {
          ...job,
          names: g.map((p) => p.name),
          ...(deps.bank ? { bank: deps.bank } : {}),
          ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
          ...(opts.until ? { until: opts.until } : {}),
        },
        deps.log,
        opts,
      ),
    ),
  ]);
  return mergeGroups(list, settled);
}

/** The groups' reports in the list's order; their failures thrown together (apply failures as one run's). */
function mergeGroups(
  list: readonly Projection[],
  settled: PromiseSettledResult<
    ProjectionReport[] | { reports: readonly ProjectionReport[] } | { error: ThreadError }
  >[],
): ProjectionReport[] {
  const reports: ProjectionReport[] = [];
  const applyFailures: ProjectionApplyError[] = [];
  let other: unknown;
  for (const s of settled) {
    if (s.status === 'rejected') {
      if (s.reason instanceof ProjectionsFailedError) applyFailures.push(...s.reason.failures);
      else if (s.reason instanceof ProjectionApplyError) applyFailures.push(s.reason);
      else other ??= s.reason;
    } else if (Array.isArray(s.value)) reports.push(...s.value);
    else if ('reports' in s.value) reports.push(...s.value.reports);
    else if (s.value.error.type === 'apply') applyFailures.push(...applyFailuresOf(s.value.error));
    else other ??= new ProjectionThreadError(s.value.error);
  }
  if (other !== undefined) throw other;
  if (applyFailures.length === 1) throw applyFailures[0];
  if (applyFailures.length > 1) throw new ProjectionsFailedError(applyFailures);
  const order = new Map(list.map((p, i) => [p.name, i]));
  return reports.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
}

/** Catches every projection (or `opts.names`) up to the head of the store and returns. */
export async function runProjections(deps: RunnerDeps, opts: RunOptions = {}): Promise<Report> {
  const list = await selectProjections(deps, opts.names);
  const reports = await runSpread(deps, list, opts, false);
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
  const reports = await runSpread(deps, list, opts, true);
  return { projections: reports, head: await headText(deps.store) };
}
