import { netAsks } from '../reconciliation/payouts/asks';
import { comparePositions, parsePosition } from '../store/types';
import { type PayoutRun, releasedOf } from './runs';
import { type PaymentCharset, partyNameIn } from './charset';
import { decimalText, isIban, looksLikeIban, MAX_DIGITS, partyName, valueDigits } from './pain001';

/**
 * What a new payout run of a month pays (pure): every expected payout the month's statements ask for — a
 * statement reference whose `payable` is positive — that no run still standing (draft, approved or sent) has
 * taken. A reference is asked for once: a month issued again asks only for the difference, under a new
 * reference (src/export/statements/payouts.ts), so a run never pays the same money twice.
 *
 * Nor is a reference paid twice when the bank already paid it outside a standing run (a run cancelled after its
 * file was executed, a transfer made by hand): what the bank's debits paid on it, less returns, counts as taken.
 *
 * Holds are not paid. Money held on a statement is asked for by the first statement after its discrepancy is
 * resolved or decided pay or write-off ("released"), inside that statement's amount due: a run pays it then,
 * under that statement's reference, and names the holds released into each line. A hold decided since the
 * month's last statement is listed as released but not paid until the month (or the next) is stated again:
 * paying it before would make the bank debit differ from what the statement asks (the payouts leg would
 * report it) and the next statement would ask for it once more.
 *
 * A correction that states the month lower than its earlier runs asked lowers their asks, the latest first
 * (src/reconciliation/payouts/asks.ts, as the payouts leg expects them): a run pays what a reference still asks,
 * less what standing runs took of it (a reference paid lowered and raised again since is paid the rest).
 */

export interface StatementPayoutRow {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly reference: string | null;
  readonly payable: string;
  /** a correction's figure for what the month's runs now ask in all (StatementIssued `stillAsked`) */
  readonly stillAsked?: string;
  readonly holds: ReadonlyArray<readonly [string, string]>;
}

export interface StatementRun {
  /** the StatementIssued event's id */
  readonly id: string;
  readonly month: string;
  /** where it was cut (StatementIssued.position): the latest cut's `stillAsked` is in force */
  readonly cut?: string;
  readonly payouts: readonly StatementPayoutRow[];
}

export interface Payee {
  readonly name: string;
  readonly legalName: string | null;
  readonly payoutAccount: string | null;
  /** the BIC of the bank holding the payout account (directory `payout_bic`), null when not given */
  readonly payoutBic?: string | null;
  /**
   * false while the account (or BIC) replaced another and no named person confirmed it (PayeeAccountConfirmed):
   * nothing is paid to it; absent: confirmed
   */
  readonly accountConfirmed?: boolean;
}

/** 'revoked': the last decision was taken back (open again, unless the sources since explained it) */
export type DecisionNow = 'pay' | 'write_off' | 'withhold' | 'open' | 'revoked';

export interface PlanInput {
  /** the month's statement runs, in the order issued */
  readonly runs: readonly StatementRun[];
  /** what the month's first statements were built on, per sub-merchant (inputs.ts builtOn): the holds released */
  readonly before: StatementRun | null;
  readonly payoutRuns: readonly PayoutRun[];
  readonly payees: ReadonlyMap<string, Payee>;
  /** the decision in force now on each discrepancy a statement held ('open': none) */
  readonly decisions: ReadonlyMap<string, DecisionNow>;
  /** what the bank's debits have paid on each reference, less returns (bank-paid.ts) */
  readonly paidByBank: BankPaid;
  /** held discrepancies with no decision that the reconciliation finds open now (resolved.ts `openNow`) */
  readonly openNow?: ReadonlySet<string>;
  /** the statement runs of the months after, in month order (inputs.ts `laterRunsOf`): what they hold again */
  readonly later?: readonly StatementRun[];
  /** the characters the file writes names in (bank.payouts.charset); none: utf8 */
  readonly charset?: PaymentCharset;
}

/**
 * What the bank paid on each reference, less returns; `returned`: what came back on each; `due`: how far the
 * bank's statements reach and each reference's due day, for whether a sent run's transfer is unpaid past its due
 * window (bank-paid.ts).
 */
export type BankPaid = ReadonlyMap<string, bigint> & {
  readonly returned?: ReadonlyMap<string, bigint>;
  readonly due?: BankDue;
};

export interface BankDue {
  /**
   * per currency, the latest booking day of the bank's lines on the payouts accounts: how far the imported
   * statements reach (the bank's evidence that a transfer was not executed by then)
   */
  readonly bookedThrough: ReadonlyMap<string, string>;
  /** bank.payouts.dueDays */
  readonly dueDays: number;
  /** each expected payout's due day (issue day + dueDays) */
  readonly dueOn: ReadonlyMap<string, string>;
}

