import { addBusinessDays, businessDaysAfter } from '../../business-days';
import type { DueDay } from './expected';

/**
 * Matching the settlements the PSP owes (due days) to the credits on `settlement` accounts, one currency at
 * a time. A pure function of the sets it is given: inputs are put in a canonical order first (due days by
 * day, credits by booking date, amount and event id), so the order events were imported in never changes
 * a match. Rules (docs/bank.md, "The cash leg"):
 *
 * 1. A credit pays a run of consecutive open due days (several settlement days paid at once) whose sum
 *    equals it, or exceeds it by at most the currency's tolerance (a bank charge, booked as a bank fee).
 *    A credit can pay a due day from the day after its last activity day (or from the settlement day
 *    itself, with a lag of 0) up to `lateBusinessDays` business days after the day it was due. Credits are taken in booking order, each with the earliest
 *    run that fits.
 * 2. A credit that pays no run is then taken as a short payment of the earliest open due day it can pay,
 *    when it is at least half of it (less is more likely another payment than a short settlement).
 * 3. What is left: due days past their deadline on a statement that covers it are missing (before that
 *    they are in transit), credits are unexpected. A bank line pays at most one run; a due day is paid by
 *    at most one credit.
 * A credit the bank reversed since (`withoutReversed`) pays nothing.
 */

export interface BankCredit {
  /** the BankEntryBooked event's id */
  readonly id: string;
  readonly accountId: string;
  readonly currency: string;
  readonly bookingDate: string;
  readonly amount: bigint;
  readonly bankRef: string | null;
}

export interface MatchRules {
  /** shortfall per credit absorbed as a bank charge (minor units) */
  readonly tolerance: bigint;
  readonly lateBusinessDays: number;
  readonly holidays: ReadonlySet<string>;
}

export interface SettlementMatch {
  readonly credit: BankCredit;
  readonly days: readonly DueDay[];
  /** the sum of the days' amounts */
  readonly expected: bigint;
  /** the tolerance absorbed (expected − received) on an accepted match; 0 on a short one */
  readonly bankFee: bigint;
  /** expected − received on a short match; 0 otherwise */
  readonly shortfall: bigint;
  /** the due days paid after the day they were due, with the business days late */
  readonly late: ReadonlyArray<{ readonly day: string; readonly businessDays: number }>;
}

export interface SettlementJudgement {
  readonly matches: readonly SettlementMatch[];
  /** open due days whose deadline a statement of the currency has passed */
  readonly missing: readonly DueDay[];
  /** open due days still within their deadline (or beyond what any statement covers) */
  readonly inTransit: readonly DueDay[];
  readonly unexpected: readonly BankCredit[];
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function compareCredits(a: BankCredit, b: BankCredit): number {
  return (
    byString(a.bookingDate, b.bookingDate) ||
    (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0) ||
    byString(a.id, b.id)
  );
}

/** The last day a due day's credit may be booked on and still pay it. */
export function deadlineOf(d: DueDay, rules: Pick<MatchRules, 'lateBusinessDays' | 'holidays'>): string {
  return addBusinessDays(d.day, rules.lateBusinessDays, rules.holidays);
}

/** The money of the day was collected: booked after its last activity day, or on its settlement day (lag 0). */
function collected(c: BankCredit, d: DueDay): boolean {
  return c.bookingDate > d.lastActivity || c.bookingDate >= d.day;
}

function canPay(c: BankCredit, d: DueDay, rules: MatchRules): boolean {
  return collected(c, d) && c.bookingDate <= deadlineOf(d, rules);
}

function lateness(c: BankCredit, days: readonly DueDay[], rules: MatchRules) {
  return days
    .filter((d) => c.bookingDate > d.day)
    .map((d) => ({ day: d.day, businessDays: Math.max(1, businessDaysAfter(d.day, c.bookingDate, rules.holidays)) }));
}

/** The earliest run of open due days (indices into `open`) a credit pays within tolerance. */
function findRun(c: BankCredit, open: readonly DueDay[], rules: MatchRules): number[] | null {
  for (let i = 0; i < open.length; i++) {
    if (!canPay(c, open[i]!, rules)) continue;
    let sum = 0n;
    for (let j = i; j < open.length && collected(c, open[j]!); j++) {
      sum += open[j]!.amount;
      if (sum > c.amount + rules.tolerance) break;
      if (sum >= c.amount) return Array.from({ length: j - i + 1 }, (_, k) => i + k);
    }
  }
  return null;
}

/**
 * The credits less those the bank took back: each reversal (a debit marked as a return: MT940 `RC`, camt
 * `RvslInd`) cancels the latest credit of its account and amount booked on or before it, so money reversed out
 * of the account pays no due day (which stays open: in transit, then missing). A reversal with no such credit
 * cancels nothing.
 */
export function withoutReversed(credits: readonly BankCredit[], reversals: readonly BankCredit[]): BankCredit[] {
  const kept = [...credits].sort(compareCredits);
  for (const r of [...reversals].sort(compareCredits)) {
    const k = kept.findLastIndex(
      (c) => c.accountId === r.accountId && c.amount === r.amount && c.bookingDate <= r.bookingDate,
    );
    if (k >= 0) kept.splice(k, 1);
  }
  return kept;
}

export function judgeSettlements(
  due: readonly DueDay[],
  credits: readonly BankCredit[],
  coveredThrough: string | null,
  rules: MatchRules,
  reversals: readonly BankCredit[] = [],
): SettlementJudgement {
  let open = [...due].sort((a, b) => byString(a.day, b.day));
  const sorted = withoutReversed(credits, reversals);
  const matches: SettlementMatch[] = [];
  const left: BankCredit[] = [];
  for (const c of sorted) {
    const run = findRun(c, open, rules);
    if (!run) {
      left.push(c);
      continue;
    }
    const days = run.map((k) => open[k]!);
    const expected = days.reduce((s, d) => s + d.amount, 0n);
    matches.push({
      credit: c,
      days,
      expected,
      bankFee: expected - c.amount,
      shortfall: 0n,
      late: lateness(c, days, rules),
    });
    open = open.filter((_, k) => !run.includes(k));
  }
  const unexpected: BankCredit[] = [];
  for (const c of left) {
    const k = open.findIndex((d) => canPay(c, d, rules) && c.amount < d.amount && c.amount * 2n >= d.amount);
    if (k < 0) {
      unexpected.push(c);
      continue;
    }
    const d = open[k]!;
    matches.push({
      credit: c,
      days: [d],
      expected: d.amount,
      bankFee: 0n,
      shortfall: d.amount - c.amount,
      late: lateness(c, [d], rules),
    });
    open = open.filter((_, i) => i !== k);
  }
  matches.sort((a, b) => compareCredits(a.credit, b.credit));
  const missing: DueDay[] = [];
  const inTransit: DueDay[] = [];
  for (const d of open)
    (coveredThrough !== null && coveredThrough >= deadlineOf(d, rules) ? missing : inTransit).push(d);
  return { matches, missing, inTransit, unexpected };
}
