import { DateTime } from 'luxon';
import { type BankConfig, normalizeAccountId } from '../../config/bank';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../../events/audit-events';
import { BankEntryBooked } from '../../events/bank-events';
import { dataOf, isEvent } from '../../events/catalog';
import { SubMerchantRegistered } from '../../events/ledger-events';
import { StatementIssued } from '../../events/statement-events';
import type { Tx } from '../../projector/projection';
import type { RecordedEvent } from '../../store/types';
import { foldedChargeOf, isBankCharge } from '../bank-charges';
import { type ClockReading, eventTime as clockTime } from '../event-clock';

/**
 * The inputs of the payout matching as tables (expected payouts, lines of the payouts accounts, directory
 * versions) and how events become their rows: kept by the payouts read model (projections/payouts.ts) and,
 * a copy of its own, by the journal, which books what the same matching says was paid
 * (src/ledger/payout-bookings.ts).
 */
export const POS = 'commit_pos numeric(20,0) not null, prepare_pos numeric(20,0) not null';
export const EXPECTED = `reference text primary key, sub_merchant_id text not null, currency text not null, month text not null,
  amount int8 not null, issued_on date not null, event_id uuid not null, ${POS}`;
/** What a correction says the month's runs now ask a sub-merchant in all (StatementIssued `stillAsked`, asks.ts). */
export const STILL_ASKED = `event_id uuid not null, sub_merchant_id text not null, currency text not null, month text not null,
  still_asked int8 not null, cut text not null, ${POS}, primary key (event_id, sub_merchant_id, currency)`;
export const LINES = `event_id uuid primary key, account_id text not null, currency text not null, direction text not null,
  amount int8 not null, booking_date date not null, end_to_end_id text, remittance text, counterparty_name text,
  counterparty_account text, is_return boolean not null, bank_ref text, charge int8 not null, ${POS}`;
export const PAYEES = `event_id uuid primary key, sub_merchant_id text not null, name text not null, payout_account text, ${POS}`;
/** Acceptances (kind `accepted`) and their revocations (kind `revoked`, `acceptance` the event taken back). */
export const DECISIONS = `event_id uuid primary key, discrepancy_id uuid not null, kind text not null, accepted_by text, note text,
  at timestamptz not null, acceptance uuid, ${POS}`;

export const names = (cols: string) =>
  cols
    .replace(/\([^)]*\)/g, '')
    .split(',')
    .map((c) => c.trim().split(/\s+/)[0]!)
    .filter((c) => c && c !== 'primary');

/** Rows into a table through one jsonb parameter (values as the table's column types read them). */
export async function insertJson(tx: Tx, table: string, cols: string, rows: readonly Record<string, unknown>[]) {
  if (!rows.length) return;
  const typed = cols
    .replace(/,\s*primary key \([^)]*\)/, '')
    .replace(/primary key|not null/g, '')
    .replace(/numeric\(20,0\)/g, 'numeric')
    .split(',')
    .map((c) => c.trim());
  const list = names(cols).join(', ');
  // .unsafe: the record's column definitions (`as x(name type, …)`) are SQL text no parameter can carry; `table`
  // comes quoted (qualified()), the rows are the one parameter
  await tx.unsafe(
    `insert into ${table} (${list}) select ${list} from jsonb_to_recordset($1::text::jsonb) as x(${typed.join(', ')}) on conflict do nothing`,
    [JSON.stringify(rows)] as never[],
  );
}

/**
 * The payouts leg's reading of the event clock (src/reconciliation/event-clock.ts): a run's time of issue and
 * the start of a bank entry's booking day besides the times every clock reads.
 */
export const payoutsClock = (zone: string): ClockReading => ({ issuedAt: true, bookingDayIn: zone });

/** The time an event carries for the payouts leg (ms), or null. */
export const eventTime = (e: RecordedEvent, zone: string): number | null => clockTime(e, payoutsClock(zone));

const pos = (e: RecordedEvent) => ({
  commit_pos: e.position.commit.toString(),
  prepare_pos: e.position.prepare.toString(),
});

