import { dataOf, isEvent } from '../events/catalog';
import { SyncWindowCompleted } from '../events/ingest-events';
import type { ProjectionContext, Tx } from '../projector/projection';
import type { RecordedEvent } from '../store/types';
import { appendsOf, endsAppend } from './appends';
import { addWindow, advanceClock, type Batch } from './batch';
import { eventTime } from './event-clock';
import { judgeAppend, judgeWindowPayments } from './judge';
import { loadBatch, wantMore } from './load-batch';
import { emptyPlan, evolving, planning, want, windowOf } from './reconciliation-events';
import { writeBatch } from './write-batch';

/**
 * A completed sync window judges, at the end of its append, every payment of its pos with an operation in the
 * window or waiting for its report: with a month's window, every payment of the month at once. Loaded in one
 * batch, that held the month's payments in memory together (issue 26: 10,567 payments and about 230 MB of heap
 * at 10,000 payments a month, growing with the month). An append of completed windows alone names no payment
 * of its own, and each payment's judgement reads only the payment, the clock, the windows, the directory and
 * its own discrepancies' acceptances, so its payments are judged `windowChunk.size` at a time, each chunk loaded,
 * judged and written in the batch's transaction, and dropped: the same rows as in one piece.
 */

/** Payments judged together at a window's completion: the most held in memory at once (tests make it smaller). */
export const windowChunk = { size: 1000 };

const windowsOnly = (append: readonly RecordedEvent[]) => append.every((e) => isEvent(SyncWindowCompleted, e));

/**
 * The batch cut into parts applied one after the other: each append of completed windows alone, and the runs of
 * appends between them (the rows are the same whatever the batches: reconciliation.ts). A batch without
 * such an append is one part.
 */
export function partsOf(events: readonly RecordedEvent[]): { events: RecordedEvent[]; windows: boolean }[] {
  if (!events.some((e) => isEvent(SyncWindowCompleted, e))) return [{ events: [...events], windows: false }];
  const parts: { events: RecordedEvent[]; windows: boolean }[] = [];
  for (const append of appendsOf(events)) {
    const last = parts[parts.length - 1];
    if (windowsOnly(append)) parts.push({ events: append, windows: true });
    else if (last && !last.windows) last.events.push(...append);
    else parts.push({ events: append, windows: false });
  }
  return parts;
}

/** Loads, replays and writes back one batch of events (all in one piece). */
export async function applyWhole(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
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

/** The payments an append of completed windows judges (as loadBatch would load them), in loadBatch's order. */
async function windowPayments(
  tx: Tx,
  ctx: ProjectionContext,
  append: readonly RecordedEvent[],
): Promise<Array<readonly [string, string]>> {
  const [st] = await tx<{ clock: Date | null }[]>`select clock from ${tx(ctx.schema)}.state where id = 1`;
  let maxClock = st?.clock ? st.clock.getTime() : null;
  for (const e of append) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
  }
  const plan = emptyPlan();
  for (const e of append) planning.evolve(plan, e);
  await wantMore(tx, ctx.schema, plan, maxClock);
  return [...plan.wanted.values()];
}

/**
 * A later chunk: the append's windows were written by the first chunk, so they are loaded; they are taken out
 * and added again in the append's order, as the first chunk's replay added them (a payment's findings name the
 * first window that covers an operation), and each window's payments in this chunk are marked to be judged.
 */
function replayWindows(b: Batch, append: readonly RecordedEvent[]): void {
  const ids = new Set(append.map((e) => e.id));
  for (const [pos, list] of b.windows)
    b.windows.set(
      pos,
      list.filter((w) => !ids.has(w.eventId)),
    );
  for (const e of append) {
    advanceClock(b, e);
    const w = windowOf(dataOf(SyncWindowCompleted, e), e.id);
    addWindow(b, w);
    judgeWindowPayments(b, w, e.id);
  }
}

/**
 * Applies an append of completed windows `chunk` payments at a time. The first chunk is the append replayed
 * as a whole batch would replay it, with only its payments loaded (it records the windows and judges the
 * report-level discrepancies); each later chunk loads its payments, marks those its windows judge, and
 * judges them at the append's end.
 */
export async function applyWindows(
  tx: Tx,
  append: readonly RecordedEvent[],
  ctx: ProjectionContext,
  chunk = windowChunk.size,
): Promise<void> {
  const keys = await windowPayments(tx, ctx, append);
  if (keys.length <= chunk) return applyWhole(tx, append, ctx);
  const lastId = append[append.length - 1]!.id;
  for (let from = 0; from < keys.length; from += chunk) {
    const plan = emptyPlan();
    if (from === 0) for (const e of append) planning.evolve(plan, e);
    for (const [posId, paymentId] of keys.slice(from, from + chunk)) want(plan, posId, paymentId);
    const b = await loadBatch(tx, ctx, append, plan, { more: false });
    if (from === 0)
      for (const e of append) {
        advanceClock(b, e);
        evolving.evolve(b, e);
      }
    else replayWindows(b, append);
    judgeAppend(b, lastId);
    await writeBatch(tx, ctx.schema, b);
  }
}
