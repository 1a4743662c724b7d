import { isEvent } from '../../events/catalog';
import { SubMerchantRegistered } from '../../events/ledger-events';
import { FeeScheduleLineSet, OrderPlaced } from '../../events/order-events';
import type { ProjectionContext, Tx } from '../../projector/projection';
import type { RecordedEvent } from '../../store/types';
import { appendsOf } from '../appends';
import { observationOf } from '../observations';
import { type DueCursor, dueGroupsAfter, loadGroupChunk, loadOrderBatch, paidGroupsAfter } from './groups';
import { judgeComeDue, judgePaidAgain, replayOrders } from './judging';
import { writeOrderBatch } from './tables';

/**
 * A fee contract line, a directory entry or the first order recorded judges every order with a payment again, at
 * the end of its append (judging.ts `touchPaid`). Loaded in one batch, that is every paid order of the store
 * at once, its payments' observations included: memory in proportion to the whole history (issue 26). Such an
 * append is therefore a part of its own: its own groups are replayed as a batch would replay them, and the
 * other paid groups are then loaded, judged as that append's end judged them (same clock, directory, contract,
 * event ids) and written `groupChunk.size` at a time, each dropped before the next: the same rows as in one piece
 * (test/orders/contract-after-payments.test.ts).
 */

/**
 * Groups judged together: those with a payment after such an append, and those come due in a batch its events
 * do not touch, when more than this many come due in it (tests make it smaller).
 */
export const groupChunk = { size: 1000 };

/** The batch cut into parts applied one after the other: each append that judges the paid groups, and the runs between. */
async function partsOf(
  tx: Tx,
  s: string,
  events: readonly RecordedEvent[],
): Promise<{ events: RecordedEvent[]; paid: boolean }[]> {
  const directory = (e: RecordedEvent) => isEvent(SubMerchantRegistered, e) || isEvent(FeeScheduleLineSet, e);
  const placed = (e: RecordedEvent) => isEvent(OrderPlaced, e);
  if (!events.some((e) => directory(e) || placed(e))) return [{ events: [...events], paid: false }];
  let ordersKnown = false;
  if (events.some(placed)) {
    const [st] = await tx<{ orders_since: Date | null }[]>`select orders_since from ${tx(s)}.state where id = 1`;
    ordersKnown = Boolean(st?.orders_since);
  }
  const parts: { events: RecordedEvent[]; paid: boolean }[] = [];
  for (const append of appendsOf(events)) {
    const paid = append.some((e) => directory(e) || (!ordersKnown && placed(e)));
    if (append.some(placed)) ordersKnown = true;
    const last = parts[parts.length - 1];
    if (!paid && last && !last.paid) last.events.push(...append);
    else parts.push({ events: append, paid });
  }
  return parts;
}

/**
 * Loads, replays and writes back events in one piece (`paid: false`: without the groups with a payment, which
 * the caller judges in chunks). When more groups come due in it than a chunk holds (the first PSP event after
 * a month's orders brings every unpaid order due at once), those its events do not touch are judged after it,
 * a chunk at a time, as its appends' ends would have judged them.
 */
async function applyPiece(
  tx: Tx,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  opts: { paid?: boolean; chunk: number },
) {
  const observed = events.map(observationOf);
  const { batch, dueLater } = await loadOrderBatch(tx, ctx.schema, ctx, events, observed, {
    paid: opts.paid,
    dueLimit: opts.chunk,
  });
  const trail = replayOrders(batch, events, observed);
  await writeOrderBatch(tx, ctx.schema, batch);
  if (dueLater !== null) {
    const done = new Set(batch.groups.keys());
    const page = { clock: dueLater, after: null as DueCursor | null, limit: opts.chunk, unpaid: opts.paid === false };
    for (let next = await dueGroupsAfter(tx, ctx.schema, page); next.last !== null; ) {
      page.after = next.last;
      const untouched = next.keys.filter((k) => !done.has(k));
      if (untouched.length) {
        const b = await loadGroupChunk(tx, ctx.schema, ctx, untouched);
        judgeComeDue(b, trail);
        await writeOrderBatch(tx, ctx.schema, b);
      }
      next = await dueGroupsAfter(tx, ctx.schema, page);
    }
  }
  return batch;
}

/**
 * An append that judges every paid group: its own groups (its events', the due and the accepted ones) in one
 * piece, then the other paid groups a chunk at a time, in key order.
 */
async function applyPaidAppend(tx: Tx, append: readonly RecordedEvent[], ctx: ProjectionContext, chunk: number) {
  const first = await paidGroupsAfter(tx, ctx.schema, null, chunk + 1);
  if (first.length <= chunk) return applyPiece(tx, append, ctx, { chunk });
  const own = await applyPiece(tx, append, ctx, { paid: false, chunk });
  const paidBy = own.paidJudgedBy;
  if (paidBy === null) throw new Error('an append that judges the paid orders judged none (orders chunks)');
  const done = new Set(own.groups.keys());
  const lastId = append[append.length - 1]!.id;
  for (let after: string | null = null; ; ) {
    const page = await paidGroupsAfter(tx, ctx.schema, after, chunk);
    if (page.length === 0) return;
    after = page[page.length - 1]!;
    const keys = page.filter((k) => !done.has(k));
    if (keys.length === 0) continue;
    const b = await loadGroupChunk(tx, ctx.schema, ctx, keys);
    judgePaidAgain(b, paidBy, lastId);
    await writeOrderBatch(tx, ctx.schema, b);
  }
}

/** The orders read model's batch: its parts in order (an append that judges every paid group in chunks). */
export async function applyOrderEvents(
  tx: Tx,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  chunk = groupChunk.size,
): Promise<void> {
  const parts = await partsOf(tx, ctx.schema, events);
  // few paid orders stored: the batch in one piece, as many round trips fewer as it has such appends
  if (!parts.some((p) => p.paid) || (await paidGroupsAfter(tx, ctx.schema, null, chunk + 1)).length <= chunk) {
    await applyPiece(tx, events, ctx, { chunk });
    return;
  }
  for (const part of parts)
    await (part.paid ? applyPaidAppend(tx, part.events, ctx, chunk) : applyPiece(tx, part.events, ctx, { chunk }));
}
