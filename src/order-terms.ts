import { DEFAULT_SCHEDULE, type FeeScheduleLine } from './events/order-events';
import { smallestUnit } from './money';

/**
 * The terms the marketplace's orders are judged by, pure and shared by the orders leg
 * (src/reconciliation/orders) and the sandbox's ground truth: which operations open an order, and the fee a
 * contract line allows (exact integer arithmetic; the contract's file format is src/ingest/fee-contract.ts).
 */

/** The operations that open an order: the one payment an order expects. */
export const PRIMARY_METHODS: ReadonlySet<string> = new Set(['purchase', 'auth', 'recurrent']);

/** percent text → integer ratio of the part: "2.9" → 29 / 1000. */
export function percentRatio(percent: string): { num: bigint; den: bigint } {
  const [whole, frac = ''] = percent.split('.');
  return { num: BigInt(whole! + frac), den: 100n * 10n ** BigInt(frac.length) };
}

/**
 * The fee a line allows on one part (minor units): fixed + the percentage rounded to the currency's smallest unit
 * (a hundredth of EUR or UAH, a whole yen: a fee of 250.03 JPY exists in no contract nor at any PSP, and a
 * difference of a fraction of a yen held on a statement left the whole JPY payout unpayable), at most the part.
 */
export function expectedFee(
  line: Pick<FeeScheduleLine, 'percent' | 'fixed' | 'rounding'> & { readonly currency?: string },
  part: bigint,
): bigint {
  const base = part < 0n ? -part : part;
  const { num, den } = percentRatio(line.percent);
  const unit = line.currency === undefined ? 1n : smallestUnit(line.currency);
  const product = base * num;
  const per = den * unit;
  let pct = product / per;
  if (line.rounding === 'half_up' && (product % per) * 2n >= per) pct += 1n;
  const fee = BigInt(line.fixed) + pct * unit;
  return fee > base ? base : fee;
}

/**
 * The line that applies to an operation: the sub-merchant's own lines for its method and currency, else
 * the default schedule's; of those, the latest whose day is on or before the operation's day.
 */
export function applicableLine<
  L extends Pick<FeeScheduleLine, 'subMerchantId' | 'method' | 'currency' | 'effectiveFrom'>,
>(lines: readonly L[], subMerchantId: string | null, method: string, currency: string, day: string): L | null {
  const pick = (sub: string) => {
    let best: L | null = null;
    for (const l of lines) {
      if (l.subMerchantId !== sub || l.method !== method || l.currency !== currency || l.effectiveFrom > day) continue;
      if (!best || l.effectiveFrom > best.effectiveFrom) best = l;
    }
    return best;
  };
  const own =
    subMerchantId === null ? null : lines.some((l) => l.subMerchantId === subMerchantId) ? subMerchantId : null;
  return own === null ? pick(DEFAULT_SCHEDULE) : (pick(own) ?? pick(DEFAULT_SCHEDULE));
}
