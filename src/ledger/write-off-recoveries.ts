import type { EventData } from '../events/catalog';
import type { DiscrepancyAccepted } from '../events/audit-events';
import { localDate, localMidnight, writeOffLines } from '../journal-rules';
import type { ProjectionContext, Tx } from '../projector/projection';
import type { SettlementJudgement } from '../reconciliation/settlement/match';
import { discrepanciesOf } from '../reconciliation/settlement/discrepancies';
import { RECOVERABLE_TYPES, recoveriesOf, type WriteOffInForce } from '../reconciliation/settlement/recovered';
import { bankOf, holidaysOf } from '../reconciliation/settlement/state';
import type { RecordedEvent } from '../store/types';
import type { WrittenEntries } from './bank-entries';
import { bookingChanges, type StoredBooking } from './bookings-in-force';

/**
 * A settlement written off, then paid (src/reconciliation/settlement/recovered.ts): the journal takes the
 * write-off back by what came, an entry of kind `write_off_recovery` (row key `write_off:<discrepancy id>`, as
 * the write-off's) with the write-off's lines negated for the amount recovered: `psp_clearing` + / write-off
 * account −. So `psp_clearing`, which the write-off and then the match both cleared, is whole again. Dated at the
 * later of the write-off and the day the money came; its entry names the acceptance and the credits that paid.
 * Like the other bank bookings, the recoveries in force (`write_off_recoveries`) follow the judgement after each
 * append: one that no longer holds, or holds for another amount, is reversed (dated as the original) and the new
 * one booked.
 *
 * The one gain is taken back the same way (recovered.ts): a `settlement_unexpected` written off (bank + /
 * write-off −) whose credit is no longer unexpected (it pays a due day now, or the bank took it back) gets an
 * entry of kind `write_off_gain_taken_back`, the gain's lines negated: write-off account + / `bank:<account>` −,
 * so the bank account holds the credit once (by its match), or not at all once the bank took it back.
 */

export function recoveryBookingTables(s: string): string {
  return `create table ${s}.write_off_recoveries (discrepancy_id uuid primary key, currency text not null,
      entry_id text not null, effect text not null);`;
}

type WriteOff = NonNullable<EventData<typeof DiscrepancyAccepted>['writeOff']>;

/** A write-off as decisions_in_force keeps it (write-off-bookings.ts `Booking`). */
interface StoredWriteOff {
  readonly discrepancyId: string;
  readonly amount: string;
  readonly currency: string;
  readonly acceptedAt: string;
  readonly writeOff: WriteOff;
}

interface RecoveryBooking {
  readonly discrepancyId: string;
  readonly acceptance: string;
  readonly currency: string;
  readonly amount: bigint;
  readonly bookedAt: string;
  readonly paidBy: readonly string[];
  readonly writeOff: WriteOff;
}

const encode = (b: RecoveryBooking): string => JSON.stringify({ ...b, amount: `${b.amount}` });
const decode = (text: string): RecoveryBooking => {
  const b = JSON.parse(text) as Omit<RecoveryBooking, 'amount'> & { amount: string };
  return { ...b, amount: BigInt(b.amount) };
};

/** One batch's memory of a currency: its write-offs in force and its recoveries in force, as the tables hold them. */
export interface RecoveryMemory {
  readonly writeOffs: Map<string, Array<{ acceptance: string; booking: StoredWriteOff }>>;
  readonly inForce: Map<string, StoredBooking[]>;
}

export const newRecoveryMemory = (): RecoveryMemory => ({ writeOffs: new Map(), inForce: new Map() });

async function writeOffsOf(tx: Tx, schema: string, currency: string, memory: RecoveryMemory) {
  const held = memory.writeOffs.get(currency);
  if (held) return held;
  const rows = await tx<{ acceptance: string; booking: string }[]>`
    select acceptance::text, booking from ${tx(schema)}.decisions_in_force
    where booking is not null and booking::jsonb ->> 'currency' = ${currency}
      and booking::jsonb -> 'writeOff' ->> 'type' = any(${RECOVERABLE_TYPES as string[]}::text[])
    order by discrepancy_id`;
  const out = rows.map((r) => ({ acceptance: r.acceptance, booking: JSON.parse(r.booking) as StoredWriteOff }));
  memory.writeOffs.set(currency, out);
  return out;
}

async function recoveriesInForce(tx: Tx, schema: string, currency: string, memory: RecoveryMemory) {
  const held = memory.inForce.get(currency);
  if (held) return held;
  const rows = await tx<StoredBooking[]>`
    select discrepancy_id::text as key, entry_id as "entryId", effect from ${tx(schema)}.write_off_recoveries
    where currency = ${currency} order by discrepancy_id`;
  memory.inForce.set(currency, [...rows]);
  return rows;
}

/** The currencies that have a settlement write-off or a recovery in force (after a decision, all are looked at). */
export async function currenciesWithWriteOffs(tx: Tx, schema: string): Promise<string[]> {
  const rows = await tx<{ currency: string }[]>`
    select booking::jsonb ->> 'currency' as currency from ${tx(schema)}.decisions_in_force
    where booking is not null and booking::jsonb -> 'writeOff' ->> 'type' = any(${RECOVERABLE_TYPES as string[]}::text[])
    union select currency from ${tx(schema)}.write_off_recoveries`;
  return rows.map((r) => r.currency);
}

