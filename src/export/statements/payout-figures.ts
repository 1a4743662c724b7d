import { bankConfigFromEnv } from '../../config/bank-from-env';
import type { BankConfig } from '../../config/bank';
import type { Sql } from '../../db/connect';
import type { Logger } from '../../log';
import type { EventStore, Position } from '../../store/types';
import { type HeldItem, heldAt } from '../payouts/holds';
import {
  cutDay,
  type PaidLine,
  type PayoutStatusLine,
  paidBetween,
  paidOutAt,
  payoutStatusesAt,
} from '../payouts/paid-out';
import { closingKey, type IssuedRun, previousRunOf } from './previous';
import { monthRange, type StatementFigures } from './workbooks';

/**
 * The readings a statement takes beside the ledger: what was paid out and what the bank did with each payout
 * asked for (payouts projection), and what is held (reconciliation's discrepancies), all at the cut. A read model that was never built gives nothing and
 * is logged: `recon statements` runs after `recon project`, which builds them all.
 */
export async function payoutFigures(
  deps: { sql: Sql; store: EventStore; log: Logger; bank?: BankConfig; timezone?: string },
  cut: Position,
  /** the statement's month: a hold is what its payment adds up to the month's end */
  period?: { month: string; timezone: string },
): Promise<{ lines: PaidLine[]; held: HeldItem[]; statuses: PayoutStatusLine[] }> {
  const bank = deps.bank ?? bankConfigFromEnv();
  const lines = await paidLinesAt({ sql: deps.sql, bank }, cut);
  if (lines === null) deps.log.warn('statements: the payouts projection is not built; no payout is deducted');
  const periodEnd = period ? monthRange(period.month, period.timezone).to.toJSDate() : undefined;
  const held = await heldAt(deps.sql, deps.store, cut, periodEnd ? { periodEnd } : {});
  if (held === null) deps.log.warn('statements: the reconciliation is not built; no money is held');
  // what the bank did with every payout asked for so far, at the same cut (the Payouts index and each statement)
  const day = deps.timezone ? await cutDay(deps.store, cut, deps.timezone) : null;
  const statuses = lines === null ? [] : ((await payoutStatusesAt(deps.sql, cut, bank.payouts, day)) ?? []);
  return { lines: lines ?? [], held: held ?? [], statuses };
}

/** What was paid out as of a cut (paid-out.ts); null when the payouts projection was never built. */
export function paidLinesAt(deps: { sql: Sql; bank?: BankConfig }, cut: Position): Promise<PaidLine[] | null> {
  return paidOutAt(deps.sql, cut, (deps.bank ?? bankConfigFromEnv()).payouts.matchWindowDays);
}

/**
 * What a statement deducts as paid out beyond its month's own payouts: those its previous statement did not (its
 * closing deducted what was paid out by that month's end, as known at its cut). They are payouts booked in months
 * never stated (the previous statement is older than last month's), and payouts the bank reported only after the
 * previous statement was cut. The ledger's opening has them deducted already, so they would show as adjustments,
 * which no entry explains (the run was refused: EXPORT_BRIDGE_MISMATCH) and which the amount due would ask back
 * though they paid what an earlier statement asked. They are moved to the bridge's "Paid out" instead, listed
 * on its sheet. `lines`: those payouts (+ paid, − returned or no longer known), per sub-merchant and currency.
 */
export async function paidSincePrevious<F extends StatementFigures>(
  figures: readonly F[],
  runs: readonly IssuedRun[],
  o: {
    month: string;
    timezone: string;
    paidNow: readonly PaidLine[];
    /** what a previous run's closings deducted as paid out (as known at its cut) */
    paidAt(run: IssuedRun): Promise<readonly PaidLine[] | null>;
    namesOf(subMerchantId: string): Promise<readonly string[]>;
  },
): Promise<{ figures: F[]; lines: PaidLine[] }> {
  const start = monthRange(o.month, o.timezone).from.toISODate()!;
  const out: F[] = [];
  const lines: PaidLine[] = [];
  for (const f of figures) {
    const run = f.previousStatement
      ? previousRunOf(runs, f.subMerchantId, await o.namesOf(f.subMerchantId))
      : undefined;
    if (!run) {
      out.push(f);
      continue;
    }
    const statedTo = monthRange(run.month, run.timezone ?? o.timezone).to.toISODate()!;
    const counted = new Map<string, { line: PaidLine; n: number }>();
    const count = (of: readonly PaidLine[], before: string, by: number) => {
      for (const l of of) {
        if (l.subMerchantId !== f.subMerchantId || l.currency !== f.currency || l.bookingDate >= before) continue;
        const key = `${l.reference}\u0000${l.bookingDate}\u0000${l.amount}`;
        counted.set(key, { line: l, n: (counted.get(key)?.n ?? 0) + by });
      }
    };
    count(o.paidNow, start, 1);
    count((await o.paidAt(run)) ?? [], statedTo, -1);
    let extra = 0n;
    for (const { line, n } of counted.values())
      for (let i = 0; i < Math.abs(n); i++) {
        const amount = n > 0 ? line.amount : -line.amount;
        lines.push({ ...line, amount });
        extra += amount;
      }
    out.push(
      extra === 0n ? f : { ...f, adjustments: (f.adjustments ?? 0n) + extra, paidOut: (f.paidOut ?? 0n) + extra },
    );
  }
  return { figures: out, lines };
}

/**
 * The run's closings with what was paid out up to the month's end deducted, under the sub-merchant's first
 * receiver name (sorted): the next month opens at them, and its ledger opening has the same payments deducted
 * (withPaidOut), so a payment is neither an adjustment nor counted twice. Only names the run states.
 */
export async function closingsPaidOut(
  closings: Map<string, bigint>,
  lines: readonly PaidLine[],
  month: string,
  timezone: string,
  namesOf: (subMerchantId: string) => Promise<readonly string[]>,
): Promise<void> {
  const end = monthRange(month, timezone).to.toISODate();
  const seen = new Set<string>();
  for (const l of lines) {
    const k = `${l.subMerchantId}\u0000${l.currency}`;
    if (seen.has(k)) continue;
    seen.add(k);
    const [first] = [...(await namesOf(l.subMerchantId))].sort();
    if (first === undefined) continue;
    const key = closingKey(first, l.currency);
    const closing = closings.get(key);
    if (closing === undefined) continue;
    closings.set(key, closing - paidBetween(lines, l.subMerchantId, l.currency, null, end));
  }
}
