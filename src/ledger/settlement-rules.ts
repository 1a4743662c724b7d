import type { SettlementMatch } from '../reconciliation/settlement/match';
import { UnbalancedEntryError } from '../journal-rules';

/**
 * The journal entry of a matched settlement: the PSP's credit reaches the bank and clears what the PSP
 * owed. Accounts besides journal-rules' own (same sign convention, debit positive):
 *   bank:<account id>  the marketplace's bank account the credit reached (asset)
 *   bank_fees          charges the bank took from the credit, absorbed by the tolerance (expense)
 * Lines: bank +received; bank_fees +charge; psp_fees +fees the PSP withheld from these days (settled by
 * netting); psp_clearing −(all of it). A short settlement clears only what arrived (with the days' fees),
 * so the shortfall stays on psp_clearing, visible, until it is paid or written off.
 */

export interface SettlementBooking {
  readonly creditId: string;
  readonly accountId: string;
  readonly currency: string;
  readonly bookedOn: string;
  readonly received: bigint;
  readonly bankFee: bigint;
  readonly fees: bigint;
  readonly short: boolean;
}

export interface SettlementLine {
  readonly account: string;
  readonly component: 'settlement' | 'bank_fee' | 'fee';
  readonly amount: bigint;
}

export function bookingOf(m: SettlementMatch): SettlementBooking {
  return {
    creditId: m.credit.id,
    accountId: m.credit.accountId,
    currency: m.credit.currency,
    bookedOn: m.credit.bookingDate,
    received: m.credit.amount,
    bankFee: m.bankFee,
    // a day paid in two credits: its fees are booked once, with the first
    fees: m.restOf ? 0n : m.days.reduce((s, d) => s + d.fees, 0n),
    short: m.shortfall > 0n,
  };
}

export function sameBooking(a: SettlementBooking, b: SettlementBooking): boolean {
  return (
    a.accountId === b.accountId &&
    a.bookedOn === b.bookedOn &&
    a.received === b.received &&
    a.bankFee === b.bankFee &&
    a.fees === b.fees &&
    a.short === b.short
  );
}

export function settlementLines(b: SettlementBooking): SettlementLine[] {
  const lines: SettlementLine[] = [{ account: `bank:${b.accountId}`, component: 'settlement', amount: b.received }];
  if (b.bankFee !== 0n) lines.push({ account: 'bank_fees', component: 'bank_fee', amount: b.bankFee });
  if (b.fees !== 0n) lines.push({ account: 'psp_fees', component: 'fee', amount: b.fees });
  lines.push({ account: 'psp_clearing', component: 'settlement', amount: -(b.received + b.bankFee + b.fees) });
  const total = lines.reduce((s, l) => s + l.amount, 0n);
  if (total !== 0n) throw new UnbalancedEntryError(total, `settlement of bank entry ${b.creditId}`);
  return lines;
}

/** The compact form kept in force per credit (bigints as strings). */
export const encodeBooking = (b: SettlementBooking): string =>
  JSON.stringify([b.accountId, b.bookedOn, `${b.received}`, `${b.bankFee}`, `${b.fees}`, b.short]);

export function decodeBooking(creditId: string, currency: string, text: string): SettlementBooking {
  const [accountId, bookedOn, received, bankFee, fees, short] = JSON.parse(text) as [
    string,
    string,
    string,
    string,
    string,
    boolean,
  ];
  return {
    creditId,
    accountId,
    currency,
    bookedOn,
    received: BigInt(received),
    bankFee: BigInt(bankFee),
    fees: BigInt(fees),
    short,
  };
}
