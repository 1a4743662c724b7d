import { formatPosition, type RecordedEvent } from '../store/types';
import { currentBuild } from './builds';
import { step } from './checkpoints';
import { ProjectionApplyError } from './errors';
import { errorText } from './quarantine-store';
import type { RunnerDeps, RunOptions, Target } from './runner-types';
import { type ReadWindow, readWindow } from './read-window';

/**
 * Advances every target build to the head, each at its own pace: one loop per build, from its own
 * checkpoint, so that a fast projection never waits for a slow one (found in issue 26: in lockstep, every
 * build applied each batch before any read the next, and the rebuild went at the pace of the slowest).
 * One read of the store feeds them all (read-window.ts): a build runs ahead of the slowest by at most the
 * window kept in memory, and one that stops holds no one back. Each applies a batch in a transaction of its
 * own on its own connection. Two builds of one
 * projection (the live one and a rebuild beside it) take turns: they share the projection's lock.
 */
export async function advanceAll(deps: RunnerDeps, targets: Target[], opts: RunOptions): Promise<void> {
  const batchSize = Math.max(1, opts.batchSize ?? 1000);
  const active = targets.filter((t) => t.active);
  const feed = readWindow({
    store: deps.store,
    batchSize,
    until: opts.until,
    checkpoints: active.map((t) => t.build.checkpoint),
  });
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const mine = (turns.get(name) ?? Promise.resolve()).then(fn);
    turns.set(
      name,
      mine.catch(() => {}),
    );
    return mine;
  };
  const results = await Promise.allSettled(
    active.map(async (t, reader) => {
      try {
        await advanceTarget(deps, t, (checkpoint) => feed.batchAfter(reader, checkpoint), opts, inTurn);
      } finally {
        feed.leave(reader);
      }
    }),
  );
  // a read of the store that failed fails the run (as before); every other build went as far as it could
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/** One build's loop: the batch after its checkpoint, applied, until the head (or `until`, or a stop). */
async function advanceTarget(
  deps: RunnerDeps,
  t: Target,
  batchAfter: (checkpoint: string | null) => ReturnType<ReadWindow['batchAfter']>,
  opts: RunOptions,
  inTurn: <T>(name: string, fn: () => Promise<T>) => Promise<T>,
): Promise<void> {
  while (t.active && !opts.signal?.aborted) {
    const { events, reachedEnd } = await batchAfter(t.build.checkpoint);
    if (events.length === 0) {
      t.caughtUp = true;
      t.active = false;
      return;
    }
    try {
      await inTurn(t.p.name, () => advanceOne(deps, t, events, reachedEnd, opts));
    } catch (e) {
      // A build that cannot apply a batch stops alone; the others read on.
      stopFailed(deps, t, events, e);
    }
  }
}

function stopFailed(deps: RunnerDeps, t: Target, events: readonly RecordedEvent[], e: unknown): void {
  t.active = false;
  t.failed = new ProjectionApplyError(
    t.p.name,
    t.build.schema_name,
    formatPosition(events[0]!.position),
    formatPosition(events[events.length - 1]!.position),
    e,
  );
  deps.log.error('projection could not apply a batch; the others carry on', {
    projection: t.p.name,
    schema: t.build.schema_name,
    error: t.failed.message,
  });
}

/** Applies one shared batch to one target build and updates the target's state. */
async function advanceOne(
  deps: RunnerDeps,
  t: Target,
  events: readonly RecordedEvent[],
  reachedEnd: boolean,
  opts: RunOptions,
): Promise<void> {
  const r = await step(deps, t.p, t.build, events, opts.signal);
  if (r.kind === 'busy' || r.kind === 'gone') {
    t.busy = r.kind === 'busy';
    t.active = false;
  } else if (r.kind === 'moved') {
    // another runner applied in between: continue from its checkpoint
    const fresh = await currentBuild(deps.sql, t.build);
    if (!fresh) t.active = false;
    else {
      t.build.checkpoint = fresh.checkpoint;
      t.build.checkpoint_event_id = fresh.checkpoint_event_id;
      t.build.events_applied = fresh.events_applied;
    }
  } else {
    t.applied += r.count - r.setAside.length;
    for (const a of r.setAside) {
      const entry = {
        eventId: a.event.id,
        eventType: a.event.type,
        stream: a.event.stream,
        position: formatPosition(a.event.position),
        error: errorText(a.error),
      };
      t.setAside.push(entry);
      deps.log.error('projection set an event aside (quarantined); it carries on with the next ones', {
        projection: t.p.name,
        schema: t.build.schema_name,
        event: entry.eventId,
        type: entry.eventType,
        position: entry.position,
        error: entry.error,
      });
    }
    opts.onProgress?.({
      name: t.p.name,
      schema: t.build.schema_name,
      status: t.build.status === 'live' ? 'live' : 'building',
      applied: t.applied,
      position: t.build.checkpoint,
    });
    if (reachedEnd) {
      t.caughtUp = true;
      t.active = false;
    }
  }
}
