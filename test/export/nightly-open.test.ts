import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  AGE_BUCKETS,
  ageInDays,
  bucketOf,
  type DiscrepancyTimes,
  openAt,
  openOnDay,
} from '../../src/export/nightly/open';
import { amountInDoubt } from '../../src/reconciliation/discrepancy-summary';

/**
 * The pieces of the nightly report's view of the past: open at an instant from the three times, ages in
 * business days across both DST changes, the bucket boundaries, the money each kind of discrepancy puts in
 * doubt, and money never mixed across currencies.
 */

const TZ = 'Europe/Kyiv';
const at = (day: string, hhmm: string) => DateTime.fromISO(`${day}T${hhmm}`, { zone: TZ }).toJSDate();

describe('open at an instant', () => {
  const d: DiscrepancyTimes = {
    id: 'a',
    type: 'amount_mismatch',
    detectedAt: at('2024-10-01', '10:00'),
    resolvedAt: at('2024-10-05', '10:00'),
    acceptedAt: null,
    currency: 'UAH',
    subMerchantIds: [],
    amount: 100n,
  };
  it('is open from its detection until its resolution or acceptance, each instant excluded once past', () => {
    expect(openAt(d, d.detectedAt)).toBe(false);
    expect(openAt(d, new Date(d.detectedAt.getTime() + 1))).toBe(true);
    expect(openAt(d, d.resolvedAt!)).toBe(true);
    expect(openAt(d, new Date(d.resolvedAt!.getTime() + 1))).toBe(false);
    const accepted = { ...d, resolvedAt: null, acceptedAt: at('2024-10-03', '00:00') };
    expect(openAt(accepted, at('2024-10-03', '00:00'))).toBe(true);
    expect(openAt(accepted, at('2024-10-04', '00:00'))).toBe(false);
  });
});

describe('age in business days', () => {
  it('counts calendar days in the zone, across the spring and autumn changes', () => {
    // 23 h and 25 h days still count one each
    expect(ageInDays(at('2024-03-30', '23:30'), '2024-03-31', TZ)).toBe(1);
    expect(ageInDays(at('2024-03-31', '00:30'), '2024-03-31', TZ)).toBe(0);
    expect(ageInDays(at('2024-10-26', '23:59'), '2024-10-28', TZ)).toBe(2);
    // 22:30 UTC on the 30th of March is already the 31st in Kyiv
    expect(ageInDays(new Date('2024-03-30T22:30:00Z'), '2024-03-31', TZ)).toBe(0);
    expect(ageInDays(new Date('2024-03-30T22:30:00Z'), '2024-03-31', 'UTC')).toBe(1);
  });

  it('puts each age in one bucket: 0–2, 3–7, 8–30, over 30', () => {
    const expected = (age: number) => (age <= 2 ? 0 : age <= 7 ? 1 : age <= 30 ? 2 : 3);
    for (let age = 0; age <= 400; age++) expect(bucketOf(age), String(age)).toBe(AGE_BUCKETS[expected(age)]);
  });
});

describe('the money a discrepancy puts in doubt', () => {
  const money = (type: string, values: Record<string, unknown>) => amountInDoubt({ type, values, currency: 'EUR' });
  const source = (amount: string) => ({ amount, status: 'success', currency: 'EUR' });
  it('is the whole payment for one that holds it, the largest amount a source states', () => {
    const values = { register: source('10000'), period: source('10000'), webhook: source('-12000') };
    for (const type of ['amount_mismatch', 'status_mismatch', 'missing_in_report', 'duplicate', 'unknown_sub_merchant'])
      expect(money(type, values), type).toBe(12000n);
    expect(money('split_mismatch', { shares_sum: '9000', original_amount: '10000' })).toBe(10000n);
  });
  it('is the difference for a fee, the money concerned for a payout, a settlement or an order', () => {
    expect(money('fee_mismatch', { register: { merchant_fee: '200' }, period: { merchant_fee: '350' } })).toBe(150n);
    expect(money('payout_missing', { expected: '5000', paid_out: '0' })).toBe(5000n);
    expect(money('payout_amount_mismatch', { expected: '5000', paid_out: '4200' })).toBe(800n);
    expect(money('payout_returned', { amount: '-5000' })).toBe(5000n);
    expect(money('settlement_missing', { expected: '70000' })).toBe(70000n);
    expect(money('settlement_short', { expected: '70000', received: '69000', shortfall: '1000' })).toBe(1000n);
    expect(money('settlement_unexpected', { amount: '333' })).toBe(333n);
    expect(money('order_not_at_psp', { order_amount: '4000' })).toBe(4000n);
    expect(money('amount_differs_from_order', { order_amount: '4000', psp_amount: '4100' })).toBe(4100n);
    expect(money('split_differs_from_order', { psp_split: [{ amount: '3000' }, { amount: '1000' }] })).toBe(4000n);
    expect(money('fee_above_contract', { difference: '25' })).toBe(25n);
    expect(money('report_count_mismatch', { announced: 3, received: 2 })).toBeNull();
  });
});

describe('a day of several currencies', () => {
  it('sums per currency in bigint, never across currencies, and groups by the set of sub-merchants', () => {
    const big = 2n ** 60n; // beyond a double's exact integers: summed exactly in bigint
    const base = { resolvedAt: null, acceptedAt: null, type: 'amount_mismatch' };
    const all: DiscrepancyTimes[] = [
      { ...base, id: '1', detectedAt: at('2024-05-01', '10:00'), currency: 'EUR', subMerchantIds: ['a'], amount: big },
      { ...base, id: '2', detectedAt: at('2024-05-02', '10:00'), currency: 'EUR', subMerchantIds: ['a'], amount: 1n },
      { ...base, id: '3', detectedAt: at('2024-05-02', '11:00'), currency: 'UAH', subMerchantIds: ['a'], amount: 7n },
      {
        ...base,
        id: '4',
        detectedAt: at('2024-05-02', '12:00'),
        currency: 'EUR',
        subMerchantIds: ['a', 'b'],
        amount: 5n,
      },
    ];
    const v = openOnDay(all, '2024-05-02', TZ, new Map([['a', 'Alpha']]));
    expect(v.inDoubt.map((r) => [r.currency, r.subMerchantIds.join('+'), r.count, r.amount])).toEqual([
      ['EUR', 'a', 2, big + 1n],
      ['EUR', 'a+b', 1, 5n],
      ['UAH', 'a', 1, 7n],
    ]);
    expect(v.inDoubt[1]!.names).toEqual(['Alpha', '']);
    expect(v.ageing.filter((r) => r.count > 0).map((r) => [r.bucket, r.currency, r.count, r.amount])).toEqual([
      ['0–2 days', 'EUR', 3, big + 6n],
      ['0–2 days', 'UAH', 1, 7n],
    ]);
    expect(v.oldest?.id).toBe('1');
    expect(v.monthToDate.map((r) => [r.currency, r.detected, r.detectedAmount, r.open])).toEqual([
      ['EUR', 3, big + 6n, 3],
      ['UAH', 1, 7n, 1],
    ]);
  });
});
