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
  // the cash leg (src/reconciliation/settlement/): what the PSP owes against what reached the bank
  'settlement_missing',
  'settlement_short',
  'settlement_late',
  'settlement_unexpected',
] as const;
export type DiscrepancyType = (typeof DISCREPANCY_TYPES)[number];

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
  pos_id: string;
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
