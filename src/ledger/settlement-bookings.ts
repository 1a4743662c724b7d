import type { ProjectionContext, Tx } from '../projector/projection';
import {
  appendsOf,
  applyCashAppend,
  bankOf,
  cashEventsIn,
  type CashMemory,
  cashStateTables,
  judgeCurrency,
  newCashMemory,
} from '../reconciliation/settlement/state';
import type { RecordedEvent } from '../store/types';
import { type BankEntry, copyBankEntries, noEntries, type WrittenEntries, writeBankEntry } from './bank-entries';
import { type StoredBooking, bookingChanges } from './bookings-in-force';
import {
  bookingOf,
  decodeBooking,
  encodeBooking,
  sameBooking,
  settlementLines,
  type SettlementBooking,
} from './settlement-rules';

/**
 * The journal's hook for the cash leg: after each append that changes what the PSP owes or what reached a
 * settlement account, the matches of the currencies concerned are judged again (the same functions as the
 * settlement read model, on the journal's own copy of the state) and the bookings in force are brought to
 * them: a booking that no longer holds is reversed (dated as the original), a new or changed one is booked
 * on the credit's booking day. Append-only, like the rest of the journal. Within a batch the state and the
 * bookings in force are read once per currency and then followed in memory (`BatchMemory`).
 */

export function settlementBookingTables(s: string): string {
  return `${cashStateTables(s)}
    create table ${s}.cash_bookings (credit_event_id uuid primary key, currency text not null, entry_id text not null,
      effect text not null);`;
}

/** A settlement credit cleared to the bank, with the bank's fee on it. */
function settlementEntry(b: SettlementBooking): BankEntry {
  return {
    kind: 'bank_settlement',
    rowKey: `bank:${b.creditId}`,
    accountId: b.accountId,
    lineId: b.creditId,
    method: 'settlement',
    status: b.short ? 'short' : 'matched',
    receiver: null,
    currency: b.currency,
    share: b.received,
    fee: b.bankFee,
    net: 0n,
    bookedOn: b.bookedOn,
    lines: settlementLines(b),
  };
}

/**
 * One batch's memory: the cash state (`CashMemory`) and, per currency, the bookings in force as cash_bookings
 * holds them, read once per batch and then changed with the table (the same rows deleted and inserted, nothing
 * else writes it), in the table's order (credit_event_id: a uuid's order is its text's).
 */
interface BatchMemory {
  readonly cash: CashMemory;
  readonly bookings: Map<string, StoredBooking[]>;
}

async function bookingsInForce(tx: Tx, ctx: ProjectionContext, currency: string, memory: BatchMemory) {
  const held = memory.bookings.get(currency);
  if (held) return held;
  const rows = await tx<StoredBooking[]>`
    select credit_event_id::text as key, entry_id as "entryId", effect from ${tx(ctx.schema)}.cash_bookings
    where currency = ${currency} order by credit_event_id`;
  memory.bookings.set(currency, [...rows]);
  return rows;
}

async function bringToMatches(
  tx: Tx,
  ctx: ProjectionContext,
  currency: string,
  by: RecordedEvent,
  out: WrittenEntries,
  next: () => number,
  memory: BatchMemory,
): Promise<void> {
  const j = await judgeCurrency(tx, ctx.schema, currency, ctx, memory.cash);
  const want = new Map(j.matches.map((m) => [m.credit.id, bookingOf(m)]));
  const rows = await bookingsInForce(tx, ctx, currency, memory);
  const changes = bookingChanges(rows, want, (key, effect) => decodeBooking(key, currency, effect), sameBooking);
  for (const r of changes.reverse)
    writeBankEntry(out, `${by.id}:br${next()}`, settlementEntry(r.booking), by, r.entryId, ctx.timezone);
  const gone = changes.reverse.map((r) => r.key);
  if (gone.length) await tx`delete from ${tx(ctx.schema)}.cash_bookings where credit_event_id = any(${gone}::uuid[])`;
  const inForce = rows.filter((r) => !gone.includes(r.key));
  for (const [id, b] of changes.book) {
    const entryId = `${by.id}:b${next()}`;
    writeBankEntry(out, entryId, settlementEntry(b), by, null, ctx.timezone);
    await tx`insert into ${tx(ctx.schema)}.cash_bookings values (${id}, ${currency}, ${entryId}, ${encodeBooking(b)})`;
    inForce.push({ key: id, entryId, effect: encodeBooking(b) });
  }
  memory.bookings.set(
    currency,
    inForce.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  );
}

export async function bookSettlements(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  // with no settlement account there is nothing to clear into (and the journal is spared the cash state)
  if (!bankOf(ctx).accounts.some((a) => a.role === 'settlement') || !cashEventsIn(events)) return;
  const out = noEntries();
  const memory: BatchMemory = { cash: newCashMemory(), bookings: new Map() };
  for (const append of appendsOf(events)) {
    const touched = await applyCashAppend(tx, ctx.schema, append, ctx, memory.cash);
    const by = append[append.length - 1]!;
    let n = 0;
    for (const currency of [...touched].sort()) await bringToMatches(tx, ctx, currency, by, out, () => n++, memory);
  }
  await copyBankEntries(tx, ctx.schema, out);
}
