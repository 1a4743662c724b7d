import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import { cutDay, payoutStatusesAt } from '../export/payouts/paid-out';
import type { EventStore } from '../store/types';
import type { BankPaid } from './plan';

/**
 * What the bank's debits have paid on each expected payout reference, less what came back, as the payouts leg
 * reads it at the store's head (its read model caught up by the caller): a run is not drafted for money the bank
 * already paid, whether by a run cancelled after its file was executed or by a transfer made by hand. A
 * reference paid again once paid in full counts with what it was paid again. `returned`: what came back on each
 * reference, which a run that paid it no longer holds (plan.ts). Empty while the payouts leg has no build yet
 * (nothing booked is known).
 */
export async function paidByBankOf(
  sql: Sql,
  store: EventStore,
  payouts: BankConfig['payouts'],
  timezone: string,
): Promise<BankPaid> {
  const paid = new Map<string, bigint>();
  const returned = new Map<string, bigint>();
  const head = await store.headPosition();
  if (!head) return Object.assign(paid, { returned });
  const lines = await payoutStatusesAt(sql, head, payouts, await cutDay(store, head, timezone));
  for (const l of lines ?? []) {
    const amount = l.paidOut + l.duplicated;
    if (amount > 0n) paid.set(l.reference, amount);
    if (l.returned > 0n) returned.set(l.reference, l.returned);
  }
  return Object.assign(paid, { returned });
}

/**
 * Whether the bank's statements imported (read model caught up by the caller) cover a run's execution date on
 * every account it pays from: then a draft sees whatever the bank executed of the run's file, and cancelling the
 * run cannot lead to asking the same money twice. False while no statement of the bank was imported.
 */
export async function bankStatementsCover(
  sql: Sql,
  run: {
    readonly executionDate: string | null;
    readonly debtors: ReadonlyArray<{ account: string; currency: string }>;
  },
): Promise<boolean> {
  if (run.executionDate === null || run.debtors.length === 0) return false;
  const [exists] = await sql<{ v: string | null }[]>`select to_regclass('recon.bank_statements')::text as v`;
  if (!exists?.v) return false;
  for (const d of run.debtors) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from recon.bank_statements
      where account_id = ${d.account} and currency = ${d.currency} and closing_date >= ${run.executionDate}`;
    if (!row || row.n === 0) return false;
  }
  return true;
}
