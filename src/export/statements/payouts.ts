import { dataOf, isEvent } from '../../events/catalog';
import { StatementIssued, statementStream } from '../../events/statement-events';
import { comparePositions, type EventStore, type Position, parsePosition } from '../../store/types';
import { type HeldItem, UNREGISTERED_REASON } from '../payouts/holds';
import { type PaidLine, type PayoutStatusLine, paidBetween } from '../payouts/paid-out';
import { payoutReference } from './payout-references';
import { closingKey, type IssuedRun, previousRunOf } from './previous';
import { monthRange, type StatementFigures } from './workbooks';

/**
 * What a statement asks finance to pay (docs/bank.md, "Payouts and holds"), per sub-merchant and currency:
 *   amount due = adjustments + months never stated + net payable − held now + held on the statement built on (released)
 *                − owed back on the statement built on (brought forward)
 * so money under a holding discrepancy is paid on the first statement after it is resolved or accepted to pay.
 * A receiver unknown to the directory is never due: all it is owed is held until it is registered, and what it
 * owes (an amount due below 0) is carried under it, for the sub-merchant it is registered under to bring forward.
 * An amount due below 0 is money the sub-merchant owes back: nothing is asked, and it is carried to the next
 * statement of the currency (`owedBack`), which takes it off its amount due, until recovered (docs/outputs.md). `payable`
 * is what this run's reference asks for: the amount due less what earlier runs of the month asked for (a month
 * issued again asks for the difference), nothing for a month issued before a later month already was (that
 * statement is for information), nothing for an unregistered receiver.
 */

export interface StatementPayout {
  readonly subMerchantId: string;
  readonly currency: string;
  /** null when nothing is asked for */
  readonly reference: string | null;
  readonly held: bigint;
  readonly released: bigint;
  readonly amountDue: bigint;
  readonly payable: bigint;
  /** a correction's amount due (at least 0) when earlier runs of the month asked for money: see StatementIssued */
  readonly stillAsked?: bigint | null;
  /** what the sub-merchant owed back on the statement built on, taken off this amount due (≥ 0) */
  readonly broughtForward: bigint;
  /** what it owes back after this statement, carried to the next one (≥ 0): the amount due negated when below 0 */
  readonly owedBack: bigint;
  readonly holds: readonly HeldItem[];
  /** the month's paid and returned lines (the bridge's "Paid out") */
  readonly paid: readonly PaidLine[];
  /** what the bank did with each payout asked of this sub-merchant and currency up to this month, at the cut */
  readonly statuses: readonly PayoutStatusLine[];
}

interface SameMonthRun {
  readonly cut: Position;
  readonly payouts: ReadonlyMap<string, bigint>;
}

/** What the first run at a cut recorded of a sub-merchant and currency: its holds, and whether it kept `stillAsked`. */
type RecordedAtCut = ReadonlyMap<string, AtCut>;
interface AtCut {
  readonly holds: ReadonlyArray<readonly [string, string]>;
  readonly stillAsked: boolean;
  /** what it carried as owed back (0 when it recorded none, also a run recorded before the figure was kept) */
  readonly owedBack: bigint;
}

/**
 * Runs of the month recorded at or before the cut, other than one at this very cut (the same run issued
 * again), and what the first run at this very cut recorded (the first issue at a cut fixes what it holds, and
 * whether it states `stillAsked`: a run recorded before the figure was kept, issued again at its cut, stays the
 * same run, and its figure, read later, would not be the month's latest).
 */
async function runsOfMonth(store: EventStore, month: string, timezone: string, cut: Position) {
  const earlier: SameMonthRun[] = [];
  const asked = new Set<string>();
  const sameCut = new Map<string, AtCut>();
  for (const e of await store.readStream(statementStream(month))) {
    if (e.type !== StatementIssued.type) continue;
    const d = dataOf(StatementIssued, e);
    const runCut = parsePosition(d.position);
    if (d.timezone !== timezone) continue;
    // a run's event is appended after its cut: the first run at this cut is read whenever it was recorded
    if (comparePositions(runCut, cut) === 0) {
      for (const p of d.payouts ?? []) {
        const key = closingKey(p.subMerchantId, p.currency);
        if (!sameCut.has(key))
          sameCut.set(key, {
            holds: p.holds,
            stillAsked: p.stillAsked !== undefined,
            owedBack: BigInt(p.owedBack ?? '0'),
          });
      }
      continue;
    }
    if (comparePositions(e.position, cut) > 0) continue;
    // a reference asked by two runs (the month for all, then for one, at one cut) was asked once
    const payouts = new Map(
      (d.payouts ?? []).map((p) => {
        const again = p.reference !== null && asked.has(p.reference);
        if (p.reference !== null) asked.add(p.reference);
        return [closingKey(p.subMerchantId, p.currency), again ? 0n : BigInt(p.payable)];
      }),
    );
    earlier.push({ cut: runCut, payouts });
  }
  return { earlier, sameCut: sameCut as RecordedAtCut };
}

