import { comparePositions, formatPosition, parsePosition, type RecordedEvent } from '../store/types';
import { currentBuild } from './builds';
import { step } from './checkpoints';
import { ProjectionApplyError } from './errors';
import { errorText } from './quarantine-store';
import type { RunnerDeps, RunOptions, Target } from './runner-types';
import { type Carry, readBatch } from './store-feed';

/**
 * Advances every target build to the head. Builds at the same checkpoint (every build of a rebuild from
 * zero, every live projection that is up to date) share one readAll per batch; each applies it in a
 * transaction of its own, all at the same time (on separate connections: the database works on one
 * projection's batch while another's is computed), and the store reads the next page meanwhile.
 */
export async function advanceAll(deps: RunnerDeps, targets: Target[], opts: RunOptions): Promise<void> {
  const batchSize = Math.max(1, opts.batchSize ?? 1000);
  let carry: Carry | undefined;
  for (;;) {
    if (opts.signal?.aborted) return;
    const active = targets.filter((t) => t.active);
    if (active.length === 0) return;
    const key = (t: Target) => (t.build.checkpoint ? parsePosition(t.build.checkpoint) : { commit: -1n, prepare: -1n });
    const lowest = active.reduce((m, t) => (comparePositions(key(t), key(m)) < 0 ? t : m));
    const group = active.filter((t) => t.build.checkpoint === lowest.build.checkpoint);
    const read = await readBatch(deps.store, lowest.build.checkpoint, batchSize, opts.until, carry);
    const { events, reachedEnd } = read;
    carry = read.carry;
    if (events.length === 0) {
      for (const t of group) {
        t.caughtUp = true;
        t.active = false;
      }
      continue;
    }
    const results = await Promise.allSettled(group.map((t) => advanceOne(deps, t, events, reachedEnd, opts)));
    // A build that cannot apply a batch stops alone; the others read on (one failing
    // projection, always the lowest checkpoint, kept every other one from following the store).
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      const t = group[i]!;
      t.active = false;
      t.failed = new ProjectionApplyError(
        t.p.name,
        t.build.schema_name,
        formatPosition(events[0]!.position),
        formatPosition(events[events.length - 1]!.position),
        r.reason,
      );
      deps.log.error('projection could not apply a batch; the others carry on', {
        projection: t.p.name,
        schema: t.build.schema_name,
        error: t.failed.message,
      });
    });
  }
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