/** A statement run's expected payouts (a positive `payable` under a reference) and its corrections' figures. */
function statementRows(
  e: RecordedEvent,
  zone: string,
  expected: Record<string, unknown>[],
  stillAsked: Record<string, unknown>[],
): void {
  const d = dataOf(StatementIssued, e);
  const issuedOn = DateTime.fromMillis(eventTime(e, zone) ?? e.recordedAt.getTime(), { zone }).toISODate();
  for (const p of d.payouts ?? []) {
    if (p.stillAsked !== undefined && !p.subMerchantId.startsWith('receiver:'))
      stillAsked.push({
        event_id: e.id,
        sub_merchant_id: p.subMerchantId,
        currency: p.currency,
        month: d.month,
        still_asked: p.stillAsked,
        // where the run was cut: the figure of the latest cut is in force (asks.ts), whenever it was recorded
        cut: d.position,
        ...pos(e),
      });
    // an unregistered receiver is never due; a run that asks for nothing more expects no transfer
    if (BigInt(p.payable) <= 0n || p.reference === null || p.subMerchantId.startsWith('receiver:')) continue;
    expected.push({
      ...p,
      sub_merchant_id: p.subMerchantId,
      month: d.month,
      amount: p.payable,
      issued_on: issuedOn,
      event_id: e.id,
      ...pos(e),
    });
  }
}

export function payoutRowsOf(events: readonly RecordedEvent[], bank: BankConfig, zone: string) {
  const payoutAccounts = new Set(bank.accounts.filter((a) => a.role === 'payouts').map((a) => a.id));
  const expected: Record<string, unknown>[] = [];
  const stillAsked: Record<string, unknown>[] = [];
  const lines: Record<string, unknown>[] = [];
  const payees: Record<string, unknown>[] = [];
  const decisions: Record<string, unknown>[] = [];
  for (const e of events) {
    if (isEvent(StatementIssued, e)) statementRows(e, zone, expected, stillAsked);
    else if (isEvent(BankEntryBooked, e)) {
      const d = dataOf(BankEntryBooked, e);
      if (!payoutAccounts.has(normalizeAccountId(d.accountId))) continue;
      // the bank's own charge pays no one: the journal books it as a bank fee (src/ledger/charge-bookings.ts)
      if (isBankCharge(d.transactionCode, bank.charges)) continue;
      const charge = foldedChargeOf(d, bank.charges);
      lines.push({
        event_id: e.id,
        account_id: d.accountId,
        currency: d.currency,
        direction: d.direction,
        // a charge the bank folded into the debit is not paid to the payee: the journal books it as a bank fee
        amount: (BigInt(d.amount) - charge).toString(),
        booking_date: d.bookingDate,
        end_to_end_id: d.endToEndId,
        remittance: d.remittance,
        counterparty_name: d.counterpartyName,
        counterparty_account: d.counterpartyAccount,
        is_return: d.isReturn,
        bank_ref: d.bankRef,
        // kept beside it: a return of the debit whole gives it back (match.ts `chargesGivenBack`)
        charge: charge.toString(),
        ...pos(e),
      });
    } else if (isEvent(SubMerchantRegistered, e)) {
      const d = dataOf(SubMerchantRegistered, e);
      payees.push({
        event_id: e.id,
        sub_merchant_id: d.subMerchantId,
        name: d.name,
        payout_account: d.payoutAccount ?? null,
        ...pos(e),
      });
    } else if (isEvent(DiscrepancyAccepted, e)) {
      const d = dataOf(DiscrepancyAccepted, e);
      decisions.push({
        event_id: e.id,
        discrepancy_id: d.discrepancyId,
        kind: 'accepted',
        accepted_by: d.acceptedBy,
        note: d.note,
        at: d.acceptedAt,
        acceptance: null,
        ...pos(e),
      });
    } else if (isEvent(DiscrepancyAcceptanceRevoked, e)) {
      const d = dataOf(DiscrepancyAcceptanceRevoked, e);
      decisions.push({
        event_id: e.id,
        discrepancy_id: d.discrepancyId,
        kind: 'revoked',
        accepted_by: null,
        note: null,
        at: d.revokedAt,
        acceptance: d.acceptance,
        ...pos(e),
      });
    }
  }
  return { expected, stillAsked, lines, payees, decisions };
}