export interface PlannedLine {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly amount: string;
  readonly reference: string;
  readonly statementRun: string;
  readonly creditorName: string;
  readonly creditorAccount: string;
  /** the creditor's bank (BIC), when the directory gives it */
  readonly creditorAgent?: string;
  readonly releasedHolds: { discrepancyId: string; amount: string; decision: 'pay' | 'write_off' | 'resolved' }[];
  /** what the bank had sent back on the reference when drafted: paid again by this line (absent when nothing) */
  readonly repaysReturned?: string;
  /** what the bank's debits had paid on the reference when drafted, returns not taken off (absent when nothing) */
  readonly bankPaidBefore?: string;
}

export interface LeftOut {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly amount: string;
  readonly reference: string | null;
  readonly reason:
    | 'no_payout_account'
    | 'payee_account_unconfirmed'
    | 'not_whole_units'
    | 'not_registered'
    | 'hold_in_force'
    | 'bad_iban'
    | 'no_bank_identifier'
    | 'not_fileable'
    | 'no_name'
    | 'name_not_in_charset';
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

const max = (a: bigint, b: bigint) => (a > b ? a : b);

const keyOf = (p: { subMerchantId: string; currency: string }) => `${p.subMerchantId}\u0000${p.currency}`;

/**
 * What standing runs (not cancelled) have taken of each reference. A reference paid at a figure a correction
 * lowered, then raised again by a later one, asks the rest (asks.ts restores earlier asks first): it is paid the
 * difference under the same reference, so the month's money is paid, once. What a named person released of a
 * sent run the bank did not pay in full (PayoutRunUnpaidReleased) is no longer taken by it: a new run pays it.
 */
export function referencesTaken(runs: readonly PayoutRun[], except?: string): Map<string, bigint> {
  const taken = new Map<string, bigint>();
  for (const r of runs) {
    if (r.status === 'cancelled' || r.id === except) continue;
    const released = releasedOf(r);
    for (const l of r.lines) {
      const took = BigInt(l.amount) - (released.get(l.reference) ?? 0n);
      taken.set(l.reference, (taken.get(l.reference) ?? 0n) + took);
    }
  }
  return taken;
}

/**
 * What the bank's debits paid on each reference outside the standing runs, at the least (gross: returns not taken
 * off): a run drafted when the bank had paid g on a reference knows that the runs standing before it took at most
 * what they asked, so g less that was paid by hand or by a run cancelled since. Without it a debit made by hand
 * before a run was counted as the run's own once the run was sent: the next draft asked it again (found in review).
 */
export function paidOutsideRuns(runs: readonly PayoutRun[]): Map<string, bigint> {
  const before = new Map<string, bigint>();
  const outside = new Map<string, bigint>();
  for (const r of runs) {
    if (r.status === 'cancelled') continue;
    const released = releasedOf(r);
    for (const l of r.lines) {
      const earlier = before.get(l.reference) ?? 0n;
      const known = BigInt(l.bankPaidBefore ?? '0') - earlier;
      if (known > (outside.get(l.reference) ?? 0n)) outside.set(l.reference, known);
      before.set(l.reference, earlier + BigInt(l.amount) - (released.get(l.reference) ?? 0n));
    }
  }
  return outside;
}

/** What each reference of the month's statement runs still asks (asks.ts); one lowered to nothing is absent. */
export function stillAskedOf(runs: readonly StatementRun[]): Map<string, bigint> {
  return netAsks(
    runs.flatMap((run) =>
      run.payouts.map((p) => ({
        subMerchantId: p.subMerchantId,
        currency: p.currency,
        month: run.month,
        reference: p.reference,
        payable: BigInt(p.payable),
        stillAsked: p.stillAsked === undefined ? null : BigInt(p.stillAsked),
        cut: run.cut === undefined ? null : parsePosition(run.cut),
      })),
    ),
  );
}

/**
 * The lines of a standing run that pay more than their reference still asks, less what other standing runs
 * took: a correction stated the month lower since the run was drafted (it would pay money the month no longer
 * owes, or money now held).
 */
export function linesAboveAsks(run: PayoutRun, payoutRuns: readonly PayoutRun[], runs: readonly StatementRun[]) {
  const still = stillAskedOf(runs);
  const others = referencesTaken(payoutRuns, run.id);
  // money the bank sent back, which this line pays again, is no longer what the other runs took
  return run.lines.filter(
    (l) =>
      BigInt(l.amount) + (others.get(l.reference) ?? 0n) - BigInt(l.repaysReturned ?? '0') >
      (still.get(l.reference) ?? 0n),
  );
}

/**
 * The lines of a waiting run that pay more than a draft made now would: the bank's debits paid their reference
 * since it was drafted (a transfer made by hand, a run cancelled after its file was executed, a return the bank
 * took back), read as planRun reads them. Only for a run whose file nobody took: the bank cannot hold its
 * transfers, so no debit is its own.
 */
export function linesPaidSince(
  run: PayoutRun,
  payoutRuns: readonly PayoutRun[],
  runs: readonly StatementRun[],
  paidByBank: BankPaid,
) {
  const still = stillAskedOf(runs);
  const others = referencesTaken(payoutRuns, run.id);
  const outside = paidOutsideRuns(payoutRuns);
  return run.lines.filter((l) => {
    const took = (others.get(l.reference) ?? 0n) - (paidByBank.returned?.get(l.reference) ?? 0n);
    const ownAndOutside = took + (outside.get(l.reference) ?? 0n);
    const rest = (still.get(l.reference) ?? 0n) - max(ownAndOutside, paidByBank.get(l.reference) ?? 0n);
    return BigInt(l.amount) > rest;
  });
}

/**
 * A hold released into a line, and what the statement that released it still held of the discrepancy (`kept`: the
 * excess a decision to pay on the amount accepted leaves held; 0 for a full release). Not recorded with the line.
 */
export interface Release {
  readonly hold: PlannedLine['releasedHolds'][number];
  readonly kept: bigint;
}

/** The holds of the statement run before `index` (same key) that this row no longer holds: released into it. */
function releasedInto(input: PlanInput, asked: Asked, index: number, row: StatementPayoutRow): Release[] {
  const key = keyOf(row);
  let prev: StatementPayoutRow | undefined;
  for (let j = index - 1; j >= 0 && !prev; j--) prev = asked.rows[j]!.get(key);
  prev ??= asked.before.get(key);
  if (!prev) return [];
  // a hold the row names at less than before released the difference (a decision to pay on the amount accepted,
  // the excess held again under the same discrepancy): that money rests on the decision as a full release does
  const now = heldById(row.holds);
  const out: Release[] = [];
  for (const [id, was] of heldById(prev.holds)) {
    const kept = now.get(id) ?? 0n;
    const amount = was - kept;
    if (id === '' || amount <= 0n) continue;
    const d = input.decisions.get(id);
    const decision = d === 'pay' || d === 'write_off' ? d : ('resolved' as const);
    out.push({ hold: { discrepancyId: id, amount: amount.toString(), decision }, kept });
  }
  return out;
}

/** A row's held amounts per discrepancy (one may hold under several receiver names), in the order first named. */
function heldById(holds: StatementPayoutRow['holds']): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const [id, amount] of holds) out.set(id, (out.get(id) ?? 0n) + BigInt(amount));
  return out;
}

