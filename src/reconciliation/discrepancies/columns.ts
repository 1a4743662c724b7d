import type { Cell } from '../../projector/copy-rows';

/**
 * The columns of a discrepancy, spelled once: every leg's table (recon.discrepancies,
 * recon.order_discrepancies, recon.settlement_discrepancies, recon.payout_discrepancies) has them, in this
 * order, so every reader can read the four views as one (discrepancy-queries.ts `allDiscrepancies`).
 */
export const DISCREPANCY_COLUMNS = [
  ['id', 'uuid'],
  ['type', 'text'],
  ['status', 'text'],
  ['pos_id', 'text'],
  ['payment_id', 'text'],
  ['order_id', 'text'],
  ['method', 'text'],
  ['operation_key', 'text'],
  ['receiver_name', 'text'],
  ['sub_merchant_id', 'text'],
  ['sub_merchant_ids', 'text[]'],
  ['currency', 'text'],
  ['occurred_at', 'timestamptz'],
  ['values', 'jsonb'],
  ['evidence', 'text[]'],
  ['detected_at', 'timestamptz'],
  ['detected_by_event', 'uuid'],
  ['resolved_at', 'timestamptz'],
  ['resolved_by_event', 'uuid'],
  ['accepted_at', 'timestamptz'],
  ['accepted_by', 'text'],
  ['accepted_note', 'text'],
  ['accepted_by_event', 'uuid'],
  ['updated_at', 'timestamptz'],
  ['updated_by_event', 'uuid'],
  // last, so that a view gains it at its end (create or replace view keeps the columns before it); numeric: a
  // settlement day missing owes the sum of its rows, which can pass int8's 2^63 − 1
  ['amount_in_doubt', 'numeric'],
  // after it, for the same reason
  ['amount_in_doubt_now', 'numeric'],
  // after it, for the same reason
  ['past_resolutions', 'uuid[]'],
  // after it, for the same reason
  ['past_resolved_at', 'timestamptz[]'],
  // after it, for the same reason
  ['past_accepted_at', 'timestamptz[]'],
] as const;

export type DiscrepancyColumn = (typeof DISCREPANCY_COLUMNS)[number][0];

/** The column names, in order. */
export const DISCREPANCY_COLUMN_NAMES: readonly DiscrepancyColumn[] = DISCREPANCY_COLUMNS.map(([name]) => name);

/** `name`, quoted where SQL needs it (`values` is a keyword). */
const quoted = (name: string) => (name === 'values' ? '"values"' : name);

/** The column names as SQL writes them, in order (for COPY and select lists). */
export const DISCREPANCY_SQL_NAMES: readonly string[] = DISCREPANCY_COLUMN_NAMES.map(quoted);

/** The column names as a select list. */
export const DISCREPANCY_SELECT_LIST = DISCREPANCY_SQL_NAMES.join(', ');

/** The column definitions (`name type, …`) of a table of discrepancies. */
export const DISCREPANCY_DEFINITIONS = DISCREPANCY_COLUMNS.map(([name, type]) => `${quoted(name)} ${type}`).join(', ');

export const DISCREPANCY_STATUSES = ['open', 'resolved', 'accepted'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];

/**
 * One discrepancy, a row of a discrepancies view as auditors read it (JSON, CSV and the HTTP API share this
 * shape); the legs' tables keep the update columns besides (DiscrepancyRow).
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
  /**
   * An accepted discrepancy whose amount in doubt differs now from the amount accepted: both, minor units as
   * decimal strings (null: none); absent otherwise (discrepancy-queries.ts `toRecord`), so what differs says it.
   */
  since_accepted?: SinceAccepted;
}

/** The amount in doubt when accepted (frozen) and as the rule finds it now. */
export interface SinceAccepted {
  readonly amount_in_doubt: string | null;
  readonly amount_in_doubt_now: string | null;
}

