import { ReconError } from './errors';
import { DateTime } from 'luxon';
import { receiverOf, registerRowKey } from './events/register-row';
import type { NormalizedRegisterRecord, OperationMethod } from './events/ingest-events';

/**
 * The double-entry rules, as plain functions of one register row (no database, no clock), so that the
 * projection, tests and `recon explain` agree on every number.
 *
 * Sign convention: amount > 0 is a debit, < 0 a credit. Every entry nets to zero per currency.
 * Accounts (each line also carries the receiver it concerns, null for the marketplace's own rows):
 *   psp_clearing  what the PSP collected for us and owes us (asset)
 *   psp_fees      fees the PSP withholds (credit: owed to the PSP, netted by it)
 *   payable       what the marketplace owes a sub-merchant (liability; credit balance)
 *   reserve       a sub-merchant's rolling reserve held back (liability; credit balance)
 *   marketplace   the marketplace's own account (rows without receiver fields), in place of payable
 * Each line also names the statement component it feeds: gross, refund, chargeback, fee, reserve_held,
 * reserve_released.
 */

export type Account = 'psp_clearing' | 'psp_fees' | 'payable' | 'reserve' | 'marketplace';
export type Component = 'gross' | 'refund' | 'chargeback' | 'fee' | 'reserve_held' | 'reserve_released';

export interface DraftLine {
  readonly account: Account;
  readonly component: Component;
  readonly amount: bigint;
}

export interface DraftEntry {
  readonly kind: 'settlement' | 'reserve_release';
  /** instant the entry is dated at: the row's dateTime, or local midnight of the release day */
  readonly bookedAt: Date;
  /** local date (RECON_TIMEZONE) of bookedAt, yyyy-mm-dd */
  readonly bookedOn: string;
  readonly releaseOn: string | null;
  readonly holdDays: number | null;
  readonly lines: readonly DraftLine[];
}

/** What the journal keeps of one register row. */
export interface RowFacts {
  readonly rowKey: string;
  readonly posId: string;
  readonly orderId: string | null;
  readonly paymentId: string;
  readonly method: OperationMethod;
  readonly status: string;
  /** receiverName, null for a row of the marketplace itself */
  readonly receiver: string | null;
  readonly currency: string;
  /** receiverAmount + receiverFee for a receiver row; originalAmount for a marketplace row */
  readonly share: bigint;
  readonly fee: bigint;
  readonly reserve: bigint;
  readonly bookedAt: Date;
  readonly bookedOn: string;
}

export type Settlement = 'sale' | 'refund' | 'chargeback' | 'none';

export function settlementOf(method: OperationMethod): Settlement {
  switch (method) {
    case 'purchase':
    case 'capture':
    case 'recurrent':
      return 'sale';
    case 'refund':
      return 'refund';
    case 'dispute':
      return 'chargeback';
    default:
      // auth, void, lookup, credit, p2p: no settlement effect
      return 'none';
  }
}

const big = (s: string | null | undefined): bigint => (s === null || s === undefined || s === '' ? 0n : BigInt(s));

/** See src/events/register-row.ts: shared with ingestion, which must recognise rows the same way. */
export const rowKeyOf = registerRowKey;
export { receiverOf };

// Local dates through a cache keyed by the UTC quarter hour: zone offsets only change on quarter hours,
// and a full luxon conversion per row would dominate a rebuild.
const offsetCache = new Map<string, Map<number, number>>();
const QUARTER = 900_000;

function offsetMinutes(ms: number, zone: string): number {
  let byZone = offsetCache.get(zone);
  if (!byZone) offsetCache.set(zone, (byZone = new Map()));
  const q = Math.floor(ms / QUARTER);
  let off = byZone.get(q);
  if (off === undefined) {
    const dt = DateTime.fromMillis(q * QUARTER, { zone });
    if (!dt.isValid) throw new RangeError(`unknown time zone ${zone}`);
    off = dt.offset;
    if (byZone.size > 200_000) byZone.clear();
    byZone.set(q, off);
  }
  return off;
}

/** Local calendar date (yyyy-mm-dd) of an instant in a zone. */
export function localDate(at: Date, zone: string): string {
  const ms = at.getTime();
  return new Date(ms + offsetMinutes(ms, zone) * 60_000).toISOString().slice(0, 10);
}

const midnightCache = new Map<string, Date>();