/**
 * The holds later corrections of the month released into this row's reference: a correction that states the
 * month higher again restores the earlier asks it had lowered (asks.ts), so what it released is paid under them,
 * as long as the reference still asks more than before it (a correction since that held it again undoes it).
 */
function releasedByRestoring(input: PlanInput, asked: Asked, index: number, row: StatementPayoutRow): Release[] {
  const out: Release[] = [];
  const ref = row.reference!;
  const now = asked.after.at(-1)!.get(ref) ?? 0n;
  for (let j = index + 1; j < input.runs.length; j++) {
    const later = asked.rows[j]!.get(keyOf(row));
    if (later?.stillAsked === undefined) continue;
    const before = asked.after[j - 1]!.get(ref) ?? 0n;
    const after = asked.after[j]!.get(ref) ?? 0n;
    if (after > before && now > before) out.push(...releasedInto(input, asked, j, later));
  }
  return out;
}

/**
 * Each statement run's rows by sub-merchant and currency, and what every reference still asks once the runs up
 * to it are in: worked out once per plan, not once per row (a month has a row per sub-merchant and currency).
 */
interface Asked {
  readonly rows: readonly Map<string, StatementPayoutRow>[];
  readonly after: readonly Map<string, bigint>[];
  /** the rows of the statement run before the month's first */
  readonly before: Map<string, StatementPayoutRow>;
  /** what the latest statement holds, this month's or a later month's (latestHolds) */
  readonly latest: Map<string, Map<string, bigint>>;
}

function rowsByKey(run: StatementRun | null): Map<string, StatementPayoutRow> {
  const byKey = new Map<string, StatementPayoutRow>();
  for (const p of run?.payouts ?? []) if (!byKey.has(keyOf(p))) byKey.set(keyOf(p), p);
  return byKey;
}

