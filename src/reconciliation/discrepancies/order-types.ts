import { type DiscrepancyTypeOf, entryOf, typesOfLeg } from './registry';

/**
 * The discrepancies between the marketplace's intent (its orders and the fee contract) and the PSP
 * (issue 17), published in recon.order_discrepancies with the columns of recon.discrepancies.
 * Derived from the registry of types (src/reconciliation/discrepancies/registry.ts), its leg `orders`.
 */
export const ORDER_DISCREPANCY_TYPES = typesOfLeg('orders');
export type OrderDiscrepancyType = DiscrepancyTypeOf<'orders'>;

/**
 * The types that put money in doubt, so that an open one holds the money it concerns like any other
 * discrepancy: money received for no order (or twice for one), a total or a part that is not what was
 * ordered; a fee that is not the contract's holds the difference at most. An order the PSP never saw moved
 * no money: nothing to hold. The registry's hold rules (test/payouts/holds-policy.test.ts checks the two agree).
 */
export const ORDER_HOLD_TYPES: ReadonlySet<OrderDiscrepancyType> = new Set(
  ORDER_DISCREPANCY_TYPES.filter((t) => entryOf(t).hold.rule !== 'none'),
);
