import { amountInDoubt } from '../discrepancies/amounts';
import { discrepancyId } from '../discrepancies/id';
import type { Finding } from '../discrepancies/lifecycle';
import type { SettlementJudgement } from './match';

/**
 * A settlement written off, then paid (docs/bank.md, "Written off, then paid"): a `settlement_short` or
 * `settlement_missing` accepted with the decision `write_off` moved the money the PSP owed from `psp_clearing`
 * to the write-off account; when the money comes later (the rest of a short day paid by a second credit, rule 3;
 * a missing day paid within its deadline) the match clears `psp_clearing` again. What is recovered is the
 * write-off less what the same discrepancy still puts in doubt now (nothing, when the judgement no longer finds
 * it): the journal takes the write-off back by that much (a recovery entry) and the settlement read model opens
 * a `settlement_recovered` for a person to review the write-off. One pure rule for both projections, from the
 * write-offs in force and the currency's judgement, so the two always agree and a replay gives the same.
 *
 * The same rule takes back the one gain (docs/bank.md, "Written off as a gain, then explained"): a
 * `settlement_unexpected` written off booked the credit as a gain (bank + / write-off −); when the credit is no
 * longer unexpected (its register rows arrived, so it pays a due day and the match books it; or the bank took it
 * back) the gain is taken back by that much (write-off + / bank −), and a `settlement_gain_taken_back` opens.
 */

/**
 * The settlement types whose write-off is taken back when the judgement no longer finds what it wrote off: the
 * money the PSP owed (`psp_clearing`) and the gain of an unexplained credit (`bank:<account>`).
 */
export const RECOVERABLE_TYPES: readonly string[] = ['settlement_short', 'settlement_missing', 'settlement_unexpected'];

/** A write-off in force of a settlement discrepancy, as its DiscrepancyAccepted recorded it. */
export interface WriteOffInForce {
  readonly discrepancyId: string;
  readonly type: string;
  /** the DiscrepancyAccepted event */
  readonly acceptance: string;
  /** what was written off (DiscrepancyAccepted.amount, minor units) */
  readonly amount: bigint;
}

export interface Recovery {
  readonly writeOff: WriteOffInForce;
  /** what of the write-off is no longer in doubt (> 0) */
  readonly recovered: bigint;
  readonly stillInDoubt: bigint;
  /** the credits that paid the written-off days since (the short's own credit left out), in credit order */
  readonly paidBy: readonly string[];
  /** the latest booking day of those credits (null: none, the PSP owes less than it did) */
  readonly paidOn: string | null;
  /** the due days those credits pay (of a gain taken back: the days its credit pays; none, the bank took it back) */
  readonly dueOn: readonly string[];
}

/**
 * Which credits pay each discrepancy a write-off may name: the rest of a short, a missing day, or the credit
 * once unexpected now paying due days.
 */
function payersOf(currency: string, j: SettlementJudgement, ids: ReadonlySet<string>) {
  const paid = new Map<string, Array<{ id: string; on: string; days: readonly string[] }>>();
  const add = (id: string, m: SettlementJudgement['matches'][number]) => {
    if (!ids.has(id)) return;
    const list = paid.get(id) ?? [];
    list.push({ id: m.credit.id, on: m.credit.bookingDate, days: m.days.map((d) => d.day) });
    paid.set(id, list);
  };
  for (const m of j.matches) {
    if (m.restOf) add(discrepancyId('settlement_short', m.restOf), m);
    for (const d of m.days) add(discrepancyId('settlement_missing', `${currency}|${d.day}`), m);
    add(discrepancyId('settlement_unexpected', m.credit.id), m);
  }
  return paid;
}

/**
 * The recoveries of one currency's write-offs in force, by discrepancy id: `findings` are the judgement's
 * (settlement/discrepancies.ts `discrepanciesOf`), `j` the judgement they came from.
 */
export function recoveriesOf(
  currency: string,
  j: SettlementJudgement,
  findings: readonly Finding[],
  writeOffs: readonly WriteOffInForce[],
): Recovery[] {
  if (writeOffs.length === 0) return [];
  const found = new Map(findings.map((f) => [f.id, f]));
  const payers = payersOf(currency, j, new Set(writeOffs.map((w) => w.discrepancyId)));
  const out: Recovery[] = [];
  for (const w of writeOffs) {
    const f = found.get(w.discrepancyId);
    const doubt = f ? (amountInDoubt(f) ?? 0n) : 0n;
    const stillInDoubt = doubt < w.amount ? doubt : w.amount;
    const recovered = w.amount - stillInDoubt;
    if (recovered <= 0n) continue;
    const credits = payers.get(w.discrepancyId) ?? [];
    const paidOn = credits.reduce<string | null>((on, c) => (on === null || c.on > on ? c.on : on), null);
    const dueOn = [...new Set(credits.flatMap((c) => c.days))].sort();
    out.push({ writeOff: w, recovered, stillInDoubt, paidBy: credits.map((c) => c.id), paidOn, dueOn });
  }
  return out.sort((a, b) => (a.writeOff.discrepancyId < b.writeOff.discrepancyId ? -1 : 1));
}