function askedOf(input: PlanInput): Asked {
  return {
    rows: input.runs.map(rowsByKey),
    after: input.runs.map((_, j) => stillAskedOf(input.runs.slice(0, j + 1))),
    before: rowsByKey(input.before),
    latest: latestHolds([...input.runs, ...(input.later ?? [])]),
  };
}

function lineOrLeftOut(
  input: PlanInput,
  asked: Asked,
  index: number,
  row: StatementPayoutRow,
  still: bigint,
): PlannedLine | LeftOut {
  const reference = row.reference!;
  const amount = still.toString();
  const base = { subMerchantId: row.subMerchantId, currency: row.currency, amount, reference };
  const payee = input.payees.get(row.subMerchantId);
  if (row.subMerchantId.startsWith('receiver:') || !payee) return { ...base, reason: 'not_registered' };
  if (!payee.payoutAccount) return { ...base, reason: 'no_payout_account' };
  if (payee.accountConfirmed === false) return { ...base, reason: 'payee_account_unconfirmed' };
  const releases = releasesOf(input, asked, index, row);
  const releasedHolds = releases.map((r) => r.hold);
  // the amount carries money a statement released; its release taken back or withheld since, or its discrepancy
  // in doubt again, and held by no statement since: held again
  if (releasesInDoubt([{ ...base, releases }], asked.latest, input.decisions, input.openNow).size > 0)
    return { ...base, reason: 'hold_in_force' };
  if (looksLikeIban(payee.payoutAccount) && !isIban(payee.payoutAccount)) return { ...base, reason: 'bad_iban' };
  // an account that is not an IBAN names no bank: without the directory's BIC no bank could route the transfer
  if (!isIban(payee.payoutAccount) && !payee.payoutBic) return { ...base, reason: 'no_bank_identifier' };
  // as the file names the creditor (at most 70 characters, pain001.ts); an empty name would refuse the whole draft
  const given = partyName(payee.legalName ?? '') ? (payee.legalName ?? '') : payee.name;
  if (!partyName(given)) return { ...base, reason: 'no_name' };
  // in the bank's character set, or not at all: never another name than the one the directory gives
  const creditorName = partyNameIn(given, input.charset ?? 'utf8');
  if (!creditorName) return { ...base, reason: 'name_not_in_charset' };
  const text = decimalText(still, row.currency);
  if (text === null) return { ...base, reason: 'not_whole_units' };
  if (valueDigits(text) > MAX_DIGITS) return { ...base, reason: 'not_fileable' };
  return {
    ...base,
    statementRun: input.runs[index]!.id,
    creditorName,
    creditorAccount: payee.payoutAccount,
    ...(payee.payoutBic ? { creditorAgent: payee.payoutBic } : {}),
    releasedHolds,
  };
}

const releasesOf = (input: PlanInput, asked: Asked, index: number, row: StatementPayoutRow): Release[] => [
  ...releasedInto(input, asked, index, row),
  ...releasedByRestoring(input, asked, index, row),
];

/**
 * Per sub-merchant and currency, what the latest statement holds of each discrepancy: of the month's runs and the
 * later months' (`runs` in month order), each month's latest cut last (a run regenerated at an older cut for proof
 * states what was in doubt then).
 */
export function latestHolds(runs: readonly StatementRun[]): Map<string, Map<string, bigint>> {
  const byCut = (a: StatementRun, b: StatementRun) =>
    a.month !== b.month
      ? a.month < b.month
        ? -1
        : 1
      : !a.cut || !b.cut
        ? 0
        : comparePositions(parsePosition(a.cut), parsePosition(b.cut));
  const latest = new Map<string, Map<string, bigint>>();
  for (const r of [...runs].sort(byCut)) for (const p of r.payouts) latest.set(keyOf(p), heldById(p.holds));
  return latest;
}

/**
 * The references of `lines` paying money a statement released from hold that is in doubt again, and that the
 * latest statement (`latestHolds`) does not hold again:
 * - its decision revoked or turned to withhold: unless the latest statement holds the discrepancy at more than the
 *   statement that released it kept. Such a statement took the money off already: a correction of the month
 *   lowered the month's asks by it, a later month's amount due by it (what that leaves below 0 is carried as owed
 *   back). Leaving the earlier ask out as well held the money twice, and the ask's undisputed rest with it, for
 *   ever once the discrepancy ended in withhold (found in review,
 *   `test/review14/payout-release-revoked-held-later.test.ts`);
 * - released with no decision (the sources had come to agree) and its discrepancy opened again by a later report
 *   (`openNow`): unless the latest statement names it (in its amount due already: a payment refunded since holds
 *   less, its discrepancy still open).
 */
