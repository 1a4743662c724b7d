import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { appendAll, booked, issued, payee, project, rebuild, views } from './support';

/**
 * A correction that states a month lower than its earlier runs asked (docs/bank.md, "A month stated lower"):
 * the payouts leg expects the earlier ask lowered, the latest first, so a transfer of what the month still asks
 * is paid in full with no discrepancy, and one of the earlier, higher figure is reported. Replayed from zero,
 * in one batch or event by event, the read models are the same.
 */

const MONTH = '2026-10';

describe('payouts leg: a month stated lower', () => {
  const fx = useTestStore();

  it('expects what the month still asks: paid at it, no discrepancy; paid at the earlier figure, reported', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      payee('SM2', 'Shop Two'),
      issued(MONTH, '2026-11-02T08:00:00Z', [
        { subMerchantId: 'SM1', reference: 'RS-SM1-2026-10-EUR', payable: 1000_00n },
        { subMerchantId: 'SM2', reference: 'RS-SM2-2026-10-EUR', payable: 500_00n },
      ]),
      // a late sale: SM1's month comes to 1,300.00, the correction asks 300.00 more under its own reference
      issued(MONTH, '2026-11-03T08:00:00Z', [
        { subMerchantId: 'SM1', reference: 'RS-SM1-2026-10-EUR-2', payable: 300_00n, stillAsked: 1300_00n },
      ]),
      // then a refund: SM1's month is 800.00 in all; SM2's 450.00. Nothing is asked, the figures are recorded
      issued(MONTH, '2026-11-04T08:00:00Z', [
        { subMerchantId: 'SM1', reference: null, payable: 0n, amountDue: 800_00n, stillAsked: 800_00n },
        { subMerchantId: 'SM2', reference: null, payable: 0n, amountDue: 450_00n, stillAsked: 450_00n },
      ]),
      // finance pays SM1 what the month still asks; SM2 the figure of its first statement
      booked({ bankRef: 'b1', amount: 800_00n, bookingDate: '2026-11-05', remittance: 'RS-SM1-2026-10-EUR' }),
      booked({ bankRef: 'b2', amount: 500_00n, bookingDate: '2026-11-05', remittance: 'RS-SM2-2026-10-EUR' }),
    ]);
    await project(fx.db.sql, fx.store);
    const v = await views(fx.db.sql);
    const row = (ref: string) => v.payouts.find((p) => p.reference === ref);
    // the later ask (300.00) is lowered first, to nothing; the first then to 800.00
    expect(row('RS-SM1-2026-10-EUR')).toMatchObject({ amount: 800_00n, asked: 1000_00n, status: 'paid' });
    expect(row('RS-SM1-2026-10-EUR-2')).toBeUndefined();
    expect(row('RS-SM2-2026-10-EUR')).toMatchObject({ amount: 450_00n, asked: 500_00n, paid_out: 500_00n });
    const found = v.discrepancies.map((d) => [d.sub_merchant_id, d.type]);
    expect(found.filter(([id]) => id === 'SM1')).toEqual([]);
    // 50.00 paid beyond what the month asks
    expect(found.filter(([id]) => id === 'SM2')).toEqual([['SM2', 'payout_amount_mismatch']]);
    expect(v.stillAsked.map((r) => [r.sub_merchant_id, r.still_asked])).toEqual(
      expect.arrayContaining([
        ['SM1', 1300_00n],
        ['SM1', 800_00n],
        ['SM2', 450_00n],
      ]),
    );

    // stated higher again (a second late sale): 1,100.00 in all; nothing more is asked (1,300.00 was),
    // and the first ask is expected at 1,100.00 again
    await appendAll(fx.store, [
      issued(MONTH, '2026-11-06T08:00:00Z', [
        { subMerchantId: 'SM1', reference: null, payable: 0n, amountDue: 1100_00n, stillAsked: 1100_00n },
      ]),
    ]);
    await project(fx.db.sql, fx.store);
    const after = await views(fx.db.sql);
    expect(after.payouts.find((p) => p.reference === 'RS-SM1-2026-10-EUR')).toMatchObject({
      amount: 1000_00n,
      status: 'partial',
    });
    expect(after.payouts.find((p) => p.reference === 'RS-SM1-2026-10-EUR-2')).toMatchObject({ amount: 100_00n });

    await rebuild(fx.db.sql, fx.store, 1000);
    expect(await views(fx.db.sql)).toEqual(after);
    await rebuild(fx.db.sql, fx.store, 1);
    expect(await views(fx.db.sql)).toEqual(after);
  });
});
