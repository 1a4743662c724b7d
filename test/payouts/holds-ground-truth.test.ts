import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { expectedHolds, type HoldWorld, payoutTruth } from '../../src/sandbox/ground-truth';
import type { GroundTruthEntry, Operation, Order, ReceiverPart, SubMerchant } from '../../src/sandbox/model';

/**
 * The sandbox's ground truth of the money (issue 25): from its own picture of the operations and the injected
 * breaks, by the hold policy's rules, without recon's journal: the net a payment adds to the month (reserve
 * released in it or not, refunds), what each break holds (a whole payment, a material difference, nothing),
 * a receiver not in the directory held whole, and the amount due.
 */

const FROM = new Date('2026-10-01T00:00:00Z');
const TO = new Date('2026-11-01T00:00:00Z');
const sm = (id: string, name: string, listed: boolean, holdDays: number | null): SubMerchant => ({
  id,
  name,
  listed,
  holdDays,
  reserveBp: 0,
  fixedFee: 0n,
  percentBp: 0,
  refundFee: 0n,
});
const SUBS = [sm('A', 'Alpha', true, 0), sm('B', 'Beta', true, 90), sm('U', 'Unlisted Seller 1', false, null)];
const part = (name: string, share: bigint, fee: bigint, reserve = 0n): ReceiverPart => ({
  subMerchantId: SUBS.find((s) => s.name === name)!.id,
  name,
  share,
  fee,
  fixedFee: fee,
  percentFee: 0n,
  amount: share - fee,
  reserve,
});
const op = (paymentId: string, method: Operation['method'], day: number, receivers: ReceiverPart[]): Operation =>
  ({
    posId: 'pos',
    orderId: `order-${paymentId}`,
    paymentId,
    method,
    status: 'success',
    currency: 'UAH',
    at: Date.UTC(2026, 9, day, 12),
    merchantFee: receivers.reduce((s, r) => s + r.fee, 0n),
    receivers,
    distortion: null,
  }) as unknown as Operation;
const order = (...operations: Operation[]) => ({ operations }) as unknown as Order;
const truth = (type: GroundTruthEntry['type'], paymentId: string, detail = {}): GroundTruthEntry => ({
  type,
  posId: 'pos',
  orderId: `order-${paymentId}`,
  paymentId,
  transactionId: null,
  method: 'purchase',
  detail,
});

const world: HoldWorld = {
  timezone: 'UTC',
  from: FROM,
  to: TO,
  subMerchants: SUBS,
  groundTruth: [
    truth('status_mismatch', 'pay-1'),
    truth('currency_mismatch', 'pay-2'),
    truth('fee_mismatch', 'pay-4', { expected: '200', reported: '201' }),
    truth('missing_webhook', 'pay-5'),
  ],
  orders: () => [
    // Alpha's reserve is released the same day (0 days), Beta's in 90 days: after the month
    order(op('pay-1', 'purchase', 5, [part('Alpha', 100_00n, 2_00n, 10_00n), part('Beta', 50_00n, 1_00n, 5_00n)])),
    // refunded in full: 200.00 back and its fee kept, −4.00 for the month
    order(
      op('pay-2', 'purchase', 6, [part('Alpha', 200_00n, 4_00n)]),
      op('pay-2', 'refund', 7, [part('Alpha', 200_00n, 0n)]),
    ),
    order(op('pay-3', 'purchase', 8, [part('Unlisted Seller 1', 30_00n, 1_00n)])),
    order(op('pay-4', 'purchase', 9, [part('Alpha', 80_00n, 2_00n)])),
    order(op('pay-5', 'purchase', 10, [part('Beta', 60_00n, 3_00n)])),
  ],
};

describe('the ground truth of holds, due and paid', () => {
  it('holds what each break puts in doubt by the policy, capped at the payment’s net', () => {
    const breaks = [{ type: 'fee_above_contract', paymentId: 'pay-5', subMerchantId: 'B', difference: 2_50n }];
    expect(expectedHolds(world, breaks, DEFAULT_HOLD_POLICY)).toEqual([
      { paymentId: 'pay-1', receiverName: 'Alpha', currency: 'UAH', amount: 98_00n },
      { paymentId: 'pay-1', receiverName: 'Beta', currency: 'UAH', amount: 44_00n },
      { paymentId: 'pay-5', receiverName: 'Beta', currency: 'UAH', amount: 2_50n },
    ]);
    // Alpha 98 − 4 + 78 = 172, Beta 44 + 57 = 101, the unlisted seller 29 (held whole)
    expect(payoutTruth(world, breaks, DEFAULT_HOLD_POLICY)).toEqual([
      { currency: 'UAH', net: 302_00n, held: 173_50n, due: 128_50n },
    ]);
  });

  it('follows the policy it is given', () => {
    const policy = {
      rules: { ...DEFAULT_HOLD_POLICY.rules, status_mismatch: 'none' as const },
      materiality: { all: 1n, byCurrency: {} },
    };
    expect(expectedHolds(world, [], policy)).toEqual([
      { paymentId: 'pay-4', receiverName: 'Alpha', currency: 'UAH', amount: 1n },
    ]);
  });
});
