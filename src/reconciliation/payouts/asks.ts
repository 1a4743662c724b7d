/**
 * A month stated lower (docs/bank.md, "A month stated lower"). A statement run asks, under its own reference,
 * only for what the month owes a sub-merchant beyond what earlier runs of the month asked; a correction that
 * states the month lower asks nothing and records what the month's runs now ask in all (`stillAsked`, the
 * amount due). The month's asks of that sub-merchant and currency are then lowered to it, the latest ask first,
 * each down to zero; a later correction that states the month higher again raises them back (every correction
 * records its own figure, and the one of the latest cut is in force: a statement issued again at an earlier cut
 * after a later correction, e.g. one sub-merchant's regenerated as it was sent, states what the month owed then
 * and lowers nothing the later one asks). A payout is expected, and a payout run pays, only what
 * the month still asks: never the earlier, higher figure, so money held or taken off by a correction is not
 * paid through an earlier ask. An ask lowered after it was paid leaves that payment above what is expected,
 * and the payouts leg reports the difference.
 *
 * Pure, and one function for the payouts leg, the journal's copy of it and payout runs, so the three agree.
 */
import { comparePositions, type Position } from '../../store/types';

export interface MonthAsk {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly month: string;
  /** the run's reference for this sub-merchant and currency; null when it asks for nothing */
  readonly reference: string | null;
  /** what the reference asks (minor units, ≥ 0) */
  readonly payable: bigint;
  /** what the month's runs now ask in all, recorded by a correction; null when not recorded */
  readonly stillAsked: bigint | null;
  /** where the run that recorded `stillAsked` was cut (StatementIssued.position); null: in the order given */
  readonly cut?: Position | null;
}

/**
 * What each reference still asks for, the asks given in the order they were issued (the store's). A reference
 * seen twice (two runs at one cut ask the same reference) counts once, as first seen. Only references that ask
 * for more than nothing are in the answer.
 */
export function netAsks(asks: readonly MonthAsk[]): Map<string, bigint> {
  const byMonth = new Map<string, { refs: [string, bigint][]; cap: bigint | null; at: Position | null }>();
  const seen = new Set<string>();
  for (const a of asks) {
    const key = `${a.subMerchantId}\u0000${a.currency}\u0000${a.month}`;
    const m = byMonth.get(key) ?? { refs: [], cap: null, at: null };
    byMonth.set(key, m);
    if (a.reference !== null && a.payable > 0n && !seen.has(a.reference)) {
      seen.add(a.reference);
      m.refs.push([a.reference, a.payable]);
    }
    // the figure of the latest cut; at one cut, or without cuts, the latest given
    if (a.stillAsked !== null && (m.at === null || !a.cut || comparePositions(a.cut, m.at) >= 0)) {
      m.cap = a.stillAsked;
      m.at = a.cut ?? m.at;
    }
  }
  const out = new Map<string, bigint>();
  for (const { refs, cap } of byMonth.values()) {
    const asked = refs.reduce((s, [, v]) => s + v, 0n);
    let lower = cap === null || cap >= asked ? 0n : asked - cap;
    for (let i = refs.length - 1; i >= 0; i--) {
      const [ref, v] = refs[i]!;
      const cut = v < lower ? v : lower;
      lower -= cut;
      if (v - cut > 0n) out.set(ref, v - cut);
    }
  }
  return out;
}
