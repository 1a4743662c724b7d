import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import { advanceClock } from '../src/reconciliation/batch';
import { judgeAppend } from '../src/reconciliation/judge';
import { loadBatch } from '../src/reconciliation/load-batch';
import { emptyPlan, evolving, planning } from '../src/reconciliation/reconciliation-events';
import { createTables, publishedViews } from '../src/reconciliation/tables';
import { writeBatch } from '../src/reconciliation/write-batch';
import type { RecordedEvent } from '../src/store/types';
import { CLOCK_EVENTS } from './clock-events';

/**
 * One read model for the operations view and the discrepancies, because both come from the same matching
 * of a payment's observations (src/reconciliation/matching.ts): the discrepancies are judged on the
 * operations as matched, and sharing one projection keeps them from ever disagreeing. The wing it adapts
 * lives in src/reconciliation/ (docs/architecture.md).
 *
 * Determinism: the projection never reads the wall clock. Its clock is the latest time carried by the
 * events so far (observedAt, receivedAt, completedAt, requestedAt, detectedAt, failedAt). At the end of every
 * append (consecutive events sharing `appendId`; the runner never splits one between batches) the
 * payments it concerns, and every payment whose grace period or re-send grace has run out by the new clock,
 * are judged again (src/reconciliation/judge.ts), so the rows are the same whatever the batch sizes.
 *
 * A batch is planned from its events, loaded in a few queries (only the payments it may touch), replayed in
 * memory through the event handlers, and what changed is written back with COPY.
 */

/** The last event of its append in this batch (the runner never splits an append between batches). */
const endsAppend = (events: readonly RecordedEvent[], i: number): boolean => {
  const next = events[i + 1];
  return next === undefined || next.appendId !== events[i]!.appendId;
};

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const plan = emptyPlan();
  for (const e of events) planning.evolve(plan, e);
  const batch = await loadBatch(tx, ctx, events, plan);
  for (const [i, e] of events.entries()) {
    advanceClock(batch, e);
    evolving.evolve(batch, e);
    if (endsAppend(events, i)) judgeAppend(batch, e.id);
  }
  await writeBatch(tx, ctx.schema, batch);
}

// 7: amount_in_doubt on every discrepancy row; an acceptance can be revoked (DiscrepancyAcceptanceRevoked)
export const projection: Projection = {
  name: 'reconciliation',
  version: 7,
  retryByReplay: true,
  // what its handlers plan and evolve, and what moves its clock (a due payment is judged at that append)
  handles: eventTypes(planning.canHandle, evolving.canHandle, CLOCK_EVENTS),
  setup: (tx, ctx) => createTables(tx, ctx.schema),
  apply,
  views: (ctx) => publishedViews(ctx.schema),
};
