import { comparePositions, formatPosition, parsePosition, type Position } from '../store/types';
import { allBuilds } from './builds';
import { ProjectionAheadOfStoreError, ProjectionCheckpointMismatchError } from './errors';
import type { Projection } from './projection';
import type { BuildRow, RunnerDeps, Target } from './runner-types';
import { type EventAt, eventAtOnce, storeHead } from './store-feed';

/**
 * "Still on this store?": a build's checkpoint must be a place in this event store's log before the run
 * reads on from it (after a restore, or another store, it may not be), and `recon store check` asks the
 * same of every build without changing anything.
 */

/**
 * Why a build's checkpoint is not a place in this store's log, or undefined when it is: it must be below
 * the head (checkpoints never pass the head on their own: a reader only sees events below it, and it only
 * moves on) and hold the event the build last applied. A build past the head was made from another store
 * (ProjectionAheadOfStoreError); one whose checkpoint holds another event, or none, from a store since
 * restored to an older backup and appended to again (ProjectionCheckpointMismatchError). A build made
 * before the event ids were recorded has none: `record` takes the one at its checkpoint.
 */
async function offStore(
  deps: Pick<RunnerDeps, 'sql' | 'log'>,
  build: BuildRow,
  head: Position | undefined,
  eventAt: EventAt,
  record: boolean,
): Promise<ProjectionAheadOfStoreError | ProjectionCheckpointMismatchError | undefined> {
  const at = build.checkpoint;
  if (at === null) return undefined;
  if (head === undefined || comparePositions(parsePosition(at), head) > 0) {
    return new ProjectionAheadOfStoreError(build.name, build.schema_name, at, head ? formatPosition(head) : null);
  }
  const found = (await eventAt(at))?.id.toLowerCase() ?? null;
  const applied = build.checkpoint_event_id?.toLowerCase() ?? null;
  if (applied === null && found !== null) {
    if (record) {
      await deps.sql`update projection_builds set checkpoint_event_id = ${found}::uuid
        where schema_name = ${build.schema_name} and checkpoint = ${at} and checkpoint_event_id is null`;
      build.checkpoint_event_id = found;
      deps.log.info('projection checkpoint event recorded', {
        projection: build.name,
        schema: build.schema_name,
        checkpoint: at,
        event: found,
      });
    }
    return undefined;
  }
  // no event at a checkpoint (whatever was recorded) is never on this store: a follower only stops on events
  return found !== null && found === applied
    ? undefined
    : new ProjectionCheckpointMismatchError(build.name, build.schema_name, at, applied, found);
}

/**
 * Stops the run when a build is not on this store (see offStore). A live build in that state is left alone
 * while a new build of its projection is under way (the rebuild that repairs it, which replaces it when
 * caught up).
 */
export async function refuseBuildsNotOnStore(
  deps: RunnerDeps,
  targets: Target[],
  plans: ReadonlyArray<{ p: Projection; building: BuildRow | undefined }>,
): Promise<void> {
  const head = await storeHead(deps.store);
  const eventAt = eventAtOnce(deps.store);
  for (const t of targets) {
    const problem = await offStore(deps, t.build, head, eventAt, true);
    if (!problem) continue;
    const rebuilding = plans.some((pl) => pl.p === t.p && pl.building !== undefined && pl.building !== t.build);
    if (!rebuilding) throw problem;
    deps.log.warn('live build not advanced: it is not on this event store; the build under way replaces it', {
      projection: t.p.name,
      schema: t.build.schema_name,
      checkpoint: t.build.checkpoint,
      reason: problem.message,
    });
    t.active = false;
  }
}

export interface BuildOnStore {
  readonly name: string;
  readonly schema: string;
  readonly status: 'building' | 'live';
  readonly checkpoint: string | null;
  /** null: the build's checkpoint is a place in this store's log */
  readonly problem: {
    readonly code: 'PROJECTION_AHEAD_OF_STORE' | 'PROJECTION_CHECKPOINT_MISMATCH';
    readonly message: string;
  } | null;
}

/**
 * Whether every projection build (building or live) is on this event store, without changing anything:
 * what `recon store check` reports after a restore. A build made before the event ids were recorded counts
 * as on the store when an event is at its checkpoint.
 */
export async function checkBuildsOnStore(deps: Pick<RunnerDeps, 'sql' | 'store' | 'log'>): Promise<BuildOnStore[]> {
  const builds = await allBuilds(deps.sql);
  const head = await storeHead(deps.store);
  const eventAt = eventAtOnce(deps.store);
  const out: BuildOnStore[] = [];
  for (const b of builds) {
    const problem = await offStore(deps, b, head, eventAt, false);
    out.push({
      name: b.name,
      schema: b.schema_name,
      status: b.status as 'building' | 'live',
      checkpoint: b.checkpoint,
      problem: problem ? { code: problem.code, message: problem.message } : null,
    });
  }
  return out;
}
