import { ident } from '../src/db/identifier';
import { loadOrderBatch } from '../src/intent/order-groups';
import { replayOrders } from '../src/intent/order-judging';
import { createOrderTables, orderViews, writeOrderBatch } from '../src/intent/order-tables';
import type { Projection, ProjectionContext, Tx } from '../src/projection/projection';
import { observationOf } from '../src/reconciliation/observations';
import type { RecordedEvent } from '../src/store/types';

/**
 * The marketplace's intent against the PSP (issue 17): orders, their matches with PSP payments, and the
 * discrepancies between them and with the fee contract. The rules are in src/intent/order-rules.ts; the
 * state per order id (src/intent/order-groups.ts) and its replay and lifecycle (src/intent/order-judging.ts)
 * beside them. As in the reconciliation projection, the clock is the latest time the PSP's events carry, and
 * the rows are the same whatever the batch sizes.
 */

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const s = ident(ctx.schema);
  const observed = events.map(observationOf);
  const batch = await loadOrderBatch(tx, s, ctx, events, observed);
  replayOrders(batch, events, observed);
  await writeOrderBatch(tx, s, batch);
}

export const projection: Projection = {
  name: 'orders',
  version: 2,
  retryByReplay: true,
  setup: (tx, ctx) => createOrderTables(tx, ctx.schema),
  apply,
  views: (ctx) => orderViews(ctx.schema),
};
