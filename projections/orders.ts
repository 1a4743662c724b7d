import { ident } from '../src/db/identifier';
import { loadOrderBatch } from '../src/intent/order-groups';
import { replayOrders } from '../src/intent/order-judging';
import { createOrderTables, orderViews, writeOrderBatch } from '../src/intent/order-tables';
import { DiscrepancyAccepted } from '../src/events/audit-events';
import { PeriodRecordObserved, RegisterRecordObserved, WebhookReceived } from '../src/events/ingest-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import { FeeScheduleLineSet, OrderAmended, OrderCancelled, OrderPlaced } from '../src/events/order-events';
import { eventTypes } from '../src/projection/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projection/projection';
import { observationOf } from '../src/reconciliation/observations';
import type { RecordedEvent } from '../src/store/types';
import { CLOCK_EVENTS } from './clock-events';

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
  // the PSP's observations (src/reconciliation/observations.ts), the orders and the fee contract, the
  // directory, acceptances, and what moves its clock
  handles: eventTypes(
    [RegisterRecordObserved, PeriodRecordObserved, WebhookReceived],
    [OrderPlaced, OrderAmended, OrderCancelled, FeeScheduleLineSet, SubMerchantRegistered, DiscrepancyAccepted],
    CLOCK_EVENTS,
  ),
  setup: (tx, ctx) => createOrderTables(tx, ctx.schema),
  apply,
  views: (ctx) => orderViews(ctx.schema),
};