/** The entry of a recovery made by event `by` (`reverses` null), or its reversal. */
function writeEntry(
  out: WrittenEntries,
  entryId: string,
  b: RecoveryBooking,
  by: RecordedEvent,
  reverses: string | null,
  tz: string,
) {
  const sign = reverses === null ? 1n : -1n;
  const w = b.writeOff;
  // the write-off's lines, negated: what came back leaves the write-off account for psp_clearing; a gain
  // explained since leaves the bank account for the write-off account
  const lines = writeOffLines(w.account, w, b.amount);
  const kind = w.gain ? 'write_off_gain_taken_back' : 'write_off_recovery';
  const pos = [by.position.commit.toString(), by.position.prepare.toString()];
  const ids = [...new Set([by.id, b.acceptance, ...b.paidBy])];
  out.entries.push([
    entryId,
    reverses === null ? kind : 'reversal',
    reverses,
    `write_off:${b.discrepancyId}`,
    w.posId ?? '',
    w.paymentId ?? '',
    'write_off',
    w.type,
    w.receiverName,
    b.currency,
    // the share of a write-off's row key sums to what is written off still
    -sign * b.amount,
    0n,
    0n,
    0n,
    b.bookedAt,
    localDate(new Date(b.bookedAt), tz),
    `{${ids.join(',')}}`,
    ...pos,
  ]);
  lines.forEach((l, n) => {
    out.lines.push([
      entryId,
      n,
      l.account,
      w.receiverName,
      l.component,
      b.currency,
      -sign * l.amount,
      b.bookedAt,
      ...pos,
    ]);
  });
}

/** What the judgement wants booked for each write-off in force of the currency. */
function wanted(
  currency: string,
  j: SettlementJudgement,
  writeOffs: Awaited<ReturnType<typeof writeOffsOf>>,
  ctx: ProjectionContext,
) {
  const s = bankOf(ctx).settlement;
  const findings = discrepanciesOf(
    currency,
    j,
    { lateBusinessDays: s.lateBusinessDays, holidays: holidaysOf(ctx) },
    ctx.timezone,
  );
  const inForce: WriteOffInForce[] = writeOffs.map((w) => ({
    discrepancyId: w.booking.discrepancyId,
    type: w.booking.writeOff.type,
    acceptance: w.acceptance,
    amount: BigInt(w.booking.amount),
  }));
  const booked = new Map(writeOffs.map((w) => [w.booking.discrepancyId, w.booking]));
  const want = new Map<string, RecoveryBooking>();
  for (const r of recoveriesOf(currency, j, findings, inForce)) {
    const b = booked.get(r.writeOff.discrepancyId)!;
    // never before the write-off it takes back; else on the day the money came
    const came = r.paidOn === null ? null : localMidnight(r.paidOn, ctx.timezone).toISOString();
    const bookedAt = came !== null && came > b.acceptedAt ? came : b.acceptedAt;
    want.set(r.writeOff.discrepancyId, {
      discrepancyId: r.writeOff.discrepancyId,
      acceptance: r.writeOff.acceptance,
      currency,
      amount: r.recovered,
      bookedAt,
      paidBy: r.paidBy,
      writeOff: b.writeOff,
    });
  }
  return want;
}

/**
 * Brings the recoveries of one currency to its judgement `judge()` (asked only when the currency has a
 * write-off or a recovery in force), as of `by`, the append's last event.
 */
export async function bringRecoveries(
  tx: Tx,
  ctx: ProjectionContext,
  currency: string,
  judge: () => Promise<SettlementJudgement>,
  by: RecordedEvent,
  out: WrittenEntries,
  next: () => number,
  memory: RecoveryMemory,
): Promise<void> {
  const writeOffs = await writeOffsOf(tx, ctx.schema, currency, memory);
  const rows = await recoveriesInForce(tx, ctx.schema, currency, memory);
  if (writeOffs.length === 0 && rows.length === 0) return;
  const want = wanted(currency, await judge(), writeOffs, ctx);
  const changes = bookingChanges(
    rows,
    want,
    (_key, effect) => decode(effect),
    (a, b) => encode(a) === encode(b),
  );
  for (const r of changes.reverse) writeEntry(out, `${by.id}:vr${next()}`, r.booking, by, r.entryId, ctx.timezone);
  const gone = changes.reverse.map((r) => r.key);
  if (gone.length)
    await tx`delete from ${tx(ctx.schema)}.write_off_recoveries where discrepancy_id = any(${gone}::uuid[])`;
  const kept = rows.filter((r) => !gone.includes(r.key));
  for (const [id, b] of changes.book) {
    const entryId = `${by.id}:v${next()}`;
    writeEntry(out, entryId, b, by, null, ctx.timezone);
    await tx`insert into ${tx(ctx.schema)}.write_off_recoveries values (${id}, ${currency}, ${entryId}, ${encode(b)})`;
    kept.push({ key: id, entryId, effect: encode(b) });
  }
  memory.inForce.set(
    currency,
    kept.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  );
}
