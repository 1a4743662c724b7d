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

export const DISCREPANCY_STATUSES = ['open', 'resolved', 'accepted'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];

/**
 * One discrepancy, a row of recon.discrepancies: as the reconciliation projection writes it (with its
 * own bookkeeping columns besides) and as auditors read it (JSON, CSV and the HTTP API share this shape).
 */
export interface DiscrepancyRecord {
  id: string;
  type: string;
  status: string;
  /** null where no POS is concerned (an order the PSP never saw) */
  pos_id: string | null;
  order_id: string | null;
  payment_id: string | null;
  method: string | null;
  operation_key: string;
  receiver_name: string | null;
  sub_merchant_id: string | null;
  sub_merchant_ids: string[];
  currency: string | null;
  values: Record<string, unknown>;
  evidence: string[];
  occurred_at: string | null;
  detected_at: string | null;
  detected_by_event: string;
  resolved_at: string | null;
  resolved_by_event: string | null;
  accepted_at: string | null;
  accepted_by: string | null;
  accepted_note: string | null;
  accepted_by_event: string | null;
}
