import { addBusinessDays, businessDaysAfter } from '../../business-days';
import type { DueDay } from './expected';

/**
 * Matching the settlements the PSP owes (due days) to the credits on `settlement` accounts, one currency at
 * a time. A pure function of the sets it is given: inputs are put in a canonical order first (due days by
 * day, credits by booking date, amount and event id), so the order events were imported in never changes
 * a match. Rules (docs/bank.md, "The cash leg"):
 *
 * 1. A credit pays a run of consecutive open due days (several settlement days paid at once) whose sum
 *    equals it, or exceeds it by at most the currency's tolerance (a bank charge, booked as a bank fee):
 *    every credit first among the runs it equals, then the credits left within the tolerance.
 *    A credit can pay a due day from the day after its last activity day (or from the settlement day
 *    itself, with a lag of 0) up to `lateBusinessDays` business days after the day it was due. Credits are taken in booking order, each with the earliest
 *    run that fits; a credit left then takes days another took when that one has another run (`handOver`).
 * 2. A credit that pays no run is then taken as a short payment of the earliest open due day it can pay,
 *    when it is at least half of it (less is more likely another payment than a short settlement); a day
 *    another credit can pay only is left to it (`shortsOf`).
 * 3. A short payment's rest paid by a second credit (a transfer the bank or the PSP split in two): a credit
 *    left that can pay the day and comes to the shortfall, or less by at most the tolerance, pays the rest.
 *    The day is then paid in full by the two (`restOf` names the first), neither short.
 * 4. What is left: due days past their deadline on a statement that covers it are missing (before that
 *    they are in transit), credits are unexpected. A bank line pays at most one run; a due day is paid by
 *    one credit, or by two as in 3.
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
  /**
   * the bank's charge deducted from it (bank-charges.ts `deductedChargeOf`): `amount` is what the payer sent, the
   * statement credited `amount − charge`; absent when none
   */
  readonly charge?: bigint;
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
  /** the sum of the days' amounts (of a day paid in two credits: the part this one paid) */
  readonly expected: bigint;
  /** the rest of a day another credit paid first (rule 3): that credit's id; the days' fees are booked on it */
  readonly restOf?: string;
  /** the tolerance absorbed (expected − received) on an accepted match; 0 on a short one */
  readonly bankFee: bigint;
  /** expected − received on a short match; 0 otherwise */
  readonly shortfall: bigint;
  /** the due days paid after the day they were due, with the business days late (of a day paid in two: on the later credit) */
  readonly late: ReadonlyArray<{ readonly day: string; readonly businessDays: number }>;
}

