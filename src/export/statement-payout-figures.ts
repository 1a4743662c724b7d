import { bankConfigFromEnv } from '../config/bank-from-env';
import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import type { Logger } from '../log';
import type { EventStore, Position } from '../store/types';
import { type HeldItem, heldAt } from './holds';
import { type PaidLine, paidBetween, paidOutAt } from './paid-out';
import { closingKey } from './previous-statements';
import { monthRange } from './statement-workbooks';

/**
 * The two readings a statement takes beside the ledger: what was paid out (payouts projection) and what is
 * held (reconciliation's discrepancies), both at the cut. A read model that was never built gives nothing and
 * is logged: `recon statements` runs after `recon project`, which builds them all.
 */
export async function payoutFigures(
  deps: { sql: Sql; store: EventStore; log: Logger; bank?: BankConfig },
  cut: Position,
  /** the statement's month: a hold is what its payment adds up to the month's end */
  period?: { month: string; timezone: string },
): Promise<{ lines: PaidLine[]; held: HeldItem[] }> {
  const bank = deps.bank ?? bankConfigFromEnv();
  const lines = await paidOutAt(deps.sql, cut, bank.payouts.matchWindowDays);
  if (lines === null) deps.log.warn('statements: the payouts projection is not built; no payout is deducted');
  const periodEnd = period ? monthRange(period.month, period.timezone).to.toJSDate() : undefined;
  const held = await heldAt(deps.sql, deps.store, cut, periodEnd ? { periodEnd } : {});
  if (held === null) deps.log.warn('statements: the reconciliation is not built; no money is held');
  return { lines: lines ?? [], held: held ?? [] };
}

/**
 * The run's closings with what was paid out up to the month's end deducted, under the sub-merchant's first
 * receiver name (sorted): the next month opens at them, and its ledger opening has the same payments deducted
 * (withPaidOut), so a payment is neither an adjustment nor counted twice. Only names the run states.
 */
export async function closingsPaidOut(
  closings: Map<string, bigint>,
  lines: readonly PaidLine[],
  month: string,
  timezone: string,
  namesOf: (subMerchantId: string) => Promise<readonly string[]>,
): Promise<void> {
  const end = monthRange(month, timezone).to.toISODate();
  const seen = new Set<string>();
  for (const l of lines) {
    const k = `${l.subMerchantId}\u0000${l.currency}`;
    if (seen.has(k)) continue;
    seen.add(k);
    const [first] = [...(await namesOf(l.subMerchantId))].sort();
    if (first === undefined) continue;
    const key = closingKey(first, l.currency);
    const closing = closings.get(key);
    if (closing === undefined) continue;
    closings.set(key, closing - paidBetween(lines, l.subMerchantId, l.currency, null, end));
  }
}
