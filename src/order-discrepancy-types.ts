/**
 * The discrepancies between the marketplace's intent (its orders and the fee contract) and the PSP
 * (issue 17), published in recon.order_discrepancies with the columns of recon.discrepancies.
 * A leaf module: the rules, the queries, holds and the sandbox's ground truth share these names.
 */
export const ORDER_DISCREPANCY_TYPES = [
  'order_not_at_psp',
  'payment_without_order',
  'amount_differs_from_order',
  'split_differs_from_order',
  'fee_above_contract',
  'fee_below_contract',
] as const;
export type OrderDiscrepancyType = (typeof ORDER_DISCREPANCY_TYPES)[number];

/**
 * The types that put money in doubt, so that an open one holds the money it concerns like any other
 * discrepancy: money received for no order (or twice for one), a total or a part that is not what was
 * ordered; a fee that is not the contract's holds the difference at most. An order the PSP never saw moved
 * no money: nothing to hold. The amounts: src/config/hold-policy.ts (test/payouts/holds-policy.test.ts
 * checks the two agree).
 */
export const ORDER_HOLD_TYPES: ReadonlySet<OrderDiscrepancyType> = new Set([
  'payment_without_order',
  'amount_differs_from_order',
  'split_differs_from_order',
  'fee_above_contract',
  'fee_below_contract',
]);