/** The instant local midnight of a date starts at. */
export function localMidnight(date: string, zone: string): Date {
  const k = `${zone}|${date}`;
  let d = midnightCache.get(k);
  if (!d) {
    const dt = DateTime.fromISO(date, { zone }).startOf('day');
    if (!dt.isValid) throw new RangeError(`not a date in ${zone}: ${date}`);
    d = dt.toUTC().toJSDate();
    if (midnightCache.size > 100_000) midnightCache.clear();
    midnightCache.set(k, d);
  }
  return d;
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * The first instant whose local date (as `localDate` gives it, the lines' `booked_on`) is `day` or later: its
 * midnight, the end of a clock change that skips it, or the first of two. luxon's wall-clock midnight is the
 * later of two, and its start plus a month keeps the start's offset: adjacent months cut that way overlapped,
 * or left an hour in neither (America/Asuncion 2023-10, America/Havana 2026-10).
 */
export function dayStart(day: string, zone: string): Date {
  const after = (ms: number) => localDate(new Date(ms), zone) >= day;
  const wall = DateTime.fromISO(day, { zone }).toMillis();
  if (after(wall) && !after(wall - 1)) return new Date(wall);
  // every zone's offset is within a day of UTC: the previous day at lo, `day` or later at hi
  let lo = Date.parse(`${day}T00:00:00.000Z`) - 26 * 3_600_000;
  let hi = lo + 52 * 3_600_000;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (after(mid)) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}

/** First instant of a month (yyyy-mm) and of the next one, in a zone: one month's end is the next one's start. */
export function monthBounds(month: string, zone: string): { from: Date; to: Date } {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12)
    throw new RangeError(`not a month: ${JSON.stringify(month)} (expected YYYY-MM)`);
  const start = DateTime.fromObject({ year: Number(m[1]), month: Number(m[2]), day: 1 }, { zone });
  if (!start.isValid) throw new RangeError(`unknown time zone ${zone}`);
  const [y, mo] = [Number(m[1]), Number(m[2])];
  const next = mo === 12 ? `${String(y + 1).padStart(4, '0')}-01` : `${m[1]}-${String(mo + 1).padStart(2, '0')}`;
  return { from: dayStart(`${month}-01`, zone), to: dayStart(`${next}-01`, zone) };
}

/**
 * The facts of a register row. `fallbackAt` dates a row the PSP gave no dateTime (the observation time).
 */
export function rowFacts(posId: string, r: NormalizedRegisterRecord, fallbackAt: Date, timezone: string): RowFacts {
  const receiver = receiverOf(r);
  const bookedAt = r.dateTime ? new Date(r.dateTime) : fallbackAt;
  const share =
    receiver !== null
      ? big(r.receiverAmount) + big(r.receiverFee)
      : r.originalAmount !== null
        ? big(r.originalAmount)
        : big(r.amount) - big(r.customerFee);
  const fee = receiver !== null ? big(r.receiverFee) : big(r.merchantFee);
  return {
    rowKey: rowKeyOf(posId, r),
    posId,
    orderId: r.orderId,
    paymentId: r.paymentId,
    method: r.method,
    status: r.status,
    receiver,
    currency: r.currency,
    share,
    fee,
    reserve: big(r.reserveAmount),
    bookedAt,
    bookedOn: localDate(bookedAt, timezone),
  };
}

function push(lines: DraftLine[], account: Account, component: Component, amount: bigint): void {
  if (amount !== 0n) lines.push({ account, component, amount });
}

/**
 * The entries a row causes: none unless it is a `success` row of a settling method; a sale with a reserve
 * also causes the release entry, dated `holdDays` local days after the sale.
 */
export function entriesFor(f: RowFacts, holdDays: number, timezone: string): DraftEntry[] {
  if (f.status !== 'success') return [];
  const kind = settlementOf(f.method);
  if (kind === 'none') return [];
  const owner: Account = f.receiver === null ? 'marketplace' : 'payable';
  const lines: DraftLine[] = [];
  if (kind === 'sale') {
    push(lines, 'psp_clearing', 'gross', f.share);
    push(lines, owner, 'gross', -f.share);
  } else {
    const component: Component = kind === 'refund' ? 'refund' : 'chargeback';
    push(lines, owner, component, f.share);
    push(lines, 'psp_clearing', component, -f.share);
  }
  push(lines, owner, 'fee', f.fee);
  push(lines, 'psp_fees', 'fee', -f.fee);
  const reserve = kind === 'sale' ? f.reserve : 0n;
  push(lines, owner, 'reserve_held', reserve);
  push(lines, 'reserve', 'reserve_held', -reserve);
  const out: DraftEntry[] = [];
  const releaseOn = reserve !== 0n ? addDays(f.bookedOn, holdDays) : null;
  if (lines.length)
    out.push({
      kind: 'settlement',
      bookedAt: f.bookedAt,
      bookedOn: f.bookedOn,
      releaseOn,
      holdDays: reserve !== 0n ? holdDays : null,
      lines,
    });
  if (releaseOn !== null) {
    const release: DraftLine[] = [];
    push(release, 'reserve', 'reserve_released', reserve);
    push(release, owner, 'reserve_released', -reserve);
    // At the start of the release day, but never before the hold itself: with a hold of 0 days the release
    // day is the sale's own day, whose midnight comes before the sale (the reserve would go negative); it is
    // then released a millisecond after it is held, so that balances in booking order never go below zero.
    const midnight = localMidnight(releaseOn, timezone);
    const releasedAt = midnight > f.bookedAt ? midnight : new Date(f.bookedAt.getTime() + 1);
    out.push({
      kind: 'reserve_release',
      bookedAt: releasedAt,
      bookedOn: releaseOn,
      releaseOn,
      holdDays,
      lines: release,
    });
  }
  for (const e of out) assertBalanced(e.lines);
  return out;
}

export class UnbalancedEntryError extends ReconError {
  readonly kind = 'internal';
  readonly code = 'JOURNAL_UNBALANCED';
  constructor(
    readonly total: bigint,
    detail: string,
  ) {
    super(`journal entry does not net to zero (off by ${total}): ${detail}`);
    this.name = 'UnbalancedEntryError';
  }
}

/** Every entry nets to zero (an entry has one currency): checked before anything is written. */
export function assertBalanced(lines: readonly DraftLine[]): void {
  let total = 0n;
  for (const l of lines) total += l.amount;
  if (total !== 0n)
    throw new UnbalancedEntryError(total, lines.map((l) => `${l.account}/${l.component} ${l.amount}`).join(', '));
}

/** Effect on the owner's payable (credit positive): what the row adds to the sub-merchant's net payable. */
export function netOf(lines: readonly DraftLine[]): bigint {
  let net = 0n;
  for (const l of lines) if (l.account === 'payable' || l.account === 'marketplace') net -= l.amount;
  return net;
}

/**
 * Write-offs (docs/ledger.md, "Write-offs"): an accepted `write_off` books the amount in doubt, frozen at the
 * acceptance, to the write-off account (an expense: `expense:write-offs` unless configured) against the
 * account where that money sits (the account: src/config/write-off.ts). A loss debits the write-off account; the one gain (a credit on a settlement
 * account that nothing explains, kept) credits it. Types where nothing is lost (money late, or still in the
 * bank and still owed, or never moved) have nothing to book: `null` (the write-off only closes them).
 */
/** Where the money in doubt sits, for a write-off: the account credited (debited for a gain) and its receiver. */
export interface WriteOffSide {
  readonly against: string;
  readonly receiverName: string | null;
  readonly gain: boolean;
}

/** What of a discrepancy the side of its write-off depends on. */
export interface WrittenOff {
  readonly type: string;
  readonly posId: string | null;
  readonly receiverName: string | null;
  readonly values: Record<string, unknown>;
}

/** The PSP owes it (a payment, a settlement): what it may never pay is written off its receivable. */
const PSP_RECEIVABLE = new Set([
  'missing_in_report',
  'missing_in_period',
  'missing_webhook',
  'status_mismatch',
  'amount_mismatch',
  'currency_mismatch',
  'split_mismatch',
  'unknown_sub_merchant',
  'duplicate',
  'payment_without_order',
  'amount_differs_from_order',
  'split_differs_from_order',
  'settlement_missing',
  'settlement_short',
]);
const FEES = new Set(['fee_mismatch', 'fee_above_contract', 'fee_below_contract']);
const amountOf = (v: unknown): bigint | null => (typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : null);

/** The side of a write-off of this discrepancy, or null when nothing is booked for it. */
export function writeOffSideOf(d: WrittenOff): WriteOffSide | null {
  if (PSP_RECEIVABLE.has(d.type)) return { against: 'psp_clearing', receiverName: null, gain: false };
  if (FEES.has(d.type)) return { against: 'psp_fees', receiverName: null, gain: false };
  const bank = d.posId ? `bank:${d.posId}` : null;
  switch (d.type) {
    // a bank movement the journal never booked: the money left (a loss) or came (a gain) on that account
    case 'payout_unexpected':
      return bank === null ? null : { against: bank, receiverName: null, gain: false };
    case 'settlement_unexpected':
      return bank === null ? null : { against: bank, receiverName: null, gain: true };
    // paid twice, or more than the statement asked: what the sub-merchant owes back is not recovered
    case 'payout_duplicate':
      return d.receiverName ? { against: 'payable', receiverName: d.receiverName, gain: false } : null;
    case 'payout_amount_mismatch': {
      const over = (amountOf(d.values.paid_out) ?? 0n) - (amountOf(d.values.expected) ?? 0n);
      return over > 0n && d.receiverName ? { against: 'payable', receiverName: d.receiverName, gain: false } : null;
    }
    default:
      return null;
  }
}

export interface WriteOffLine {
  readonly account: string;
  readonly component: 'write_off';
  readonly amount: bigint;
}

/** The lines of a write-off of `amount` (> 0) to `account`: balanced, debit positive. */
export function writeOffLines(account: string, side: WriteOffSide, amount: bigint): WriteOffLine[] {
  const debit = side.gain ? -amount : amount;
  const lines: WriteOffLine[] = [
    { account, component: 'write_off', amount: debit },
    { account: side.against, component: 'write_off', amount: -debit },
  ];
  assertBalanced(lines as unknown as DraftLine[]);
  return lines;
}
