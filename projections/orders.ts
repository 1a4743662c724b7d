import { applyOrderEvents } from '../src/reconciliation/orders/chunks';
import { createOrderTables, orderViews } from '../src/reconciliation/orders/tables';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../src/events/audit-events';
import { PeriodRecordObserved, RegisterRecordObserved, WebhookReceived } from '../src/events/ingest-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import { FeeScheduleLineSet, OrderAmended, OrderCancelled, OrderPlaced } from '../src/events/order-events';
import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import type { RecordedEvent } from '../src/store/types';
import { CLOCK_EVENTS } from './clock-events';

/**
 * The marketplace's intent against the PSP (issue 17): orders, their matches with PSP payments, and the
 * discrepancies between them and with the fee contract. The rules are in src/reconciliation/orders/rules.ts; the
 * state per order id (src/reconciliation/orders/groups.ts) and its replay and lifecycle (src/reconciliation/orders/judging.ts)
 * beside them. As in the reconciliation projection, the clock is the latest time the PSP's events carry, and
 * the rows are the same whatever the batch sizes.
 */

/**
 * A batch is loaded (only the groups its events may touch), replayed and written back; an append that judges
 * every order with a payment (a contract line, a directory entry, the first order) is a part of its own, its
 * paid orders judged a chunk at a time (src/reconciliation/orders/chunks.ts).
 */
const apply = (tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> =>
  applyOrderEvents(tx, events, ctx);

// 3: amount_in_doubt on every discrepancy row; an acceptance can be revoked (DiscrepancyAcceptanceRevoked)
// 4: amount_in_doubt_now on every discrepancy row: an accepted one follows what is in doubt now (lifecycle.ts)
// 5: a contract's fee rounded to the currency's smallest unit (a whole yen), not to a hundredth of it
// 7: that unit from ISO 4217 (src/money.ts), not from ICU: a HUF fee was rounded to a whole forint
// 8: the placement is an order's first version whatever its time: an amendment timed before it was never in force
// 9: discrepancies indexed in the exceptions list's order (discrepancies/table.ts), a page reads its rows
// 10: amount_in_doubt and amount_in_doubt_now are numeric, as every leg's (a settlement day's can pass int8)
// 11: past_resolutions on every discrepancy row: a cut between a resolution and the finding again reads it resolved
// 12: past_resolved_at on every discrepancy row: a past day's report reads it resolved between a resolution and the finding again
// 13: past_accepted_at on every discrepancy row: a past day's report reads it accepted between an acceptance and its revocation
export const projection: Projection = {
  name: 'orders',
  version: 13,
  retryByReplay: true,
  // the PSP's observations (src/reconciliation/observations.ts), the orders and the fee contract, the
  // directory, acceptances, and what moves its clock
  handles: eventTypes(
    [RegisterRecordObserved, PeriodRecordObserved, WebhookReceived],
    [OrderPlaced, OrderAmended, OrderCancelled, FeeScheduleLineSet, SubMerchantRegistered, DiscrepancyAccepted],
    [DiscrepancyAcceptanceRevoked],
    CLOCK_EVENTS,
  ),
  setup: (tx, ctx) => createOrderTables(tx, ctx.schema),
  apply,
  views: (ctx) => orderViews(ctx.schema),
};