const nextMonths = (month: string, n: number) => {
  let [y, m] = month.split('-').map(Number) as [number, number];
  return Array.from({ length: n }, () => {
    m += 1;
    if (m === 13) {
      m = 1;
      y += 1;
    }
    return `${y}-${String(m).padStart(2, '0')}`;
  });
};

/**
 * A later month (within a year) was issued at or before the cut: this month's statement is for information. In
 * any zone: a month re-based on this one (--rebase-timezone) carries what changed since as an adjustment.
 */
async function laterMonthIssued(store: EventStore, month: string, cut: Position) {
  for (const m of nextMonths(month, 12)) {
    const events = await store.readStream(statementStream(m));
    if (events.some((e) => isEvent(StatementIssued, e) && comparePositions(e.position, cut) <= 0)) return true;
  }
  return false;
}

export async function statementPayouts(
  deps: {
    store: EventStore;
    namesOf(subMerchantId: string): Promise<readonly string[]>;
    /** held items as a run at this cut recorded them (holds.ts recordedHeld) */
    recordedHeld(
      holds: ReadonlyArray<readonly [string, string]>,
      receiverName: string,
      currency: string,
    ): Promise<HeldItem[]>;
  },
  opts: {
    month: string;
    timezone: string;
    cut: Position;
    figures: readonly (StatementFigures & { known?: boolean })[];
    runs: readonly IssuedRun[];
    held: readonly HeldItem[];
    paid: readonly PaidLine[];
    /** every expected payout at the cut with its status (statement-payout-figures.ts) */
    statuses?: readonly PayoutStatusLine[];
  },
): Promise<StatementPayout[]> {
  const { from, to } = monthRange(opts.month, opts.timezone);
  const { earlier, sameCut } = await runsOfMonth(deps.store, opts.month, opts.timezone, opts.cut);
  const forInformation = await laterMonthIssued(deps.store, opts.month, opts.cut);
  const reasonsAtCut = new Map(opts.held.map((h) => [h.discrepancyId, h.reason]));
  const out: StatementPayout[] = [];
  for (const f of opts.figures) {
    const names = await deps.namesOf(f.subMerchantId);
    const key = closingKey(f.subMerchantId, f.currency);
    const previous = previousRunOf(opts.runs, f.subMerchantId, [...names]);
    const unregistered = f.subMerchantId.startsWith('receiver:');
    // what the statement built on held, under this id and (once registered) under the receiver's former placeholder
    const released = fromPrevious(previous?.held, key, unregistered ? [] : names, f.currency);
    // what a placeholder owes is carried under it, as what it is owed is held under it: once registered, the
    // sub-merchant's statement takes both on (fromPrevious reads the placeholders of its names)
    const broughtForward = fromPrevious(previous?.owedBack, key, unregistered ? [] : names, f.currency);
    const flow = (f.adjustments ?? 0n) + (f.notStated ?? 0n) + f.netPayable;
    const recorded = sameCut.get(key);
    const holds = recorded
      ? withReasonsAtCut(await deps.recordedHeld(recorded.holds, f.subMerchantName, f.currency), reasonsAtCut)
      : unregistered
        ? placeholderHolds(f, flow + released - broughtForward)
        : opts.held.filter((h) => h.currency === f.currency && names.includes(h.receiverName));
    const held = holds.reduce((s, h) => s + h.amount, 0n);
    const amountDue = flow - held + released - broughtForward;
    const askedBefore = earlier.reduce((s, r) => s + (r.payouts.get(key) ?? 0n), 0n);
    const payable = unregistered || forInformation ? 0n : amountDue - askedBefore > 0n ? amountDue - askedBefore : 0n;
    const run = 1 + earlier.filter((r) => (r.payouts.get(key) ?? 0n) > 0n).length;
    const stillAsked = stillAskedOf(amountDue, askedBefore > 0n && !unregistered && !forInformation, recorded);
    // a statement for information is not built on: it carries nothing
    const owedBack = recorded ? recorded.owedBack : amountDue < 0n && !forInformation ? -amountDue : 0n;
    out.push({
      subMerchantId: f.subMerchantId,
      currency: f.currency,
      reference: payable > 0n ? payoutReference(f.subMerchantId, opts.month, f.currency, run) : null,
      held,
      released,
      amountDue,
      payable,
      stillAsked,
      broughtForward,
      owedBack,
      holds,
      paid: opts.paid.filter(
        (l) =>
          l.subMerchantId === f.subMerchantId &&
          l.currency === f.currency &&
          paidBetween([l], l.subMerchantId, l.currency, from.toISODate(), to.toISODate()) !== 0n,
      ),
      statuses: (opts.statuses ?? []).filter(
        (s) => s.subMerchantId === f.subMerchantId && s.currency === f.currency && s.month <= opts.month,
      ),
    });
  }
  return out;
}

