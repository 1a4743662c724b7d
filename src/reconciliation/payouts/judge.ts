import { DateTime } from 'luxon';
import type { DiscrepancyTypeOf } from '../discrepancies/registry';
import type { ExpectedPayout, LineMatch, PayoutBankLine } from './match';

/**
 * What the matches mean for each expected payout (its status) and which payout discrepancies they raise.
 * "Now" is the projection's clock (the latest event time seen, never the wall clock), given as a local day,
 * so a payout turns missing at the same point of the log on every replay.
 */

/**
 * expected: nothing paid, not yet due; paid: paid in full; partial: a part paid; missing: nothing paid by the
 * due day; returned: paid, and a return took it below the amount; duplicated: paid in full, and paid again.
 */
export const PAYOUT_STATUSES = ['expected', 'paid', 'partial', 'missing', 'returned', 'duplicated'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export interface PayoutState {
  readonly payout: ExpectedPayout;
  /** debits that paid it, less what came back */
  readonly paidOut: bigint;
  readonly returned: bigint;
  /** debits that paid it again once it was paid in full (money to recover) */
  readonly duplicated: bigint;
  readonly status: PayoutStatus;
  /** last local day to pay it (issue + dueDays) */
  readonly dueOn: string;
  /** the booking day of the debit that completed it, or of the last one */
  readonly paidOn: string | null;
  /** that debit's bank reference and the account it paid to (the counterparty's), as the bank wrote them */
  readonly bankRef: string | null;
  readonly paidTo: string | null;
  readonly lineIds: readonly string[];
}

/** The payouts leg's types, from the registry of types. */
export type PayoutDiscrepancyType = DiscrepancyTypeOf<'payouts'>;

export interface PayoutDiscrepancyDraft {
  readonly type: PayoutDiscrepancyType;
  /** what names it for good: the reference, or the bank line for a line of its own */
  readonly key: string;
  readonly status: 'open' | 'resolved';
  readonly payout: ExpectedPayout | null;
  readonly line: PayoutBankLine | null;
  /** local day it happened (the due day, or the bank line's booking day) */
  readonly occurredOn: string;
  /** the day it was resolved (paid late, paid in full), null while open */
  readonly resolvedOn: string | null;
  readonly values: Record<string, string | null>;
  readonly evidence: readonly string[];
}

export interface Judgement {
  readonly payouts: readonly PayoutState[];
  readonly discrepancies: readonly PayoutDiscrepancyDraft[];
}

const plusDays = (day: string, n: number) => DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: n }).toISODate()!;

function stateOf(
  p: ExpectedPayout,
  mine: readonly { m: LineMatch; l: PayoutBankLine }[],
  today: string | null,
  dueDays: number,
): PayoutState {
  const debits = mine.filter((x) => x.m.role === 'paid');
  const returns = mine.filter((x) => x.m.role === 'returned');
  const gross = debits.reduce((s, x) => s + x.l.amount, 0n);
  const returned = returns.reduce((s, x) => s + x.l.amount, 0n);
  const duplicated = mine.filter((x) => x.m.role === 'duplicate').reduce((s, x) => s + x.l.amount, 0n);
  const paidOut = gross - returned;
  const dueOn = plusDays(p.issuedOn, dueDays);
  const late = today !== null && today > dueOn;
  const status: PayoutStatus =
    returned > 0n && paidOut < p.amount
      ? 'returned'
      : paidOut >= p.amount
        ? duplicated > 0n
          ? 'duplicated'
          : 'paid'
        : paidOut > 0n
          ? 'partial'
          : late
            ? 'missing'
            : 'expected';
  const lastDebit = debits[debits.length - 1];
  return {
    payout: p,
    paidOut,
    returned,
    duplicated,
    status,
    dueOn,
    paidOn: lastDebit ? lastDebit.l.bookingDate : null,
    bankRef: lastDebit?.l.bankRef ?? null,
    paidTo: lastDebit ? lastDebit.l.counterpartyAccount : null,
    lineIds: mine.map((x) => x.l.id),
  };
}

