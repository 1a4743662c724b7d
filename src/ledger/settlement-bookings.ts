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
import type { SettlementJudgement } from '../reconciliation/settlement/match';
import type { RecordedEvent } from '../store/types';
import { type BankEntry, copyBankEntries, noEntries, type WrittenEntries, writeBankEntry } from './bank-entries';
import { type StoredBooking, bookingChanges } from './bookings-in-force';
import { bringChargeReturns, type ChargeMemory, chargeReturnTables } from './charge-bookings';
import { bookWriteOffs, isWriteOffEvent } from './write-off-bookings';
import {
  bringRecoveries,
  currenciesWithWriteOffs,
  newRecoveryMemory,
  type RecoveryMemory,
} from './write-off-recoveries';
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
  return `${cashStateTables(s)} ${chargeReturnTables(s)}
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
  readonly recoveries: RecoveryMemory;
  readonly charges: ChargeMemory;
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
): Promise<SettlementJudgement> {
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
  await bringChargeReturns(tx, ctx.schema, currency, j, by, out, next, memory.charges, ctx.timezone);
  return j;
}

export async function bookSettlements(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  // with no settlement account there is nothing to clear into (and the journal is spared the cash state)
  const cashLeg = bankOf(ctx).accounts.some((a) => a.role === 'settlement');
  const cash = cashLeg && cashEventsIn(events);
  const decides = events.some(isWriteOffEvent);
  if (!cash && !decides) return;
  const out = noEntries();
  const memory: BatchMemory = {
    cash: newCashMemory(),
    bookings: new Map(),
    recoveries: newRecoveryMemory(),
    charges: new Map(),
  };
  // append by append, write-offs and matches in the order the store has them: a recovery (a write-off's money
  // paid since) depends on both, and must be booked by the same event whatever the batches
  for (const append of appendsOf(events)) {
    const by = append[append.length - 1]!;
    const decisions = decides ? append.filter(isWriteOffEvent) : [];
    if (decisions.length) {
      await bookWriteOffs(tx, decisions, ctx);
      memory.recoveries.writeOffs.clear();
    }
    if (!cashLeg) continue;
    const touched = cashEventsIn(append)
      ? await applyCashAppend(tx, ctx.schema, append, ctx, memory.cash)
      : new Set<string>();
    let n = 0;
    const judged = new Map<string, SettlementJudgement>();
    for (const currency of [...touched].sort())
      judged.set(currency, await bringToMatches(tx, ctx, currency, by, out, () => n++, memory));
    const looked = decisions.length ? [...touched, ...(await currenciesWithWriteOffs(tx, ctx.schema))] : touched;
    let v = 0;
    for (const currency of [...new Set(looked)].sort()) {
      const judge = async () => judged.get(currency) ?? judgeCurrency(tx, ctx.schema, currency, ctx, memory.cash);
      await bringRecoveries(tx, ctx, currency, judge, by, out, () => v++, memory.recoveries);
    }
  }
  await copyBankEntries(tx, ctx.schema, out);
}
