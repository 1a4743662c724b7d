import type { PayoutRun } from './runs';
import { clip, decimalText } from './pain001';

/**
 * What a new payout run of a month pays (pure): every expected payout the month's statements ask for — a
 * statement reference whose `payable` is positive — that no run still standing (draft, approved or sent) has
 * taken. A reference is asked for once: a month issued again asks only for the difference, under a new
 * reference (src/export/statements/payouts.ts), so a run never pays the same money twice.
 *
 * Holds are not paid. Money held on a statement is asked for by the first statement after its discrepancy is
 * resolved or decided pay or write-off ("released"), inside that statement's amount due: a run pays it then,
 * under that statement's reference, and names the holds released into each line. A hold decided since the
 * month's last statement is listed as released but not paid until the month (or the next) is stated again:
 * paying it before would make the bank debit differ from what the statement asks (the payouts leg would
 * report it) and the next statement would ask for it once more.
 */

export interface StatementPayoutRow {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly reference: string | null;
  readonly payable: string;
  readonly holds: ReadonlyArray<readonly [string, string]>;
}

export interface StatementRun {
  /** the StatementIssued event's id */
  readonly id: string;
  readonly month: string;
  readonly payouts: readonly StatementPayoutRow[];
}

export interface Payee {
  readonly name: string;
  readonly legalName: string | null;
  readonly payoutAccount: string | null;
}

export type DecisionNow = 'pay' | 'write_off' | 'withhold' | 'open';

export interface PlanInput {
  /** the month's statement runs, in the order issued */
  readonly runs: readonly StatementRun[];
  /** the statement run before the month's first (the previous month's last), for what its holds released */
  readonly before: StatementRun | null;
  readonly payoutRuns: readonly PayoutRun[];
  readonly payees: ReadonlyMap<string, Payee>;
  /** the decision in force now on each discrepancy a statement held ('open': none) */
  readonly decisions: ReadonlyMap<string, DecisionNow>;
}

export interface PlannedLine {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly amount: string;
  readonly reference: string;
  readonly statementRun: string;
  readonly creditorName: string;
  readonly creditorAccount: string;
  readonly releasedHolds: { discrepancyId: string; amount: string; decision: 'pay' | 'write_off' | 'resolved' }[];
}

export interface LeftOut {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly amount: string;
  readonly reference: string | null;
  readonly reason: 'no_payout_account' | 'not_whole_units' | 'not_registered';
}

export interface HoldLine {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly discrepancyId: string;
  readonly amount: string;
}

export interface Plan {
  readonly lines: PlannedLine[];
  readonly leftOut: LeftOut[];
  readonly releasedSinceStatement: (HoldLine & { decision: string })[];
  readonly heldInForce: HoldLine[];
  readonly statementRuns: string[];
}

const keyOf = (p: { subMerchantId: string; currency: string }) => `${p.subMerchantId}\u0000${p.currency}`;

/** References a standing run (not cancelled) has taken. */
export function referencesTaken(runs: readonly PayoutRun[]): Set<string> {
  return new Set(runs.filter((r) => r.status !== 'cancelled').flatMap((r) => r.lines.map((l) => l.reference)));
}

/** The holds of the statement run before `index` (same key) that this row no longer holds: released into it. */
function releasedInto(input: PlanInput, index: number, row: StatementPayoutRow): PlannedLine['releasedHolds'] {
  const earlier = [...input.runs.slice(0, index)].reverse();
  const prev = [...earlier, ...(input.before ? [input.before] : [])]
    .map((r) => r.payouts.find((p) => keyOf(p) === keyOf(row)))
    .find((p) => p !== undefined);
  if (!prev) return [];
  const now = new Set(row.holds.map(([id]) => id));
  return prev.holds
    .filter(([id]) => id !== '' && !now.has(id))
    .map(([id, amount]) => {
      const d = input.decisions.get(id);
      return { discrepancyId: id, amount, decision: d === 'pay' || d === 'write_off' ? d : ('resolved' as const) };
    });
}

function lineOrLeftOut(input: PlanInput, index: number, row: StatementPayoutRow): PlannedLine | LeftOut {
  const reference = row.reference!;
  const base = { subMerchantId: row.subMerchantId, currency: row.currency, amount: row.payable, reference };
  const payee = input.payees.get(row.subMerchantId);
  if (row.subMerchantId.startsWith('receiver:') || !payee) return { ...base, reason: 'not_registered' };
  if (!payee.payoutAccount) return { ...base, reason: 'no_payout_account' };
  if (decimalText(BigInt(row.payable), row.currency) === null) return { ...base, reason: 'not_whole_units' };
  return {
    ...base,
    statementRun: input.runs[index]!.id,
    // as the file names the creditor (at most 140 characters)
    creditorName: clip(payee.legalName ?? payee.name, 140),
    creditorAccount: payee.payoutAccount,
    releasedHolds: releasedInto(input, index, row),
  };
}

/** Holds of the month's last statement per sub-merchant and currency: released since, or still in force. */
function holdsOfLastStatement(input: PlanInput): Pick<Plan, 'releasedSinceStatement' | 'heldInForce'> {
  const last = new Map<string, StatementPayoutRow>();
  for (const r of input.runs) for (const p of r.payouts) last.set(keyOf(p), p);
  const released: Plan['releasedSinceStatement'] = [];
  const held: HoldLine[] = [];
  for (const p of [...last.values()].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))) {
    for (const [discrepancyId, amount] of p.holds) {
      const line = { subMerchantId: p.subMerchantId, currency: p.currency, discrepancyId, amount };
      const d = input.decisions.get(discrepancyId);
      if (d === 'pay' || d === 'write_off') released.push({ ...line, decision: d });
      else held.push(line);
    }
  }
  return { releasedSinceStatement: released, heldInForce: held };
}

export function planRun(input: PlanInput): Plan {
  const taken = referencesTaken(input.payoutRuns);
  const lines: PlannedLine[] = [];
  const leftOut: LeftOut[] = [];
  input.runs.forEach((run, index) => {
    for (const row of run.payouts) {
      // nothing asked (a month stated for information, an unregistered receiver), or asked by a run already
      if (row.reference === null || BigInt(row.payable) <= 0n || taken.has(row.reference)) continue;
      const out = lineOrLeftOut(input, index, row);
      if ('reason' in out) leftOut.push(out);
      else lines.push(out);
    }
  });
  const statementRuns = [...new Set(lines.map((l) => l.statementRun))];
  return { lines, leftOut, ...holdsOfLastStatement(input), statementRuns };
}
