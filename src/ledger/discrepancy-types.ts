/**
 * The names of the discrepancies (issue 5) and of their lifecycle: one vocabulary for the rules that
 * detect them, the queries that filter them, and the sandbox that injects them as ground truth.
 * A leaf module, so that the sandbox can share it without depending on recon's ledger code.
 */

export const DISCREPANCY_TYPES = [
  'missing_in_report',
  'missing_in_period',
  'missing_webhook',
  'status_mismatch',
  'amount_mismatch',
  'currency_mismatch',
  'fee_mismatch',
  'split_mismatch',
  'unknown_sub_merchant',
  'duplicate',
  'report_count_mismatch',
] as const;
export type DiscrepancyType = (typeof DISCREPANCY_TYPES)[number];

export const DISCREPANCY_STATUSES = ['open', 'resolved', 'accepted'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];