export interface SettlementJudgement {
  readonly matches: readonly SettlementMatch[];
  /** open due days whose deadline a statement of the currency has passed */
  readonly missing: readonly DueDay[];
  /** open due days still within their deadline (or beyond what any statement covers) */
  readonly inTransit: readonly DueDay[];
  readonly unexpected: readonly BankCredit[];
  /**
   * credits the bank deducted its charge from and took back at what it credited (amount − charge): the charge
   * was never the marketplace's either, so the journal reverses its booking (charge-bookings.ts)
   */
  readonly chargesReturned: readonly BankCredit[];
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

/** The earliest run of open due days (indices into `open`) a credit pays within `tolerance`. */
function findRun(c: BankCredit, open: readonly DueDay[], rules: MatchRules, tolerance: bigint): number[] | null {
  for (let i = 0; i < open.length; i++) {
    if (!canPay(c, open[i]!, rules)) continue;
    let sum = 0n;
    for (let j = i; j < open.length && collected(c, open[j]!); j++) {
      sum += open[j]!.amount;
      if (sum > c.amount + tolerance) break;
      if (sum >= c.amount) return Array.from({ length: j - i + 1 }, (_, k) => i + k);
    }
  }
  return null;
}

/**
 * The credits less those the bank took back: each reversal (a debit marked as a return: MT940 `RC`, camt
 * `RvslInd`) cancels the latest credit of its account and amount booked on or before it, so money reversed out
 * of the account pays no due day (which stays open: in transit, then missing). A reversal with no such credit
 * cancels nothing. Of a credit the bank deducted its charge from, either amount is its own: what was sent, or
 * what was credited (then its charge is returned with it: `chargesReturned`).
 */
export function withoutReversed(
  credits: readonly BankCredit[],
  reversals: readonly BankCredit[],
): { kept: BankCredit[]; chargesReturned: BankCredit[] } {
  const kept = [...credits].sort(compareCredits);
  const chargesReturned: BankCredit[] = [];
  const ofAmount = (c: BankCredit, amount: bigint) =>
    c.amount === amount || (c.charge !== undefined && c.amount - c.charge === amount);
  for (const r of [...reversals].sort(compareCredits)) {
    const k = kept.findLastIndex(
      (c) => c.accountId === r.accountId && ofAmount(c, r.amount) && c.bookingDate <= r.bookingDate,
    );
    if (k < 0) continue;
    const [c] = kept.splice(k, 1);
    if (c!.charge !== undefined && c!.amount - c!.charge === r.amount) chargesReturned.push(c!);
  }
  return { kept, chargesReturned: chargesReturned.sort(compareCredits) };
}

/** A credit paying a run of due days in full (rule 1): what the tolerance absorbed is its bank fee. */
function runMatch(c: BankCredit, days: readonly DueDay[], rules: MatchRules): SettlementMatch {
  const expected = days.reduce((s, d) => s + d.amount, 0n);
  return { credit: c, days, expected, bankFee: expected - c.amount, shortfall: 0n, late: lateness(c, days, rules) };
}

/** The run (indices into `open`) a credit pays: the earliest it equals, else the earliest within the tolerance. */
function runOf(c: BankCredit, open: readonly DueDay[], rules: MatchRules): number[] | null {
  return findRun(c, open, rules, 0n) ?? (rules.tolerance > 0n ? findRun(c, open, rules, rules.tolerance) : null);
}

/**
 * Rule 1: every credit first with the earliest run it equals, then the credits left with the earliest within the
 * tolerance (a credit equal to a day is that day's, never another day's less a bank charge); then `handOver`.
 */
function payRuns(sorted: readonly BankCredit[], due: readonly DueDay[], rules: MatchRules) {
  let open = [...due];
  const matches: SettlementMatch[] = [];
  let left: BankCredit[] = [...sorted];
  for (const tolerance of rules.tolerance > 0n ? [0n, rules.tolerance] : [0n]) {
    const pending = left;
    left = [];
    for (const c of pending) {
      const run = findRun(c, open, rules, tolerance);
      if (!run) {
        left.push(c);
        continue;
      }
      matches.push(
        runMatch(
          c,
          run.map((k) => open[k]!),
          rules,
        ),
      );
      open = open.filter((_, k) => !run.includes(k));
    }
  }
  return handOver(matches, left, open, rules);
}

const byDay = (a: DueDay, b: DueDay) => byString(a.day, b.day);

/** A credit taken as a short payment of a day (rule 2): at least half of it, less than it. */
function fitsShort(c: BankCredit, d: DueDay, rules: MatchRules): boolean {
  return canPay(c, d, rules) && c.amount < d.amount && c.amount * 2n >= d.amount;
}

function shortMatch(c: BankCredit, d: DueDay, rules: MatchRules): SettlementMatch {
  return {
    credit: c,
    days: [d],
    expected: d.amount,
    bankFee: 0n,
    shortfall: d.amount - c.amount,
    late: lateness(c, [d], rules),
  };
}

interface TakeOver {
  readonly mine: SettlementMatch;
  readonly theirs: SettlementMatch;
  readonly open: DueDay[];
}

/**
 * Credit `c`, left with nothing, takes days `had` took when `had`'s credit pays another run of the days then open:
 * a run of them (`short` false), else one of them short when `c` pays no open day even short (`short` true).
 */
function takeOver(
  c: BankCredit,
  had: SettlementMatch,
  open: readonly DueDay[],
  rules: MatchRules,
  short: boolean,
): TakeOver | null {
  // only a credit booked within reach of the days can pay them (keeps a long history cheap)
  if (!had.days.some((d) => canPay(c, d, rules))) return null;
  const freed = [...open, ...had.days].sort(byDay);
  let mine: number[] | null;
  if (!short) mine = runOf(c, freed, rules);
  else {
    const k = freed.findIndex((d) => had.days.includes(d) && fitsShort(c, d, rules));
    mine = k < 0 || open.some((d) => fitsShort(c, d, rules)) ? null : [k];
  }
  if (!mine?.some((k) => had.days.includes(freed[k]!))) return null;
  const taken = mine;
  const rest = freed.filter((_, k) => !taken.includes(k));
  const other = runOf(had.credit, rest, rules);
  if (!other) return null;
  const days = taken.map((k) => freed[k]!);
  return {
    mine: short ? shortMatch(c, days[0]!, rules) : runMatch(c, days, rules),
    theirs: runMatch(
      had.credit,
      other.map((k) => rest[k]!),
      rules,
    ),
    open: rest.filter((_, k) => !other.includes(k)),
  };
}

/**
 * Rule 1, taken greedily, can leave a credit with no run because an earlier one took days it pays while that one
 * had another run: of Monday 500.00, Tuesday 500.00 and Wednesday 1,002.00, a 1,000.00 equal to Monday + Tuesday
 * took both, and the 499.00 and 498.50 that pay them were unexpected, Wednesday missing. A credit left takes such
 * days (a hand-over) when the credit that had them pays another run of what is then open: first as a run of its
 * own, then, for a credit that pays no open day even short, as a short payment of one of them (rule 2: of Wednesday
 * 1,000.00, the 480.00 and 490.00 pay Monday and Tuesday short). One more credit paid each time, so it ends.
 */
function handOver(matches: SettlementMatch[], left: BankCredit[], open: DueDay[], rules: MatchRules) {
  // the last day each match's days can be paid on (a day's deadline grows with the day): most pairs end here
  const reachOf = (m: SettlementMatch) => deadlineOf(m.days[m.days.length - 1]!, rules);
  let reach = matches.map(reachOf);
  for (const short of [false, true]) {
    for (let i = 0; i < left.length; i++) {
      for (let m = 0; m < matches.length; m++) {
        if (left[i]!.bookingDate > reach[m]!) continue;
        const t = takeOver(left[i]!, matches[m]!, open, rules, short);
        if (!t) continue;
        matches.splice(m, 1, t.theirs);
        matches.push(t.mine);
        open = t.open;
        left.splice(i, 1);
        reach = matches.map(reachOf);
        i = -1; // days moved: a credit passed over earlier may fit now
        break;
      }
    }
  }
  return { matches, left, open };
}

export function judgeSettlements(
  due: readonly DueDay[],
  credits: readonly BankCredit[],
  coveredThrough: string | null,
  rules: MatchRules,
  reversals: readonly BankCredit[] = [],
): SettlementJudgement {
  let open = [...due].sort((a, b) => byString(a.day, b.day));
  const { kept: sorted, chargesReturned } = withoutReversed(credits, reversals);
  const runs = payRuns(sorted, open, rules);
  const { matches, left } = runs;
  open = runs.open;
  const unexpected: BankCredit[] = [];
  const shortOf = shortsOf(left, open, rules);
  left.forEach((c, i) => {
    const k = shortOf.get(i);
    if (k === undefined) {
      unexpected.push(c);
      return;
    }
    matches.push(shortMatch(c, open[k]!, rules));
  });
  const taken = new Set(shortOf.values());
  open = open.filter((_, k) => !taken.has(k));
  const paid = payRests(matches, unexpected, rules);
  paid.sort((a, b) => compareCredits(a.credit, b.credit));
  const missing: DueDay[] = [];
  const inTransit: DueDay[] = [];
  for (const d of open)
    (coveredThrough !== null && coveredThrough >= deadlineOf(d, rules) ? missing : inTransit).push(d);
  return { matches: paid, missing, inTransit, unexpected, chargesReturned };
}

/**
 * Rule 2: which open due day (its index) each credit left (by index) pays short. As many credits paired as can
 * be: a credit takes the earliest day it can pay that no credit took, else one taken by a credit that can pay
 * another (an augmenting path hands the day over). Taken in booking order, each credit alone with the earliest
 * day it fits, a short credit that fitted two days took the earlier and left the credit that fitted only that
 * one unexpected, and the other day missing.
 */
function shortsOf(credits: readonly BankCredit[], open: readonly DueDay[], rules: MatchRules): Map<number, number> {
  const fits = credits.map((c) => open.map((_, k) => k).filter((k) => fitsShort(c, open[k]!, rules)));
  const owner = new Map<number, number>();
  const pair = (i: number, seen: Set<number>): boolean => {
    const free = fits[i]!.find((k) => !owner.has(k));
    if (free !== undefined) {
      owner.set(free, i);
      return true;
    }
    for (const k of fits[i]!) {
      if (seen.has(k)) continue;
      seen.add(k);
      if (pair(owner.get(k)!, seen)) {
        owner.set(k, i);
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < credits.length; i++) pair(i, new Set());
  return new Map([...owner].map(([k, i]) => [i, k]));
}

/**
 * Rule 3: the short payments whose rest an unexpected credit pays, within tolerance, become the first part of a
 * day paid in two; the credits taken leave `unexpected`. Each short prefers the credit closest to its rest, and
 * one an earlier short took is handed over when that short has another that fits (`restsOf`): the first that
 * fitted took the rest of another day. The day is late if its money was complete after it was due: the later
 * credit carries that lateness, so a late day is one finding.
 */
function payRests(matches: SettlementMatch[], unexpected: BankCredit[], rules: MatchRules): SettlementMatch[] {
  const shorts = matches.filter((m) => m.shortfall > 0n).sort((a, b) => compareCredits(a.credit, b.credit));
  const restOf = restsOf(shorts, unexpected, rules);
  const taken = new Set(restOf.values());
  const out: SettlementMatch[] = matches.filter((m) => !(m.shortfall > 0n));
  shorts.forEach((m, s) => {
    const k = restOf.get(s);
    if (k === undefined) {
      out.push(m);
      return;
    }
    const d = m.days[0]!;
    const rest = m.shortfall;
    const second = unexpected[k]!;
    const laterIsSecond = compareCredits(second, m.credit) > 0;
    const late = lateness(laterIsSecond ? second : m.credit, [d], rules);
    out.push({ ...m, expected: m.credit.amount, shortfall: 0n, late: laterIsSecond ? [] : late });
    out.push({
      credit: second,
      days: [d],
      expected: rest,
      bankFee: rest - second.amount,
      shortfall: 0n,
      late: laterIsSecond ? late : [],
      restOf: m.credit.id,
    });
  });
  const left = unexpected.filter((_, i) => !taken.has(i));
  unexpected.splice(0, unexpected.length, ...left);
  return out;
}

/**
 * Which unexpected credit (its index) pays the rest of each short (by index): as many shorts paired as can be
 * (an augmenting path hands a credit over), each trying the credits that fit closest first, then in credit order.
 */
function restsOf(shorts: readonly SettlementMatch[], unexpected: readonly BankCredit[], rules: MatchRules) {
  const fits = shorts.map((m) => {
    const d = m.days[0]!;
    const gap = (i: number) => m.shortfall - unexpected[i]!.amount;
    return unexpected
      .map((_, i) => i)
      .filter((i) => {
        const c = unexpected[i]!;
        return canPay(c, d, rules) && gap(i) >= 0n && c.amount + rules.tolerance >= m.shortfall;
      })
      .sort((x, y) => (gap(x) < gap(y) ? -1 : gap(x) > gap(y) ? 1 : x - y));
  });
  const owner = new Map<number, number>();
  const pair = (s: number, seen: Set<number>): boolean => {
    for (const k of fits[s]!) {
      if (seen.has(k)) continue;
      seen.add(k);
      const o = owner.get(k);
      if (o === undefined || pair(o, seen)) {
        owner.set(k, s);
        return true;
      }
    }
    return false;
  };
  for (let s = 0; s < shorts.length; s++) pair(s, new Set());
  return new Map([...owner].map(([k, s]) => [s, k]));
}
