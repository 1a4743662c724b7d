import type { Rng } from './random';
import type { ReceiverPart, SubMerchant } from './model';

/**
 * How an operation's amount is shared among its receivers (sub-merchants), with each receiver's fee and
 * reserve: the settlement parts the register shows one row per receiver.
 */

/** An amount split into n shares of at least 1.00 each, summing exactly to the total. */
export function splitShares(total: bigint, count: number, r: Rng): bigint[] {
  const min = 100n;
  const rest = total - min * BigInt(count);
  const weights = Array.from({ length: count }, () => BigInt(r.int(1, 100)));
  const wsum = weights.reduce((a, b) => a + b, 0n);
  const shares = weights.map((w) => min + (rest * w) / wsum);
  shares[0] = shares[0]! + (total - shares.reduce((a, b) => a + b, 0n));
  return shares;
}

/** Settlement parts of a money-moving operation (purchase, capture, recurrent). */
export function chargeParts(shares: readonly bigint[], sms: readonly SubMerchant[]): ReceiverPart[] {
  return shares.map((share, j) => {
    const sm = sms[j]!;
    const fixedFee = sm.fixedFee < share ? sm.fixedFee : share;
    let percentFee = (share * BigInt(sm.percentBp)) / 10000n;
    if (fixedFee + percentFee > share) percentFee = share - fixedFee;
    const amount = share - fixedFee - percentFee;
    let reserve = (share * BigInt(sm.reserveBp)) / 10000n;
    if (reserve > amount) reserve = amount;
    return {
      subMerchantId: sm.id,
      name: sm.name,
      share,
      fee: fixedFee + percentFee,
      fixedFee,
      percentFee,
      amount,
      reserve,
    };
  });
}

/** auth and void: no fee, no reserve. */
export function plainParts(shares: readonly bigint[], sms: readonly SubMerchant[]): ReceiverPart[] {
  return shares.map((share, j) => ({
    subMerchantId: sms[j]!.id,
    name: sms[j]!.name,
    share,
    fee: 0n,
    fixedFee: 0n,
    percentFee: 0n,
    amount: share,
    reserve: 0n,
  }));
}

/** A refund or dispute of `amount`, spread over the receivers in proportion to their shares. */
export function proportionalParts(
  amount: bigint,
  shares: readonly bigint[],
  sms: readonly SubMerchant[],
  feeOf: (sm: SubMerchant) => bigint,
): ReceiverPart[] {
  const total = shares.reduce((a, b) => a + b, 0n);
  const parts = shares.map((s) => (amount * s) / total);
  parts[0] = parts[0]! + (amount - parts.reduce((a, b) => a + b, 0n));
  return parts.map((share, j) => {
    const sm = sms[j]!;
    const fee = feeOf(sm) < share ? feeOf(sm) : share;
    return {
      subMerchantId: sm.id,
      name: sm.name,
      share,
      fee,
      fixedFee: fee,
      percentFee: 0n,
      amount: share - fee,
      reserve: 0n,
    };
  });
}

export const sum = (values: readonly bigint[]): bigint => values.reduce((a, b) => a + b, 0n);
