import type { BankConfig } from '../config/bank';
import { BankEntryBooked } from '../events/bank-events';
import { SubMerchantRegistered } from '../events/ledger-events';
import { StatementIssued } from '../events/statement-events';
import type { ProjectionContext, Tx } from '../projector/projection';
import { type AnyEvent, isAnyOf } from '../projector/handlers';
import { loadPayoutInputs } from '../reconciliation/payouts/inputs';
import { matchPayouts } from '../reconciliation/payouts/match';
import { EXPECTED, insertJson, LINES, PAYEES, payoutRowsOf, STILL_ASKED } from '../reconciliation/payouts/tables';
import { appendsOf, bankOf } from '../reconciliation/settlement/state';
import type { RecordedEvent } from '../store/types';
import { qualified } from '../db/identifier';
import { type StoredBooking, bookingChanges } from './bookings-in-force';
import { type BankEntry, copyBankEntries, noEntries, type WrittenEntries, writeBankEntry } from './bank-entries';
import {
  decodePayout,
  encodePayout,
  type PayoutBooking,
  payoutBookingsOf,
  payoutLines,
  samePayout,
} from './payout-rules';

/**
 * The journal's hook for payouts: after each append that changes an expected payout, a line of a `payouts`
 * account or the directory, the payout matching is run again whole (the same pure function as the payouts
 * read model, src/reconciliation/payouts/match.ts, on the journal's own copy of its inputs) and the bookings
 * in force are brought to it: a booking that no longer holds is reversed (dated as the original), a new or
 * changed one is booked on the bank line's booking day. Append-only, like the rest of the journal.
 */

export function payoutBookingTables(s: string): string {
  return `
    create table ${s}.payout_expected (${EXPECTED});
    create table ${s}.payout_still_asked (${STILL_ASKED});
    create table ${s}.payout_lines (${LINES});
    create table ${s}.payout_payees (${PAYEES});
    create table ${s}.payout_bookings (line_event_id uuid primary key, entry_id text not null, effect text not null);`;
}

/** A payout paid from a `payouts` account, to its receiver. */
function payoutEntry(b: PayoutBooking): BankEntry {
  const lines = payoutLines(b);
  const payable = lines.find((l) => l.account === 'payable')!.amount;
  return {
    kind: 'payout',
    rowKey: `payout:${b.lineId}`,
    accountId: b.accountId,
    lineId: b.lineId,
    method: 'payout',
    status: b.role,
    receiver: b.receiver,
    currency: b.currency,
    share: b.amount,
    fee: 0n,
    net: -payable,
    bookedOn: b.bookedOn,
    // a charge given back with a return is the bank's, as its booking was (charge-bookings.ts)
    lines: lines.map((l) => ({
      account: l.account,
      component: l.account === 'bank_fees' ? 'bank_charge' : 'payout',
      amount: l.amount,
    })),
  };
}

async function bringToMatches(
  tx: Tx,
  ctx: ProjectionContext,
  bank: BankConfig,
  by: RecordedEvent,
  out: WrittenEntries,
) {
  const inputs = await loadPayoutInputs(tx, {
    schema: ctx.schema,
    expected: 'payout_expected',
    stillAsked: 'payout_still_asked',
    lines: 'payout_lines',
    payees: 'payout_payees',
  });
  const matches = matchPayouts(inputs.expected, inputs.lines, { windowDays: bank.payouts.matchWindowDays });
  const want = new Map(payoutBookingsOf(inputs.expected, inputs.lines, matches.lines).map((b) => [b.lineId, b]));
  const rows = await tx<StoredBooking[]>`
    select line_event_id::text as key, entry_id as "entryId", effect from ${tx(ctx.schema)}.payout_bookings
    order by line_event_id`;
  const changes = bookingChanges(rows, want, decodePayout, samePayout);
  let n = 0;
  for (const r of changes.reverse)
    writeBankEntry(out, `${by.id}:pr${n++}`, payoutEntry(r.booking), by, r.entryId, ctx.timezone);
  const gone = changes.reverse.map((r) => r.key);
  if (gone.length) await tx`delete from ${tx(ctx.schema)}.payout_bookings where line_event_id = any(${gone}::uuid[])`;
  for (const [id, b] of changes.book) {
    const entryId = `${by.id}:p${n++}`;
    writeBankEntry(out, entryId, payoutEntry(b), by, null, ctx.timezone);
    await tx`insert into ${tx(ctx.schema)}.payout_bookings values (${id}, ${entryId}, ${encodePayout(b)})`;
  }
}

/** The events the payout bookings read (the journal handles them). */
export const PAYOUT_EVENTS: readonly AnyEvent[] = [StatementIssued, BankEntryBooked, SubMerchantRegistered];

const payoutEvent = (e: RecordedEvent) => isAnyOf(PAYOUT_EVENTS, e);

export async function bookPayouts(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const bank = bankOf(ctx);
  // with no payouts account nothing is ever paid out (and the journal is spared the payout state)
  if (!bank.accounts.some((a) => a.role === 'payouts') || !events.some(payoutEvent)) return;
  const out = noEntries();
  for (const append of appendsOf(events)) {
    const r = payoutRowsOf(append, bank, ctx.timezone);
    if (r.expected.length + r.stillAsked.length + r.lines.length + r.payees.length === 0) continue;
    await insertJson(tx, qualified(ctx.schema, 'payout_expected'), EXPECTED, r.expected);
    await insertJson(tx, qualified(ctx.schema, 'payout_still_asked'), STILL_ASKED, r.stillAsked);
    await insertJson(tx, qualified(ctx.schema, 'payout_lines'), LINES, r.lines);
    await insertJson(tx, qualified(ctx.schema, 'payout_payees'), PAYEES, r.payees);
    await bringToMatches(tx, ctx, bank, append[append.length - 1]!, out);
  }
  await copyBankEntries(tx, ctx.schema, out);
}
