import { BankEntryBooked } from '../../events/bank-events';
import { idFromCanonical } from '../../events/ids';
import { maskCardNumbersInText } from '../../input-rules';
import type { z } from 'zod';
import type { NewEvent } from '../../store/types';
import type { ParsedEntry, ParsedStatement } from './types';

/**
 * The events of one booked entry, one per transaction detail, with ids from the account and the entry
 * itself, never from the statement that carried it (docs/bank.md, "Ids"):
 * - with the bank's reference (camt AcctSvcrRef, MT940 bank reference): account, reference, booking day,
 *   direction, amount and detail index;
 * - without one: account, booking day, direction, amount, value day, and each detail's end-to-end id,
 *   remittance and counterparty account.
 * Either identity is counted among the identical entries of its statement and booking day (the first is
 * occurrence 0), so two equal payments on one day stay two, and a statement that repeats a day another
 * one already gave repeats the same ids.
 */

export interface Occurrences {
  /** the occurrence of this identity in its statement and day; counts it */
  next(day: string, identity: string): number;
}

/**
 * Counts per statement. `dayOrdered`: the statement gives its days one after the other (checked when the
 * file was read first), so the counts of a finished day are dropped: memory stays flat for a large statement.
 */
export function occurrenceCounter(dayOrdered: boolean): Occurrences {
  let day: string | null = null;
  let counts = new Map<string, number>();
  return {
    next(d, identity) {
      if (dayOrdered && d !== day) {
        counts = new Map();
        day = d;
      }
      const key = dayOrdered ? identity : `${d}\u0000${identity}`;
      const n = counts.get(key) ?? 0;
      counts.set(key, n + 1);
      return n;
    },
  };
}

export function entryEvents(
  accountId: string,
  statement: Pick<ParsedStatement, 'statementId' | 'currency'>,
  entry: ParsedEntry,
  occurrences: Occurrences,
): NewEvent[] {
  const day = entry.bookingDate!;
  const single = entry.details.length <= 1;
  const details = entry.details.length === 0 ? [null] : entry.details;
  const identity = entryIdentity(entry, day);
  const charged = single ? chargesOf(entry) : null;
  const occurrence = occurrences.next(day, identity);
  // the id's content {account, detail, entry, occurrence} in canonical form, written out as for the data
  const idHead = `{"account":${JSON.stringify(accountId)},"detail":`;
  const idTail = `,"entry":${JSON.stringify(identity)},"occurrence":${occurrence}}`;
  return details.map((d, i) => {
    const data: EntryData = {
      accountId,
      currency: statement.currency!,
      direction: d?.direction ?? entry.direction,
      amount: (single || d?.amount == null ? entry.amount : d.amount).toString(),
      bookingDate: day,
      valueDate: entry.valueDate,
      bankRef: d?.bankRef ?? entry.bankRef,
      batchRef: single ? null : entry.bankRef,
      detail: i,
      endToEndId: d?.endToEndId ?? null,
      // card numbers are never stored (README, "Secrets and card data"); the id is of the text as the file has it
      remittance: maskCardNumbersInText(d?.remittance ?? entry.info, true),
      counterpartyName: maskCardNumbersInText(d?.counterpartyName ?? null, true),
      counterpartyAccount: d?.counterpartyAccount ?? null,
      isReturn: entry.isReversal || (d?.isReturn ?? false),
      transactionCode: d?.transactionCode ?? entry.transactionCode,
      statementId: statement.statementId!,
      ...charged,
    };
    // the parsers build exactly this shape (test/ingest/bank/events.test.ts checks it against the schema);
    // the event is newEvent(BankEntryBooked, data, { validated: true, idContent }) with its canonical
    // data, built without serialising the id's content generically (entry-events.test.ts checks they agree)
    return {
      id: idFromCanonical(ID_SOURCE, idHead + i + idTail),
      type: BankEntryBooked.type,
      version: BankEntryBooked.version,
      data,
      canonicalData: canonicalEntry(data),
    };
  });
}

const ID_SOURCE = `${BankEntryBooked.type}.v${BankEntryBooked.version}`;

/**
 * What an entry of one transaction detail carries of the charges its file states (the detail's, else the
 * entry's): nothing when it states none, so that the data of every other entry is what it always was. Not in
 * the entry's identity: its id is the same with or without them.
 */
function chargesOf(entry: ParsedEntry): Pick<EntryData, 'transactionAmount' | 'charges'> | null {
  const d = entry.details[0];
  if (d === undefined) return null;
  const charges = d.charges?.length ? d.charges : entry.charges;
  if (!charges?.length) return null;
  return {
    transactionAmount: d.amount === null ? null : d.amount.toString(),
    charges: charges.map((c) => ({
      amount: c.amount.toString(),
      currency: c.currency,
      direction: c.direction,
      included: c.included,
    })),
  };
}

/**
 * What identifies an entry (docs/bank.md, "Ids"): with the bank's reference, the reference, booking day,
 * direction and amount; without one, booking day, direction, amount, value day and each detail's
 * end-to-end id, remittance and counterparty account (or the entry's information when it has no detail).
 * Parts are separated by U+0000, a detail's parts by U+0001.
 */
export function entryIdentity(entry: ParsedEntry, day: string): string {
  if (entry.bankRef) return `r\u0000${entry.bankRef}\u0000${day}\u0000${entry.direction}\u0000${entry.amount}`;
  let id = `c\u0000${day}\u0000${entry.direction}\u0000${entry.amount}\u0000${entry.valueDate ?? ''}`;
  for (const d of entry.details)
    id += `\u0000${d.endToEndId ?? ''}\u0001${d.remittance ?? ''}\u0001${d.counterpartyAccount ?? ''}`;
  return `${id}\u0000${entry.details.length === 0 ? (entry.info ?? '') : ''}`;
}

type EntryData = z.input<typeof BankEntryBooked.schema>;

const text = (v: string | null | undefined): string => (v == null ? 'null' : JSON.stringify(v));

/**
 * The canonical text of an entry's data (`stableStringify(data, true)`: keys in sorted order), written out
 * for its one shape: the store hashes and stores it without serialising every entry generically
 * (test/ingest/bank/entry-events.test.ts checks the two agree).
 */
export function canonicalEntry(d: EntryData): string {
  return (
    `{"accountId":${text(d.accountId)},"amount":${text(d.amount)},"bankRef":${text(d.bankRef)}` +
    `,"batchRef":${text(d.batchRef)},"bookingDate":${text(d.bookingDate)}` +
    (d.charges === undefined ? '' : `,"charges":[${d.charges.map(canonicalCharge).join(',')}]`) +
    `,"counterpartyAccount":${text(d.counterpartyAccount)},"counterpartyName":${text(d.counterpartyName)}` +
    `,"currency":${text(d.currency)},"detail":${JSON.stringify(d.detail)},"direction":${text(d.direction)}` +
    `,"endToEndId":${text(d.endToEndId)},"isReturn":${JSON.stringify(d.isReturn)},"remittance":${text(d.remittance)}` +
    `,"statementId":${text(d.statementId)}` +
    (d.transactionAmount === undefined ? '' : `,"transactionAmount":${text(d.transactionAmount)}`) +
    `,"transactionCode":${text(d.transactionCode)}` +
    `,"valueDate":${text(d.valueDate)}}`
  );
}

const canonicalCharge = (c: NonNullable<EntryData['charges']>[number]): string =>
  `{"amount":${text(c.amount)},"currency":${text(c.currency)},"direction":${text(c.direction)}` +
  `,"included":${JSON.stringify(c.included)}}`;
