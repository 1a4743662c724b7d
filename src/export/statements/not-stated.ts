import type { Position } from '../../store/types';
import { monthBefore, monthEnd, monthsBetween } from './controls';
import { previousRunOf, type IssuedRun } from './previous';
import type { StatementQueries } from './queries';
import type { AdjustmentLine, StatementFigures } from './workbooks';

/**
 * A statement that builds on one older than the previous month's (that month was never issued): what moved
 * in the months between was never stated, so it is not an adjustment of anything stated. It is split out of
 * the adjustments (`notStated`) and its entries are listed apart; the opening is still the older statement's
 * closing, so nothing is paid twice or never.
 */

/** The previous statement as the adjustments query takes it (with its zone, for a re-based run). */
export const previousOf = (run: IssuedRun): { month: string; atPosition: Position; timezone?: string } => ({
  month: run.month,
  atPosition: run.cut,
  ...(run.timezone ? { timezone: run.timezone } : {}),
});

/** The adjustment entries, those dated after the previous statement's month marked `notStated`. */
export async function* notStatedMarked<A extends AdjustmentLine>(
  entries: AsyncIterable<A>,
  run: IssuedRun,
  timezone: string,
): AsyncIterable<A> {
  const stated = monthEnd(run.month, run.timezone ?? timezone).toMillis();
  for await (const a of entries) yield a.at.getTime() >= stated ? { ...a, notStated: true } : a;
}

export async function splitNotStated<F extends StatementFigures>(
  figures: readonly F[],
  runs: readonly IssuedRun[],
  o: {
    month: string;
    timezone: string;
    atPosition: Position;
    queries: StatementQueries;
    namesOf(subMerchantId: string): Promise<readonly string[]>;
  },
): Promise<F[]> {
  const previousMonth = monthBefore(o.month);
  const adjustments = o.queries.adjustments;
  const out: F[] = [];
  for (const f of figures) {
    const run = f.previousStatement
      ? previousRunOf(runs, f.subMerchantId, await o.namesOf(f.subMerchantId))
      : undefined;
    if (!run || !adjustments || run.month >= previousMonth) {
      out.push(f);
      continue;
    }
    let notStated = 0n;
    const entries = adjustments({
      month: o.month,
      timezone: o.timezone,
      subMerchantId: f.subMerchantId,
      currency: f.currency,
      atPosition: o.atPosition,
      previous: previousOf(run),
    });
    for await (const a of notStatedMarked(entries, run, o.timezone)) if (a.notStated) notStated += a.net;
    out.push({
      ...f,
      adjustments: (f.adjustments ?? 0n) - notStated,
      notStated,
      notStatedMonths: monthsBetween(run.month, previousMonth),
    });
  }
  return out;
}
