import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import { evolving, planning } from '../src/reconciliation/reconciliation-events';
import { createTables, publishedViews } from '../src/reconciliation/tables';
import { applyWhole, applyWindows, partsOf } from '../src/reconciliation/window-chunks';
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
 * memory through the event handlers, and what changed is written back with COPY. An append of completed sync
 * windows alone is applied as a part of its own, its payments judged a chunk at a time
 * (src/reconciliation/window-chunks.ts), so a month's window never holds the month's payments in memory.
 */

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  // an append of completed windows alone is judged in chunks of payments (window-chunks.ts)
  for (const part of partsOf(events))
    await (part.windows ? applyWindows(tx, part.events, ctx) : applyWhole(tx, part.events, ctx));
}

// 7: amount_in_doubt on every discrepancy row; an acceptance can be revoked (DiscrepancyAcceptanceRevoked)
// 8: a split wait kept only where its report's end can change a row (judge.ts `splitMayChange`): a build made
//    before holds waits this one never records, so it is made again rather than continued
// 9: amount_in_doubt_now on every discrepancy row: an accepted one follows what is in doubt now (lifecycle.ts)
// 10: discrepancies indexed in the exceptions list's order (discrepancies/table.ts), a page reads its rows
// 11: amount_in_doubt and amount_in_doubt_now are numeric, as every leg's (a settlement day's can pass int8)
// 12: past_resolutions on every discrepancy row: a cut between a resolution and the finding again reads it resolved
// 13: past_resolved_at on every discrepancy row: a past day's report reads it resolved between a resolution and the finding again
// 14: past_accepted_at on every discrepancy row: a past day's report reads it accepted between an acceptance and its revocation
export const projection: Projection = {
  name: 'reconciliation',
  version: 14,
  retryByReplay: true,
  // what its handlers plan and evolve, and what moves its clock (a due payment is judged at that append)
  handles: eventTypes(planning.canHandle, evolving.canHandle, CLOCK_EVENTS),
  setup: (tx, ctx) => createTables(tx, ctx.schema),
  apply,
  views: (ctx) => publishedViews(ctx.schema),
};
