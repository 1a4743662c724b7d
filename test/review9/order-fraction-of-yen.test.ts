import { describe, expect, it } from 'vitest';
import { orderInput } from '../../src/ingest/orders/input';

/**
 * Review 9: an order in yen of a fraction of a yen (10,001.50 JPY, or a part of 0.50 JPY) was taken, and judged
 * against the PSP's whole yen as an amount or a split that differs from the order, holding the payment's money
 * on the statement for a difference no payment can have. The order door refuses it naming the field, as it
 * refuses three decimals; whole yen and cents of a euro are taken as before.
 */

const order = (o: Record<string, unknown>) =>
  orderInput({ order_id: 'ord-jpy', created_at: '2025-03-01T08:00:00Z', ...o });

describe('review9: an order of a fraction of a yen', () => {
  it('is refused naming the amount, or the split', () => {
    expect(order({ amount: '10001.50', currency: 'JPY', split: 'sm-y:10001.50' })).toEqual({
      ok: false,
      field: 'amount',
      message: "10001.50 JPY is not a whole number of JPY's smallest unit (JPY has 0 decimals)",
    });
    expect(order({ amount: '10001', currency: 'JPY', split: 'sm-y:10000.50;sm-z:0.50' })).toEqual({
      ok: false,
      field: 'split',
      message: "the part of sm-y, 10000.50 JPY, is not a whole number of JPY's smallest unit (JPY has 0 decimals)",
    });
  });

  it('whole yen, and euros with cents, are taken', () => {
    expect(order({ amount: '10001', currency: 'JPY', split: 'sm-y:10000;sm-z:1' }).ok).toBe(true);
    expect(order({ amount: '10001.50', currency: 'EUR', split: 'sm-y:10001.50' }).ok).toBe(true);
  });
});
