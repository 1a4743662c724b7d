import { bankConfigFromEnv } from '../config/bank-from-env';
import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import type { Logger } from '../log';
import type { EventStore, Position } from '../store/types';
import { type HeldItem, heldAt } from './holds';
import { cutDay, type PaidLine, type PayoutStatusLine, paidBetween, paidOutAt, payoutStatusesAt } from './paid-out';
import { closingKey } from './previous-statements';
import { monthRange } from './statement-workbooks';

/**
 * The readings a statement takes beside the ledger: what was paid out and what the bank did with each payout
 * asked for (payouts projection), and what is held (reconciliation's discrepancies), all at the cut. A read model that was never built gives nothing and
 * is logged: `recon statements` runs after `recon project`, which builds them all.
 */
export async function payoutFigures(
  deps: { sql: Sql; store: EventStore; log: Logger; bank?: BankConfig; timezone?: string },
  cut: Position,
): Promise<{ lines: PaidLine[]; held: HeldItem[]; statuses: PayoutStatusLine[] }> {
  const bank = deps.bank ?? bankConfigFromEnv();
  const lines = await paidOutAt(deps.sql, cut, bank.payouts.matchWindowDays);
  if (lines === null) deps.log.warn('statements: the payouts projection is not built; no payout is deducted');
  const held = await heldAt(deps.sql, deps.store, cut);
  if (held === null) deps.log.warn('statements: the reconciliation is not built; no money is held');
  // what the bank did with every payout asked for so far, at the same cut (the Payouts index and each statement)
  const day = deps.timezone ? await cutDay(deps.store, cut, deps.timezone) : null;
  const statuses = lines === null ? [] : ((await payoutStatusesAt(deps.sql, cut, bank.payouts, day)) ?? []);
  return { lines: lines ?? [], held: held ?? [], statuses };
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
