import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { appendAll, issued, payee, project, rebuild, views } from './support';

/**
 * A hostile review of "A month stated lower" (docs/bank.md) in the payouts leg: the figure in force is the one
 * of the month's latest statement by its cut, not the one recorded last. A run issued at an earlier cut after a
 * later correction (one sub-merchant's statement regenerated at the cut it was sent at, `--sub-merchant … --at`)
 * states what the month owed then; it must not lower what the later correction asks.
 */

const MONTH = '2026-10';
const REF = 'RS-SM1-2026-10-EUR';

describe('payouts leg review: the figure in force is the latest cut’s', () => {
  const fx = useTestStore();

  it('a statement regenerated at an earlier cut, recorded after a later correction, lowers nothing', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      issued(MONTH, '2026-11-02T08:00:00Z', [{ subMerchantId: 'SM1', reference: REF, payable: 1000_00n }]),
      // a refund: the month is 800.00 in all
      issued(MONTH, '2026-11-03T08:00:00Z', [
        { subMerchantId: 'SM1', reference: null, payable: 0n, amountDue: 800_00n, stillAsked: 800_00n },
      ]),
      // two late sales: 1,100.00 in all; 1,000.00 was asked, 100.00 more under -2
      issued(MONTH, '2026-11-06T08:00:00Z', [
        { subMerchantId: 'SM1', reference: `${REF}-2`, payable: 100_00n, amountDue: 1100_00n, stillAsked: 1100_00n },
      ]),
    ]);
    await project(fx.db.sql, fx.store);
    const before = await views(fx.db.sql);
    const amounts = (v: typeof before) => v.payouts.map((p) => [p.reference, p.amount]);
    expect(amounts(before)).toEqual([
      [REF, 1000_00n],
      [`${REF}-2`, 100_00n],
    ]);

    // SM1's statement regenerated at the cut of 3 November (what it said then), recorded on 7 November
    await appendAll(fx.store, [
      issued(
        MONTH,
        '2026-11-07T08:00:00Z',
        [{ subMerchantId: 'SM1', reference: null, payable: 0n, amountDue: 800_00n, stillAsked: 800_00n }],
        { cutAt: '2026-11-03T08:00:00Z', subMerchantId: 'SM1' },
      ),
    ]);
    await project(fx.db.sql, fx.store);
    const after = await views(fx.db.sql);
    // the month still owes 1,100.00 (the latest statement's figure): both asks stand
    expect(amounts(after)).toEqual(amounts(before));

    await rebuild(fx.db.sql, fx.store, 1000);
    expect(await views(fx.db.sql)).toEqual(after);
    await rebuild(fx.db.sql, fx.store, 1);
    expect(await views(fx.db.sql)).toEqual(after);
  });
});
