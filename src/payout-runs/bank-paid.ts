import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import { cutDay, payoutsJudgedAt } from '../export/payouts/paid-out';
import type { EventStore } from '../store/types';
import type { BankPaid } from './plan';

/**
 * What the bank's debits have paid on each expected payout reference, less what came back, as the payouts leg
 * reads it at the store's head (its read model caught up by the caller): a run is not drafted for money the bank
 * already paid, whether by a run cancelled after its file was executed or by a transfer made by hand. A
 * reference paid again once paid in full counts with what it was paid again. `returned`: what came back on each
 * reference, which a run that paid it no longer holds (plan.ts). Empty while the payouts leg has no build yet
 * (nothing booked is known). `due`: how far the bank's statements reach and each reference's due day, for what a sent run left unpaid
 * past its due window (actions.ts releaseUnpaid).
 */
export async function paidByBankOf(
  sql: Sql,
  store: EventStore,
  payouts: BankConfig['payouts'],
  timezone: string,
): Promise<BankPaid> {
  const paid = new Map<string, bigint>();
  const returned = new Map<string, bigint>();
  const dueOn = new Map<string, string>();
  const head = await store.headPosition();
  if (!head) return Object.assign(paid, { returned });
  const judged = await payoutsJudgedAt(sql, head, payouts, await cutDay(store, head, timezone));
  for (const l of judged?.lines ?? []) {
    const amount = l.paidOut + l.duplicated;
    if (amount > 0n) paid.set(l.reference, amount);
    if (l.returned > 0n) returned.set(l.reference, l.returned);
    dueOn.set(l.reference, l.dueOn);
  }
  const due = { bookedThrough: judged?.bookedThrough ?? new Map<string, string>(), dueDays: payouts.dueDays, dueOn };
  return Object.assign(paid, { returned, due });
}

/**
 * Whether the bank's debits (imported, less what came back) paid every line of a run in full: then a draft of its
 * month asks none of it again, whatever happens to the run's file. A statement covering the execution date is no
 * such proof: a statement may be missing before it, and a file uploaded late is executed after it.
 */
export function bankPaidEveryLine(
  run: { readonly lines: ReadonlyArray<{ reference: string; amount: string }> },
  paidByBank: ReadonlyMap<string, bigint>,
): boolean {
  return run.lines.length > 0 && run.lines.every((l) => (paidByBank.get(l.reference) ?? 0n) >= BigInt(l.amount));
}