/** An accepted row's amounts in doubt, when what is in doubt now is not what was accepted; else undefined. */
export function sinceAccepted(r: Record<string, unknown>): SinceAccepted | undefined {
  if (r.status !== 'accepted' || r.amount_in_doubt_now === undefined) return undefined;
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const [then, now] = [text(r.amount_in_doubt), text(r.amount_in_doubt_now)];
  return then === now ? undefined : { amount_in_doubt: then, amount_in_doubt_now: now };
}

/** A discrepancy row as a leg's table keeps it: the auditors' record, its status typed, and the update columns. */
export interface DiscrepancyRow extends DiscrepancyRecord {
  status: DiscrepancyStatus;
  updated_at: string | null;
  updated_by_event: string;
  /** amounts.ts `amountInDoubt` of its type and values (minor units), so readers filter and sort on it in SQL */
  amount_in_doubt: bigint | null;
  /**
   * what the leg's rule puts in doubt at its latest judgement (minor units): amount_in_doubt's while the row is
   * not accepted; once an acceptance freezes that, the rule's latest finding, null when it no longer finds it.
   * The statements hold what it is above the amount accepted (src/export/payouts/holds.ts `excessClaimOf`).
   */
  amount_in_doubt_now: bigint | null;
  /**
   * each time it was resolved and the rule found it again since, the two events, oldest first ([resolved, found
   * again, …]): a cut between them read it as resolved (src/export/payouts/holds.ts `standingAt`), and the row
   * keeps only its latest resolution
   */
  past_resolutions: string[];
  /**
   * the times of those events, in the same order ([resolved at, found again at, …]; an element null where the
   * projection had no clock yet): a past day's report reads it resolved between them (src/export/nightly/open.ts)
   */
  past_resolved_at: (string | null)[];
  /**
   * each acceptance taken back since, when it was accepted and when revoked, oldest first ([accepted at, revoked
   * at, …]): a past day's report reads it accepted between them (src/export/nightly/open.ts)
   */
  past_accepted_at: (string | null)[];
}

/** A row's cells in the order of DISCREPANCY_COLUMNS, for the bulk writer. */
export function discrepancyCells(r: DiscrepancyRow): Cell[] {
  return DISCREPANCY_COLUMN_NAMES.map((c) => r[c]);
}

const isoOf = (v: unknown): string | null =>
  v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();

const bigintOrNull = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(String(v)));

/** A row read back from a leg's table (other columns of the table, such as the orders' order_key, left out). */
export function discrepancyFromRow(r: Record<string, unknown>): DiscrepancyRow {
  const row = Object.fromEntries(DISCREPANCY_COLUMN_NAMES.map((c) => [c, r[c]])) as unknown as DiscrepancyRow;
  return {
    ...row,
    id: String(r.id),
    occurred_at: isoOf(r.occurred_at),
    detected_at: isoOf(r.detected_at),
    resolved_at: isoOf(r.resolved_at),
    accepted_at: isoOf(r.accepted_at),
    updated_at: isoOf(r.updated_at),
    detected_by_event: String(r.detected_by_event),
    resolved_by_event: r.resolved_by_event === null ? null : String(r.resolved_by_event),
    accepted_by_event: r.accepted_by_event === null ? null : String(r.accepted_by_event),
    updated_by_event: String(r.updated_by_event),
    sub_merchant_ids: (r.sub_merchant_ids as string[] | null) ?? [],
    evidence: (r.evidence as string[] | null) ?? [],
    values: (r.values as Record<string, unknown>) ?? {},
    amount_in_doubt: bigintOrNull(r.amount_in_doubt),
    amount_in_doubt_now: bigintOrNull(r.amount_in_doubt_now),
    past_resolutions: ((r.past_resolutions as string[] | null) ?? []).map(String),
    past_resolved_at: ((r.past_resolved_at as unknown[] | null) ?? []).map(isoOf),
    past_accepted_at: ((r.past_accepted_at as unknown[] | null) ?? []).map(isoOf),
  };
}
