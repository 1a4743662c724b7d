import type { Sql } from '../db/connect';
import { isSqlState } from '../db/errors';
import { loadPayoutInputs } from '../reconciliation/payouts/inputs';
import { matchPayouts } from '../reconciliation/payouts/match';
import type { Position } from '../store/types';

/**
 * What was paid out to each sub-merchant as of a statement's cut: the payout matching (src/reconciliation/
 * payouts/match.ts) run again on the payouts projection's inputs written at or before the cut, so a statement
 * regenerated at the same position states the same payments. A debit that pays a statement counts positive, a
 * return of one negative, on its booking day.
 */

export interface PaidLine {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly reference: string;
  /** booking day (YYYY-MM-DD) */
  readonly bookingDate: string;
  /** minor units: + paid, − returned */
  readonly amount: bigint;
}

const VIEWS = { expected: 'recon.payout_expected', lines: 'recon.payout_lines', payees: 'recon.payout_payees' };

/** Paid lines at the cut, by booking day and reference; null when the payouts projection was never built. */
export async function paidOutAt(sql: Sql, cut: Position, windowDays: number): Promise<PaidLine[] | null> {
  let inputs: Awaited<ReturnType<typeof loadPayoutInputs>>;
  try {
    inputs = await loadPayoutInputs(sql, VIEWS, cut);
  } catch (e) {
    if (isSqlState(e, 'undefinedTable') || (e as { code?: string }).code === '3F000') return null;
    throw e;
  }
  const byRef = new Map(inputs.expected.map((p) => [p.reference, p]));
  const lineById = new Map(inputs.lines.map((l) => [l.id, l]));
  const out: PaidLine[] = [];
  for (const m of matchPayouts(inputs.expected, inputs.lines, { windowDays }).lines) {
    if ((m.role !== 'paid' && m.role !== 'returned') || m.reference === null) continue;
    const p = byRef.get(m.reference)!;
    const l = lineById.get(m.lineId)!;
    out.push({
      subMerchantId: p.subMerchantId,
      currency: p.currency,
      reference: p.reference,
      bookingDate: l.bookingDate,
      amount: m.role === 'paid' ? l.amount : -l.amount,
    });
  }
  return out.sort((a, b) =>
    a.bookingDate < b.bookingDate ? -1 : a.bookingDate > b.bookingDate ? 1 : a.reference < b.reference ? -1 : 1,
  );
}

/** Sum of the paid lines of a sub-merchant and currency booked in [from, to) (days, either open). */
export function paidBetween(
  lines: readonly PaidLine[],
  subMerchantId: string,
  currency: string,
  from: string | null,
  to: string | null,
): bigint {
  let sum = 0n;
  for (const l of lines) {
    if (l.subMerchantId !== subMerchantId || l.currency !== currency) continue;
    if ((from === null || l.bookingDate >= from) && (to === null || l.bookingDate < to)) sum += l.amount;
  }
  return sum;
}
