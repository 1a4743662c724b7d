import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeeContract } from '../../src/ingest/fee-contract';
import { expectedFee } from '../../src/order-terms';
import { decimalText } from '../../src/payout-runs/pain001';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, registerRows, subMerchant } from '../discrepancies/fixtures';
import { feeLine, order, orderDiscrepancies, projectOrders } from '../orders/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 9: a fee contract in yen. The fee a line allows was rounded to a hundredth whatever the currency: 2.5 %
 * of a 10,001 JPY part allowed 250.03 JPY, a fee no PSP charges, so a PSP's 300 JPY was a `fee_above_contract`
 * of 49.97 JPY. Held on the statement (the difference, at most), it left the JPY payout a fraction of a yen,
 * which no payout run can pay (`not_whole_units`): the whole payout stayed unpaid for 3 hundredths of a yen.
 * Now rounded to the currency's smallest unit (a whole yen), and a fixed fee of a fraction of a yen is refused.
 */

const jpy = { percent: '2.5', fixed: '0', rounding: 'half_up' as const, currency: 'JPY' };

describe('review9: the fee a contract line allows, in yen', () => {
  it('is rounded to a whole yen, half up or down; other currencies to a hundredth, as before', () => {
    expect(expectedFee(jpy, 10_001_00n)).toBe(250_00n); // 250.025 JPY
    expect(expectedFee(jpy, 10_021_00n)).toBe(251_00n); // 250.525 JPY, half up
    expect(expectedFee({ ...jpy, rounding: 'down' }, 10_039_00n)).toBe(250_00n); // 250.975 JPY
    expect(expectedFee({ ...jpy, currency: 'EUR' }, 10_001_00n)).toBe(250_03n);
    expect(expectedFee({ ...jpy, currency: 'KWD' }, 10_001_00n)).toBe(250_03n);
    expect(expectedFee({ percent: '2.5', fixed: '0', rounding: 'half_up' }, 10_001_00n)).toBe(250_03n);
  });

  it('a fixed fee of a fraction of a yen is refused naming the column; whole yen and cents of a euro are taken', () => {
    const csv = (currency: string, fixed: string) =>
      `sub_merchant_id,method,currency,percent,fixed,effective_from,rounding\n*,purchase,${currency},2.5,${fixed},2025-01-01,\n`;
    const refused = parseFeeContract(csv('JPY', '0.50'), 'c.csv');
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.issues).toEqual([
        { file: 'c.csv', line: 2, column: 'fixed', message: `"0.50" is not a whole number of JPY's smallest unit` },
      ]);
    expect(parseFeeContract(csv('JPY', '5'), 'c.csv').ok).toBe(true);
    expect(parseFeeContract(csv('EUR', '0.50'), 'c.csv').ok).toBe(true);
  });
});

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('review9: a JPY payment judged against the contract', () => {
  it('differs by whole yen: the amount in doubt is one a payout can carry', async () => {
    await appendAll(store, [
      subMerchant('sm-y', 'Yamato Goods'),
      feeLine({
        subMerchantId: 'sm-y',
        method: 'purchase',
        currency: 'JPY',
        percent: '2.5',
        fixed: '0',
        effectiveFrom: '2024-01-01',
        rounding: 'half_up',
      }),
      order({
        order_id: 'ord-y',
        amount: '10001.00',
        currency: 'JPY',
        created_at: '2024-03-01T08:00:00.000Z',
        split: 'sm-y:10001.00',
      }),
      registerRows({
        paymentId: 'pay-y',
        orderId: 'ord-y',
        currency: 'JPY',
        dateTime: '2024-03-01T10:00:00.000Z',
        amount: 10_001_00n,
        receivers: [{ name: 'Yamato Goods', amount: 9_701_00n, fee: 300_00n }],
        reportId: 'r1',
        observedAt: '2024-03-01T23:30:00.000Z',
      }),
    ]);
    await projectOrders(db.sql, store);
    const fees = (await orderDiscrepancies(db.sql)).filter((d) => d.type.startsWith('fee_'));
    expect(fees.map((d) => [d.type, d.values.expected_fee, d.values.charged_fee, d.values.difference])).toEqual([
      ['fee_above_contract', '25000', '30000', '5000'],
    ]);
    // what a hold of it leaves a payout: a whole number of yen, which a payment file can carry
    expect(decimalText(BigInt(fees[0]!.values.difference as string), 'JPY')).toBe('50');
  });
});
