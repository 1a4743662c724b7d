import type { Sql } from '../../db/connect';
import { isSqlState } from '../../db/errors';
import type { BankConfig } from '../../config/bank';
import { loadPayoutInputs, type PayoutInputs } from '../../reconciliation/payouts/inputs';
import { judgePayouts, type PayoutStatus } from '../../reconciliation/payouts/judge';
import { matchPayouts } from '../../reconciliation/payouts/match';
import { DateTime } from 'luxon';
import { eventTime } from '../../reconciliation/payouts/tables';
import type { EventStore, Position } from '../../store/types';

/**
 * What was paid out to each sub-merchant as of a statement's cut: the payout matching (src/reconciliation/
 * payouts/match.ts) run again on the payouts projection's inputs written at or before the cut, so a statement
 * regenerated at the same position states the same payments. A debit that pays a statement counts positive, a
 * return of one negative, on its booking day.
 */

export interface PaidLine {
  readonly subMerchantId: string;
  readonly currency: string;
  readonly reference: string;
  /** booking day (YYYY-MM-DD) */
  readonly bookingDate: string;
  /** minor units: + paid, − returned */
  readonly amount: bigint;
}

const VIEWS = {
  schema: 'recon',
  expected: 'payout_expected',
  stillAsked: 'payout_still_asked',
  lines: 'payout_lines',
  payees: 'payout_payees',
};

/** The payouts projection's inputs at the cut; null when it was never built. */
async function inputsAt(sql: Sql, cut: Position): Promise<PayoutInputs | null> {
  try {
    return await loadPayoutInputs(sql, VIEWS, cut);
  } catch (e) {
    if (isSqlState(e, 'undefinedTable') || (e as { code?: string }).code === '3F000') return null;
    throw e;
  }
}

/** Paid lines at the cut, by booking day and reference; null when the payouts projection was never built. */
export async function paidOutAt(sql: Sql, cut: Position, windowDays: number): Promise<PaidLine[] | null> {
  const inputs = await inputsAt(sql, cut);
  if (inputs === null) return null;
  return paidLinesOf(inputs, windowDays);
}

function paidLinesOf(inputs: PayoutInputs, windowDays: number): PaidLine[] {
  const byRef = new Map(inputs.expected.map((p) => [p.reference, p]));
  const lineById = new Map(inputs.lines.map((l) => [l.id, l]));
  const out: PaidLine[] = [];
  for (const m of matchPayouts(inputs.expected, inputs.lines, { windowDays }).lines) {
    if ((m.role !== 'paid' && m.role !== 'returned') || m.reference === null) continue;
    const p = byRef.get(m.reference)!;
    const l = lineById.get(m.lineId)!;
    out.push({
      subMerchantId: p.subMerchantId,
      currency: p.currency,
      reference: p.reference,
      bookingDate: l.bookingDate,
      amount: m.role === 'paid' ? l.amount : -l.amount,
    });
  }
  return out.sort((a, b) =>
    a.bookingDate < b.bookingDate ? -1 : a.bookingDate > b.bookingDate ? 1 : a.reference < b.reference ? -1 : 1,
  );
}

/** Sum of the paid lines of a sub-merchant and currency booked in [from, to) (days, either open). */
export function paidBetween(
  lines: readonly PaidLine[],
  subMerchantId: string,
  currency: string,
  from: string | null,
  to: string | null,
): bigint {
  let sum = 0n;
  for (const l of lines) {
    if (l.subMerchantId !== subMerchantId || l.currency !== currency) continue;
    if ((from === null || l.bookingDate >= from) && (to === null || l.bookingDate < to)) sum += l.amount;
  }
  return sum;
}

