import { formatPosition, type RecordedEvent } from '../store/types';
import { tryLockForBatch } from './locks';
import type { Projection } from './projection';
import type { BuildRow, RunnerDeps } from './runner-types';
import { contextFor } from './settings';

/**
 * Exactly once: a batch of events and the build's checkpoint move in one transaction. The checkpoint is
 * re-read under the lock before applying, so a batch read by a runner that lost the race is never applied;
 * a crashed runner resumes from the last committed checkpoint.
 */

export type StepResult =
  | { kind: 'applied'; count: number }
  /** another runner holds the projection */
  | { kind: 'busy' }
  /** another runner applied since the batch was read: read again from its checkpoint */
  | { kind: 'moved' }
  /** the build was retired meanwhile */
  | { kind: 'gone' };

/** Applies one batch to one build: lock, re-check the checkpoint, apply, move the checkpoint; one transaction. */
export async function step(
  deps: RunnerDeps,
  p: Projection,
  build: BuildRow,
  events: readonly RecordedEvent[],
): Promise<StepResult> {
  const lastEvent = events[events.length - 1]!;
  const last = lastEvent.position;
  return deps.sql.begin(async (tx): Promise<StepResult> => {
    const row = await tryLockForBatch(tx, p.name, build.schema_name);
    if (!row.ok) return { kind: 'busy' };
    if (!row.status || row.status === 'retired') return { kind: 'gone' };
    if (row.checkpoint !== build.checkpoint) return { kind: 'moved' };
    await p.apply(tx, events, contextFor(deps, build));
    const text = formatPosition(last);
    await tx`
      update projection_builds set checkpoint = ${text}, checkpoint_commit = ${last.commit.toString()}::numeric,
        checkpoint_prepare = ${last.prepare.toString()}::numeric, checkpoint_event_id = ${lastEvent.id}::uuid,
        events_applied = events_applied + ${events.length}, updated_at = now()
      where schema_name = ${build.schema_name}`;
    build.checkpoint = text;
    build.checkpoint_event_id = lastEvent.id;
    build.events_applied += BigInt(events.length);
    return { kind: 'applied', count: events.length };
  }) as Promise<StepResult>;
}
