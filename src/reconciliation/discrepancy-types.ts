/**
 * The names of the discrepancies (issue 5) and of their lifecycle: one vocabulary for the rules that
 * detect them, the queries that filter them, and the sandbox that injects them as ground truth.
 * The names come from the registry (discrepancies/registry.ts), a leaf the sandbox shares.
 */

import {
  DISCREPANCY_TYPES,
  type DiscrepancyType,
  type DiscrepancyTypeOf,
  entryOf,
  typesOfLeg,
} from './discrepancies/registry';

/** Every list below is derived from the registry (src/reconciliation/discrepancies/registry.ts). */
export { DISCREPANCY_TYPES, type DiscrepancyType };

/** What the reconciliation of the PSP's sources finds (projections/reconciliation.ts); the sandbox injects each. */
export const RECONCILIATION_TYPES = typesOfLeg('psp');
export type ReconciliationType = DiscrepancyTypeOf<'psp'>;

/** Payouts to sub-merchants against the bank (projections/payouts.ts, docs/bank.md). */
export const PAYOUT_DISCREPANCY_TYPES = typesOfLeg('payouts');

/** The cash leg (src/reconciliation/settlement/): what the PSP owes against what reached the bank. */
export const SETTLEMENT_DISCREPANCY_TYPES = typesOfLeg('settlement');

/**
 * Discrepancies that put money in doubt under the default hold policy (src/config/hold-policy.ts): the money
 * under one that is open (or accepted with the decision to withhold it) is held on the statements, not paid
 * (src/export/payouts/holds.ts), all of its payment's or only the difference it states.
 */
export const HOLDING_TYPES: readonly DiscrepancyType[] = DISCREPANCY_TYPES.filter(
  (t) => entryOf(t).hold.rule !== 'none',
);

/** The statuses and the record auditors read are the core's (discrepancies/columns.ts). */
export { DISCREPANCY_STATUSES, type DiscrepancyRecord, type DiscrepancyStatus } from './discrepancies/columns';
