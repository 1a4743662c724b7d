import type { ExpectedPayout, LineMatch, PayoutBankLine } from '../reconciliation/payouts/match';
import { UnbalancedEntryError } from '../journal-rules';

/**
 * The journal entry of a bank line of a `payouts` account that the payout matching tied to a sub-merchant's
 * statement (same sign convention as journal-rules, debit positive):
 *   paid, duplicate  payable +amount (the marketplace owes the sub-merchant less; a duplicate takes it below
 *                    what was owed, money to recover) / bank:<account id> −amount
 *   returned         payable −amount / bank:<account id> +amount (the money is owed again); a return of the debit
 *                    whole gives back its folded charge too: bank_fees −charge / bank:<account id> +charge
 * A debit that pays no statement, and a return no payout is known for, name no sub-merchant: they are not
 * booked (they stay payout discrepancies, and unbooked bank movements on the Cash sheet).
 */

export interface PayoutBooking {
  readonly lineId: string;
  readonly accountId: string;
  readonly currency: string;
  readonly bookedOn: string;
  readonly amount: bigint;
  readonly role: 'paid' | 'duplicate' | 'returned';
  readonly reference: string;
  /** the sub-merchant's name, the journal's key for its payable */
  readonly receiver: string;
  /** a return's: the bank's charge it gave back with the debit (match.ts `chargesGivenBack`), none: 0 */
  readonly charge?: bigint;
}

export interface PayoutLine {
  readonly account: string;
  readonly amount: bigint;
}

export function payoutBookingsOf(
  expected: readonly ExpectedPayout[],
  lines: readonly PayoutBankLine[],
  matches: readonly LineMatch[],
): PayoutBooking[] {
  const byRef = new Map(expected.map((p) => [p.reference, p]));
  const byId = new Map(lines.map((l) => [l.id, l]));
  const out: PayoutBooking[] = [];
  for (const m of matches) {
    if (m.role === 'unexpected' || m.reference === null) continue;
    const p = byRef.get(m.reference);
    const l = byId.get(m.lineId);
    if (!p || !l) continue;
    out.push({
      lineId: l.id,
      accountId: l.accountId,
      currency: l.currency,
      bookedOn: l.bookingDate,
      amount: l.amount,
      role: m.role,
      reference: m.reference,
      receiver: p.payeeName,
      ...(m.role === 'returned' && l.charge ? { charge: l.charge } : {}),
    });
  }
  return out;
}

export function payoutLines(b: PayoutBooking): PayoutLine[] {
  const out = b.role === 'returned' ? -b.amount : b.amount;
  const back = b.charge ?? 0n;
  const lines = [
    { account: 'payable', amount: out },
    ...(back ? [{ account: 'bank_fees', amount: -back }] : []),
    { account: `bank:${b.accountId}`, amount: -out + back },
  ];
  const total = lines.reduce((s, l) => s + l.amount, 0n);
  if (total !== 0n) throw new UnbalancedEntryError(total, `payout of bank entry ${b.lineId}`);
  return lines;
}

export const samePayout = (a: PayoutBooking, b: PayoutBooking): boolean =>
  a.accountId === b.accountId &&
  a.currency === b.currency &&
  a.bookedOn === b.bookedOn &&
  a.amount === b.amount &&
  a.role === b.role &&
  a.reference === b.reference &&
  a.receiver === b.receiver &&
  (a.charge ?? 0n) === (b.charge ?? 0n);

/** The compact form kept in force per bank line (bigints as strings). */
export const encodePayout = (b: PayoutBooking): string =>
  JSON.stringify([
    b.accountId,
    b.currency,
    b.bookedOn,
    `${b.amount}`,
    b.role,
    b.reference,
    b.receiver,
    ...(b.charge ? [`${b.charge}`] : []),
  ]);

export function decodePayout(lineId: string, text: string): PayoutBooking {
  const [accountId, currency, bookedOn, amount, role, reference, receiver, charge] = JSON.parse(text) as [
    string,
    string,
    string,
    string,
    PayoutBooking['role'],
    string,
    string,
    string?,
  ];
  const back = charge === undefined ? {} : { charge: BigInt(charge) };
  return { lineId, accountId, currency, bookedOn, amount: BigInt(amount), role, reference, receiver, ...back };
}