/** A receiver not in the directory is never due: all it is owed is held until it is registered. */
/**
 * A recorded run's held items with the reasons the cut gives them (`heldAt`: what a review in force at the cut
 * added, "(reviewed: withheld)"), so a statement issued again at its cut reads as it was issued; an item the cut
 * no longer holds keeps its type's reason.
 */
function withReasonsAtCut(items: readonly HeldItem[], reasons: ReadonlyMap<string, string>): HeldItem[] {
  return items.map((h) => {
    const reason = reasons.get(h.discrepancyId);
    return reason === undefined ? h : { ...h, reason };
  });
}

function placeholderHolds(f: StatementFigures, owed: bigint): HeldItem[] {
  const hold = {
    discrepancyId: '',
    reason: UNREGISTERED_REASON,
    receiverName: f.subMerchantName,
    currency: f.currency,
    amount: owed,
  };
  return owed > 0n ? [hold] : [];
}

/**
 * What the statement built on recorded of a sub-merchant and currency (held, or owed back), under its id and
 * under the placeholders of its receiver names (`receiver:<name>`, stated before the name was registered).
 */
function fromPrevious(
  recorded: ReadonlyMap<string, bigint> | undefined,
  key: string,
  names: readonly string[],
  currency: string,
): bigint {
  let sum = recorded?.get(key) ?? 0n;
  for (const n of names) sum += recorded?.get(closingKey(`receiver:${n}`, currency)) ?? 0n;
  return sum;
}

/**
 * A correction's figure for what the month's runs now ask in all: its amount due, at least 0 (payouts/asks.ts);
 * null where earlier runs asked nothing (`asked` false), or where the first run at this cut recorded none.
 */
function stillAskedOf(amountDue: bigint, asked: boolean, atCut?: { stillAsked: boolean }): bigint | null {
  if (!asked || atCut?.stillAsked === false) return null;
  return amountDue > 0n ? amountDue : 0n;
}

/** StatementIssued.payouts of a run, sorted. */
export function issuedPayouts(payouts: readonly StatementPayout[]) {
  return [...payouts]
    .sort((a, b) => (closingKey(a.subMerchantId, a.currency) < closingKey(b.subMerchantId, b.currency) ? -1 : 1))
    .map((p) => ({
      subMerchantId: p.subMerchantId,
      currency: p.currency,
      reference: p.reference,
      amountDue: p.amountDue.toString(),
      held: p.held.toString(),
      payable: p.payable.toString(),
      ...(p.stillAsked !== null && p.stillAsked !== undefined ? { stillAsked: p.stillAsked.toString() } : {}),
      ...(p.owedBack > 0n ? { owedBack: p.owedBack.toString() } : {}),
      holds: p.holds
        .map((h) => [h.discrepancyId, h.amount.toString()] as [string, string])
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    }));
}

/**
 * The ledger's figures with what was paid out (ledger-queries knows nothing of the bank): payments booked before
 * the month come off the opening, the month's are its "Paid out", and the closing comes down by both.
 */
export function withPaidOut<F extends StatementFigures>(
  figures: readonly F[],
  paid: readonly PaidLine[],
  month: string,
  timezone: string,
): F[] {
  const { from, to } = monthRange(month, timezone);
  const [first, end] = [from.toISODate(), to.toISODate()];
  return figures.map((f) => {
    const before = paidBetween(paid, f.subMerchantId, f.currency, null, first);
    const inMonth = paidBetween(paid, f.subMerchantId, f.currency, first, end);
    if (before === 0n && inMonth === 0n) return f;
    return { ...f, opening: f.opening - before, paidOut: inMonth, closing: f.closing - before - inMonth };
  });
}
