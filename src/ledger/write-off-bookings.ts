import { qualified } from '../db/identifier';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../events/audit-events';
import { dataOf, type EventData, isEvent } from '../events/catalog';
import { localDate, writeOffLines, type WriteOffLine } from '../journal-rules';
import { copyRows } from '../projector/copy-rows';
import type { ProjectionContext, Tx } from '../projector/projection';
import type { RecordedEvent } from '../store/types';
import { copyBankEntries, type WrittenEntries } from './bank-entries';

/**
 * Write-offs in the journal (docs/ledger.md, "Write-offs"): an acceptance with the decision `write_off` books
 * the amount in doubt it carries (DiscrepancyAccepted.amount, frozen when it was accepted) by the lines its
 * `writeOff` says (journal-rules.ts `writeOffLines`), kind `write_off`, row key `write_off:<discrepancy id>`,
 * dated at the acceptance. Its revocation reverses that entry (kind `reversal`, dated as the original), never
 * deletes it. The journal keeps the decision in force per discrepancy as the lifecycle does: the first
 * acceptance counts until a revocation naming it; any other acceptance or revocation changes nothing.
 */

export const WRITE_OFF_EVENTS = [DiscrepancyAccepted, DiscrepancyAcceptanceRevoked] as const;

export const isWriteOffEvent = (e: RecordedEvent): boolean =>
  isEvent(DiscrepancyAccepted, e) || isEvent(DiscrepancyAcceptanceRevoked, e);

export function writeOffBookingTables(s: string): string {
  return `create table ${s}.decisions_in_force (discrepancy_id uuid primary key, acceptance uuid not null,
      entry_id text, booking text);`;
}

/** What a write-off entry was booked with, kept in force so that its reversal books the same lines negated. */
interface Booking {
  readonly discrepancyId: string;
  readonly amount: string;
  readonly currency: string;
  readonly acceptedAt: string;
  readonly writeOff: NonNullable<EventData<typeof DiscrepancyAccepted>['writeOff']>;
}

type Out = WrittenEntries;

/** The entry of a booking made by event `by` (`reverses` null), or its reversal (the entry it reverses). */
function writeEntry(out: Out, entryId: string, b: Booking, by: RecordedEvent, reverses: string | null, tz: string) {
  const sign = reverses === null ? 1n : -1n;
  const w = b.writeOff;
  const lines: WriteOffLine[] = writeOffLines(w.account, w, BigInt(b.amount));
  // effect on the payable (credit positive): only a write-off against a sub-merchant's payable has one
  const net = lines.filter((l) => l.account === 'payable').reduce((s, l) => s - l.amount, 0n);
  const at = new Date(b.acceptedAt);
  const pos = [by.position.commit.toString(), by.position.prepare.toString()];
  out.entries.push([
    entryId,
    reverses === null ? 'write_off' : 'reversal',
    reverses,
    `write_off:${b.discrepancyId}`,
    w.posId ?? '',
    w.paymentId ?? '',
    'write_off',
    w.type,
    w.receiverName,
    b.currency,
    sign * BigInt(b.amount),
    0n,
    0n,
    sign * net,
    at.toISOString(),
    localDate(at, tz),
    `{${by.id}}`,
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
      sign * l.amount,
      at.toISOString(),
      ...pos,
    ]);
  });
}

interface Stored {
  readonly acceptance: string;
  readonly entryId: string | null;
  readonly booking: Booking | null;
}

async function loadInForce(tx: Tx, schema: string, ids: readonly string[]): Promise<Map<string, Stored>> {
  const rows = ids.length
    ? await tx<{ discrepancy_id: string; acceptance: string; entry_id: string | null; booking: string | null }[]>`
        select discrepancy_id::text, acceptance::text, entry_id, booking from ${tx(schema)}.decisions_in_force
        where discrepancy_id = any(${ids as string[]}::uuid[])`
    : [];
  return new Map(
    rows.map((r) => [
      r.discrepancy_id,
      {
        acceptance: r.acceptance,
        entryId: r.entry_id,
        booking: r.booking === null ? null : (JSON.parse(r.booking) as Booking),
      },
    ]),
  );
}

/** The booking an acceptance makes: a write-off that says what it books, else none (pay, withhold). */
function bookingOf(d: EventData<typeof DiscrepancyAccepted>): Booking | null {
  if (d.decision !== 'write_off' || !d.writeOff || !d.amount || !d.currency || BigInt(d.amount) === 0n) return null;
  return {
    discrepancyId: d.discrepancyId,
    amount: d.amount,
    currency: d.currency,
    acceptedAt: d.acceptedAt,
    writeOff: d.writeOff,
  };
}

/** The batch's decisions applied in commit order to the decisions in force, writing the entries they make. */
function decide(events: readonly RecordedEvent[], inForce: Map<string, Stored | null>, out: Out, tz: string) {
  for (const e of events) {
    if (isEvent(DiscrepancyAccepted, e)) {
      const d = dataOf(DiscrepancyAccepted, e);
      if (inForce.get(d.discrepancyId)) continue;
      const booking = bookingOf(d);
      const entryId = booking ? `${e.id}:w0` : null;
      if (booking) writeEntry(out, entryId!, booking, e, null, tz);
      inForce.set(d.discrepancyId, { acceptance: e.id, entryId, booking });
    } else if (isEvent(DiscrepancyAcceptanceRevoked, e)) {
      const d = dataOf(DiscrepancyAcceptanceRevoked, e);
      const s = inForce.get(d.discrepancyId);
      if (!s || s.acceptance !== d.acceptance) continue;
      if (s.booking && s.entryId) writeEntry(out, `${e.id}:wr0`, s.booking, e, s.entryId, tz);
      inForce.set(d.discrepancyId, null);
    }
  }
}

export async function bookWriteOffs(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const decided = events.filter(isWriteOffEvent);
  if (decided.length === 0) return;
  const ids = [...new Set(decided.map((e) => (e.data as { discrepancyId: string }).discrepancyId))];
  const inForce: Map<string, Stored | null> = await loadInForce(tx, ctx.schema, ids);
  const before = new Set(inForce.keys());
  const out: Out = { entries: [], lines: [] };
  decide(decided, inForce, out, ctx.timezone);
  // the rows of these discrepancies are written again as they stand after the batch
  if (before.size)
    await tx`delete from ${tx(ctx.schema)}.decisions_in_force where discrepancy_id = any(${[...before]}::uuid[])`;
  const kept = [...inForce].filter((x): x is [string, Stored] => x[1] !== null);
  await copyRows(
    tx,
    qualified(ctx.schema, 'decisions_in_force'),
    ['discrepancy_id', 'acceptance', 'entry_id', 'booking'],
    kept.map(([id, s]) => [id, s.acceptance, s.entryId, s.booking === null ? null : JSON.stringify(s.booking)]),
  );
  // a write-off's entries have the bank bookings' columns: one writer for both
  await copyBankEntries(tx, ctx.schema, out);
}
