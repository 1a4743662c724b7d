import { normalizeAccountId } from '../config/bank';
import { BankEntryBooked } from '../events/bank-events';
import { dataOf, isEvent } from '../events/catalog';
import type { ProjectionContext, Tx } from '../projector/projection';
import { deductedChargeOf, foldedChargeOf, isBankCharge } from '../reconciliation/bank-charges';
import { bankOf } from '../reconciliation/settlement/state';
import type { RecordedEvent } from '../store/types';
import { type BankEntry, copyBankEntries, noEntries, writeBankEntry } from './bank-entries';

/**
 * The bank's own charges on the marketplace's accounts (docs/bank.md, "Bank charges"): a line of a configured
 * `settlement` or `payouts` account whose transaction code says it is a charge (src/reconciliation/bank-charges.ts)
 * is an expense, booked once on its booking day, kind `bank_charge`, component `bank_charge`:
 *   charge (debit)           bank_fees +amount / bank:<account id> −amount
 *   charge refunded (credit) bank_fees −amount / bank:<account id> +amount
 * It concerns no sub-merchant and is never matched as a settlement or a payout. A charge the bank folded into
 * a debit of a `payouts` account (`foldedChargeOf`), or deducted from a credit of a `settlement` account
 * (`deductedChargeOf`), is booked the same way, for the charge alone (an expense either way); the rest of the line
 * is the payout (src/reconciliation/payouts/tables.ts), and the credit pays at what the PSP sent
 * (src/reconciliation/settlement/state.ts). Whether a line is or holds a charge depends on
 * the line and the build's bank settings alone, so a booking never has to be reversed.
 */
export function chargeEntryOf(e: RecordedEvent, ctx: ProjectionContext): BankEntry | null {
  if (!isEvent(BankEntryBooked, e)) return null;
  const bank = bankOf(ctx);
  const d = dataOf(BankEntryBooked, e);
  const accountId = normalizeAccountId(d.accountId);
  const account = bank.accounts.find((a) => a.id === accountId);
  if (account === undefined) return null;
  // on a settlement account a debit is no payout (a sweep, not booked): its folded charge is not split from it;
  // a settlement credit's deducted charge is (the credit pays the PSP's day at what the PSP sent)
  const folded =
    account.role === 'payouts'
      ? foldedChargeOf(d, bank.charges)
      : account.role === 'settlement'
        ? deductedChargeOf(d, bank.charges)
        : 0n;
  if (folded === 0n && !isBankCharge(d.transactionCode, bank.charges)) return null;
  const amount = folded === 0n ? BigInt(d.amount) : folded;
  // a charge taken out of a transfer is an expense whatever the transfer's direction; a charge line of its own
  // is one as a debit, refunded as a credit
  const fee = folded > 0n || d.direction === 'debit' ? amount : -amount;
  return {
    kind: 'bank_charge',
    rowKey: `charge:${e.id}`,
    accountId: d.accountId,
    lineId: e.id,
    method: 'bank_charge',
    status: 'charge',
    receiver: null,
    currency: d.currency,
    share: amount,
    fee: 0n,
    net: 0n,
    bookedOn: d.bookingDate,
    lines: [
      { account: 'bank_fees', component: 'bank_charge', amount: fee },
      { account: `bank:${d.accountId}`, component: 'bank_charge', amount: -fee },
    ],
  };
}

export async function bookBankCharges(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  if (bankOf(ctx).accounts.length === 0) return;
  const out = noEntries();
  for (const e of events) {
    const entry = chargeEntryOf(e, ctx);
    if (entry) writeBankEntry(out, `${e.id}:c0`, entry, e, null, ctx.timezone);
  }
  if (out.entries.length) await copyBankEntries(tx, ctx.schema, out);
}
