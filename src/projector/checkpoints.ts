import { formatPosition, type RecordedEvent } from '../store/types';
import { handlesAny } from './handlers';
import { tryLockForBatch } from './locks';
import type { Projection, Tx } from './projection';
import { recordQuarantine } from './quarantine-store';
import type { BuildRow, RunnerDeps } from './runner-types';
import { applySettingAside, failsWhateverTheEvent, type SetAside } from './set-aside';
import { contextFor } from './settings';

/**
 * Exactly once: a batch of events and the build's checkpoint move in one transaction. The checkpoint is
 * re-read under the lock before applying, so a batch read by a runner that lost the race is never applied;
 * a crashed runner resumes from the last committed checkpoint.
 */

export type StepResult =
  /** `setAside`: the events that could not be applied, quarantined (docs/reliability.md) */
  | { kind: 'applied'; count: number; setAside: readonly SetAside[] }
  /** another runner holds the projection */
  | { kind: 'busy' }
  /** another runner applied since the batch was read: read again from its checkpoint */
  | { kind: 'moved' }
  /** the build was retired meanwhile */
  | { kind: 'gone' };

/**
 * Applies one batch to one build: lock, re-check the checkpoint, apply, move the checkpoint; one transaction.
 * When the batch cannot be applied for its events' sake (not a lost connection, a cancel or a deadlock), a
 * second transaction applies it setting aside what cannot be applied (set-aside.ts): those events are
 * quarantined with the checkpoint's move, and the build goes on with the next batch.
 *
 * A batch holding no event of a type the projection handles (`p.handles`) is not applied: the checkpoint
 * moves past it alone (same lock, same re-check), so the build stays caught up, and nothing can be set aside
 * from it. Its events still count in `events_applied`, as every event the build went past always did.
 */
export async function step(
  deps: RunnerDeps,
  p: Projection,
  build: BuildRow,
  events: readonly RecordedEvent[],
  signal?: AbortSignal,
): Promise<StepResult> {
  if (!handlesAny(p.handles, events)) return inTransaction(deps, p, build, events, async () => []);
  try {
    return await inTransaction(deps, p, build, events, async (tx) => {
      await p.apply(tx, events, contextFor(deps, build));
      return [];
    });
  } catch (e) {
    if (signal?.aborted || failsWhateverTheEvent(e)) throw e;
    deps.log.warn('projection batch failed: applying it append by append to set aside what cannot be applied', {
      projection: p.name,
      schema: build.schema_name,
      error: e,
    });
    return inTransaction(deps, p, build, events, async (tx) => {
      const aside = await applySettingAside(tx, p, events, contextFor(deps, build), e);
      for (const a of aside) await recordQuarantine(tx, build, a.event, a.error);
      return aside;
    });
  }
}

async function inTransaction(
  deps: RunnerDeps,
  p: Projection,
  build: BuildRow,
  events: readonly RecordedEvent[],
  apply: (tx: Tx) => Promise<SetAside[]>,
): Promise<StepResult> {
  const lastEvent = events[events.length - 1]!;
  const last = lastEvent.position;
  return deps.sql.begin(async (tx): Promise<StepResult> => {
    const row = await tryLockForBatch(tx, p.name, build.schema_name);
    if (!row.ok) return { kind: 'busy' };
    if (!row.status || row.status === 'retired') return { kind: 'gone' };
    if (row.checkpoint !== build.checkpoint) return { kind: 'moved' };
    const setAside = await apply(tx as Tx);
    const text = formatPosition(last);
    await tx`
      update projection_builds set checkpoint = ${text}, checkpoint_commit = ${last.commit.toString()}::numeric,
        checkpoint_prepare = ${last.prepare.toString()}::numeric, checkpoint_event_id = ${lastEvent.id}::uuid,
        events_applied = events_applied + ${events.length}, updated_at = now()
      where schema_name = ${build.schema_name}`;
    build.checkpoint = text;
    build.checkpoint_event_id = lastEvent.id;
    build.events_applied += BigInt(events.length);
    return { kind: 'applied', count: events.length, setAside };
  }) as Promise<StepResult>;
}