export function releasesInDoubt(
  lines: readonly (Pick<PlannedLine, 'subMerchantId' | 'currency' | 'reference'> & { releases: readonly Release[] })[],
  latest: ReadonlyMap<string, ReadonlyMap<string, bigint>>,
  decisions: ReadonlyMap<string, DecisionNow>,
  openNow: ReadonlySet<string> = new Set(),
): Set<string> {
  const out = new Set<string>();
  for (const l of lines)
    for (const { hold, kept } of l.releases) {
      const id = hold.discrepancyId;
      const heldNow = latest.get(keyOf(l))?.get(id);
      const d = decisions.get(id) ?? 'open';
      if ((d === 'revoked' || d === 'withhold') && (heldNow === undefined || heldNow <= kept)) out.add(l.reference);
      if (d === 'open' && openNow.has(id) && heldNow === undefined) out.add(l.reference);
    }
  return out;
}

/**
 * The references of a waiting run's lines carrying money released from hold that is in doubt again now
 * (`releasesInDoubt`), each line's releases read again from the statement run it pays (and the holds it recorded,
 * should that run no longer release them: nothing kept).
 */
export function linesInDoubt(input: PlanInput, lines: readonly PlannedLine[]): Set<string> {
  const asked = askedOf(input);
  const withReleases = lines.map((l) => {
    const index = input.runs.findIndex((r) => r.id === l.statementRun);
    const row = index < 0 ? undefined : asked.rows[index]!.get(keyOf(l));
    const found = row?.reference === l.reference ? releasesOf(input, asked, index, row) : [];
    const recorded = l.releasedHolds
      .filter((h) => !found.some((r) => r.hold.discrepancyId === h.discrepancyId))
      .map((hold) => ({ hold, kept: 0n }));
    return { ...l, releases: [...found, ...recorded] };
  });
  return releasesInDoubt(withReleases, asked.latest, input.decisions, input.openNow);
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

/** A planned line with what the bank had sent back and paid (gross) on its reference when drafted, when any. */
function withBankBefore(line: PlannedLine, returned: bigint, gross: bigint): PlannedLine {
  return {
    ...line,
    ...(returned > 0n ? { repaysReturned: returned.toString() } : {}),
    ...(gross > 0n ? { bankPaidBefore: gross.toString() } : {}),
  };
}

export function planRun(input: PlanInput): Plan {
  const taken = referencesTaken(input.payoutRuns);
  const outside = paidOutsideRuns(input.payoutRuns);
  const asked = askedOf(input);
  const still = asked.after.at(-1) ?? new Map<string, bigint>();
  const lines: PlannedLine[] = [];
  const leftOut: LeftOut[] = [];
  const planned = new Set<string>();
  input.runs.forEach((run, index) => {
    for (const row of run.payouts) {
      const asks = row.reference === null ? undefined : still.get(row.reference);
      // nothing asked (a month stated for information or lower since, an unregistered receiver)
      if (row.reference === null || asks === undefined || planned.has(row.reference)) continue;
      // what runs took of it already: two statement runs at one cut (the month for all, then for one) ask one
      // reference twice, paid once; a reference paid lowered and raised since is paid the rest. What the bank
      // paid on it counts as taken, whichever run or hand paid it (a run cancelled after its file was executed):
      // the larger of the two, as a standing run's own debit is in both
      // A payment the creditor's bank sent back (an account closed) is owed again: what came back is no longer
      // taken by the run that paid it, and is drafted again under the same reference, once
      // Debits known to be outside the standing runs (paidOutsideRuns) are added to what the runs took: the money
      // committed is then what went out by hand and stayed out, plus what the runs pay (returns cancel out)
      const returned = input.paidByBank.returned?.get(row.reference) ?? 0n;
      const paid = input.paidByBank.get(row.reference) ?? 0n;
      const took = (taken.get(row.reference) ?? 0n) - returned + (outside.get(row.reference) ?? 0n);
      const rest = asks - max(took, paid);
      if (rest <= 0n) continue;
      planned.add(row.reference);
      const out = lineOrLeftOut(input, asked, index, row, rest);
      if ('reason' in out) leftOut.push(out);
      else lines.push(withBankBefore(out, returned, paid + returned));
    }
  });
  const statementRuns = [...new Set(lines.map((l) => l.statementRun))];
  return { lines, leftOut, ...holdsOfLastStatement(input), statementRuns };
}