/** What the bank did with one expected payout, as the payout matching says at a cut (docs/bank.md). */
export interface PayoutStatusLine {
  readonly reference: string;
  readonly subMerchantId: string;
  readonly payeeName: string;
  readonly currency: string;
  /** the statement month that asked for it */
  readonly month: string;
  /** what the statements still ask for it (minor units): its ask, lowered by a correction that stated the month lower */
  readonly amount: bigint;
  readonly status: PayoutStatus;
  /** debits that paid it less returns */
  readonly paidOut: bigint;
  readonly returned: bigint;
  /** paid again once paid in full (money to recover) */
  readonly duplicated: bigint;
  readonly dueOn: string;
  /** booking day, bank reference and account paid to of the debit that paid it (the last one) */
  readonly paidOn: string | null;
  readonly bankRef: string | null;
  readonly paidTo: string | null;
}

/**
 * Every expected payout recorded at or before the cut with its status (expected, paid, partial, missing,
 * returned, duplicated), matched and judged again on the inputs written at or before the cut. "Today" is the
 * latest day those inputs or the event at the cut carry (a run's issue day, a bank line's booking day, a sync's
 * completion), never the wall clock, so a statement regenerated at the same cut states the same. Null when the payouts projection was
 * never built.
 */
export async function payoutStatusesAt(
  sql: Sql,
  cut: Position,
  payouts: BankConfig['payouts'],
  /** the local day of the time the event at the cut carries (cutDay), when known */
  cutDay: string | null = null,
): Promise<PayoutStatusLine[] | null> {
  return (await payoutsJudgedAt(sql, cut, payouts, cutDay))?.lines ?? null;
}

/**
 * payoutStatusesAt, with the day they were judged at ("today": null when nothing carries a day yet) and, per
 * currency, the latest booking day of the bank's lines on the payouts accounts (how far its imported statements
 * reach).
 */
export async function payoutsJudgedAt(
  sql: Sql,
  cut: Position,
  payouts: BankConfig['payouts'],
  cutDay: string | null = null,
): Promise<{ lines: PayoutStatusLine[]; today: string | null; bookedThrough: Map<string, string> } | null> {
  const inputs = await inputsAt(sql, cut);
  if (inputs === null) return null;
  const months = await monthsAt(sql, cut);
  const days = [
    ...inputs.expected.map((p) => p.issuedOn),
    ...inputs.lines.map((l) => l.bookingDate),
    ...(cutDay ? [cutDay] : []),
  ].sort();
  const today = days[days.length - 1] ?? null;
  const bookedThrough = new Map<string, string>();
  for (const l of inputs.lines)
    if (l.bookingDate > (bookedThrough.get(l.currency) ?? '')) bookedThrough.set(l.currency, l.bookingDate);
  const matches = matchPayouts(inputs.expected, inputs.lines, { windowDays: payouts.matchWindowDays });
  const j = judgePayouts(inputs.expected, inputs.lines, matches.lines, { today, dueDays: payouts.dueDays });
  const lines = j.payouts.map((s) => ({
    reference: s.payout.reference,
    subMerchantId: s.payout.subMerchantId,
    payeeName: s.payout.payeeName,
    currency: s.payout.currency,
    month: months.get(s.payout.reference) ?? '',
    amount: s.payout.amount,
    status: s.status,
    paidOut: s.paidOut,
    returned: s.returned,
    duplicated: s.duplicated,
    dueOn: s.dueOn,
    paidOn: s.paidOn,
    bankRef: s.bankRef,
    paidTo: s.paidTo,
  }));
  return { lines, today, bookedThrough };
}

async function monthsAt(sql: Sql, cut: Position): Promise<Map<string, string>> {
  const rows = await sql.unsafe<{ reference: string; month: string }[]>(
    `select reference, month from ${VIEWS.schema}.${VIEWS.expected}
     where (commit_pos, prepare_pos) <= ($1::numeric, $2::numeric)`,
    [cut.commit.toString(), cut.prepare.toString()],
  );
  return new Map(rows.map((r) => [r.reference, r.month]));
}

/** The local day of the time the event at a position carries (payouts/tables.ts eventTime), or null. */
export async function cutDay(store: EventStore, cut: Position, timezone: string): Promise<string | null> {
  const e = await store.readAt(cut);
  const t = e ? eventTime(e, timezone) : null;
  return t === null ? null : DateTime.fromMillis(t, { zone: timezone }).toISODate();
}
