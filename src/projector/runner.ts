/**
 * The projection runner. Every projection in projections/ is caught up from its checkpoint: each batch of
 * events and the checkpoint move in one transaction (exactly once). A transaction-scoped advisory lock per
 * projection name keeps a second runner from working on the same projection at the same time (it skips),
 * and the checkpoint is re-read under a row lock before applying, so a batch read by a runner that lost
 * the race is never applied. A crashed runner resumes from the last committed checkpoint.
 *
 * A batch holding no event of a type the projection handles (its `handles`) is not applied: the checkpoint
 * moves past it alone, so the build stays caught up (checkpoints.ts).
 *
 * A projection whose `version` differs from its live build (or a forced rebuild) is built from zero in a
 * new schema beside the live one; when caught up, one transaction re-points the `recon.*` views to it,
 * marks it live and drops the old build.
 *
 * One concern per file:
 * | file | concern |
 * | --- | --- |
 * | `run.ts` | one run: plan the builds, check them against the store, advance, go live, report |
 * | `follow.ts` | live mode: run again whenever events are appended |
 * | `advance.ts` | one loop over batches per build, each at its own pace |
 * | `read-window.ts` | one read of the store for every build; a build runs ahead of the slowest by the window at most |
 * | `store-feed.ts` | every use of the event store: batches (for builds off the window: one read shared by builds passing one checkpoint), head, event at a checkpoint, wake-ups |
 * | `claims.ts` | which worker runs which projection: a session lock per projection, taken over when its worker dies |
 * | `share.ts` | a run shared with other workers (`recon project --share`) |
 * | `threads.ts` | a run's projections spread over worker threads of one process, groups of about equal cost |
 * | `thread-main.ts` | a worker thread's body (started by `thread-entry.mjs`): its own connections, its group run |
 * | `checkpoints.ts` | one batch applied (or gone past: none of the types it handles) and the checkpoint moved in one transaction |
 * | `set-aside.ts` | a batch that cannot be applied: the events that cannot, set aside |
 * | `quarantine-store.ts` | the set-aside events' table: recorded, listed |
 * | `quarantine.ts` | the set-aside events summed up (nightly report) and applied again (`recon quarantine retry`) |
 * | `test-poison.ts` | tests only: an apply that throws on listed events (RECON_TEST_POISON_FILE) |
 * | `locks.ts` | the lock per projection |
 * | `builds.ts` | the builds table: create, drop, make ready, list |
 * | `promote.ts` | rebuild beside live: the caught-up build goes live |
 * | `store-check.ts` | whether a build is still on this store |
 * | `settings.ts` | the settings a build applies events with |
 * | `load.ts` | the projections of projections/ |
 * | `handlers.ts` | the event types a projection handles, its handler tables, "is this event one of these?" |
 * | `errors.ts` | why a run stopped |
 * | `runner-types.ts` | what the runner is given and reports |
 */

export { projectionBuilds } from './builds';
export {
  ProjectionAheadOfStoreError,
  ProjectionApplyError,
  ProjectionCheckpointMismatchError,
  ProjectionsFailedError,
} from './errors';
export { type FollowOptions, followProjections } from './follow';
export { loadProjections } from './load';
export { rebuildProjection, runProjections } from './run';
export {
  listQuarantine,
  type QuarantinedEvent,
  type QuarantineSummary,
  quarantineSummary,
  type RetryResult,
  retryQuarantined,
} from './quarantine';
export { type ShareOptions, shareProjections } from './share';
export { defaultThreads, PROJECTION_COST, threadSource } from './threads';
export type {
  ProjectionProgress,
  ProjectionReport,
  Report,
  RunnerDeps,
  RunOptions,
  SetAsideEvent,
  ThreadSource,
} from './runner-types';
export { type BuildOnStore, checkBuildsOnStore } from './store-check';