function payoutDiscrepancies(s: PayoutState, today: string | null): PayoutDiscrepancyDraft[] {
  const p = s.payout;
  const out: PayoutDiscrepancyDraft[] = [];
  const base = { key: p.reference, payout: p, line: null, evidence: [p.eventId, ...s.lineIds] };
  const values = {
    reference: p.reference,
    expected: p.amount.toString(),
    paid_out: s.paidOut.toString(),
    returned: s.returned.toString(),
    due_on: s.dueOn,
  };
  // Missing: nothing paid by the due day. Paid later: the same discrepancy, resolved on the paying day.
  const paidLate = s.paidOn !== null && s.paidOn > s.dueOn;
  // (a payout paid and returned is payout_returned, not missing)
  if ((s.paidOut + s.returned <= 0n && today !== null && today > s.dueOn) || paidLate) {
    const resolvedOn = s.paidOut > 0n ? s.paidOn : null;
    out.push({
      ...base,
      type: 'payout_missing',
      status: resolvedOn ? 'resolved' : 'open',
      occurredOn: s.dueOn,
      resolvedOn,
      values,
    });
  }
  // A difference: more than stated, or (once due) a part only.
  const partialDue = s.paidOut > 0n && s.paidOut < p.amount && today !== null && today > s.dueOn && s.returned === 0n;
  if (s.paidOut > p.amount || partialDue) {
    out.push({
      ...base,
      type: 'payout_amount_mismatch',
      status: 'open',
      occurredOn: s.paidOn ?? s.dueOn,
      resolvedOn: null,
      values,
    });
  }
  return out;
}

function lineDiscrepancy(m: LineMatch, l: PayoutBankLine, p: ExpectedPayout | null): PayoutDiscrepancyDraft | null {
  const type: PayoutDiscrepancyType | null =
    m.role === 'unexpected'
      ? 'payout_unexpected'
      : m.role === 'duplicate'
        ? 'payout_duplicate'
        : m.role === 'returned'
          ? 'payout_returned'
          : null;
  if (!type) return null;
  return {
    type,
    key: `bank:${l.id}`,
    status: 'open',
    payout: p,
    line: l,
    occurredOn: l.bookingDate,
    resolvedOn: null,
    values: {
      reference: m.reference,
      amount: l.amount.toString(),
      account: l.accountId,
      booking_date: l.bookingDate,
      counterparty_name: l.counterpartyName,
      counterparty_account: l.counterpartyAccount,
      remittance: l.remittance,
      end_to_end_id: l.endToEndId,
    },
    evidence: p ? [l.id, p.eventId] : [l.id],
  };
}

/** Every payout's status and every payout discrepancy, from the matches at a local day (`today`, null: no clock yet). */
export function judgePayouts(
  expected: readonly ExpectedPayout[],
  lines: readonly PayoutBankLine[],
  matches: readonly LineMatch[],
  opts: { today: string | null; dueDays: number },
): Judgement {
  const lineById = new Map(lines.map((l) => [l.id, l]));
  const byRef = new Map(expected.map((p) => [p.reference, p]));
  const mineOf = new Map<string, { m: LineMatch; l: PayoutBankLine }[]>();
  for (const m of matches) {
    if (m.reference === null) continue;
    mineOf.set(m.reference, [...(mineOf.get(m.reference) ?? []), { m, l: lineById.get(m.lineId)! }]);
  }
  // an ask a correction lowered to nothing is no payout unless something paid it (docs/bank.md, "A month stated lower")
  const payouts = expected
    .filter((p) => p.amount > 0n || mineOf.has(p.reference))
    .sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0))
    .map((p) => stateOf(p, mineOf.get(p.reference) ?? [], opts.today, opts.dueDays));
  const discrepancies = [
    ...payouts.flatMap((s) => payoutDiscrepancies(s, opts.today)),
    ...matches.flatMap((m) => {
      const d = lineDiscrepancy(m, lineById.get(m.lineId)!, m.reference ? (byRef.get(m.reference) ?? null) : null);
      return d ? [d] : [];
    }),
  ];
  return { payouts, discrepancies };
}
