import { describe, expect, it } from 'vitest';
import { paidBetween, paidOutAt, payoutStatusesAt } from '../../src/export/payouts/paid-out';
import { statementStream } from '../../src/events/statement-events';
import { silentLogger } from '../../src/log';
import { projection as journal } from '../../projections/journal';
import { useTestStore } from '../support/db';
import { catchUp } from '../support/projection-spec';
import {
  appendAll,
  bank,
  booked,
  issued,
  PAYOUTS_ACCOUNT,
  payee,
  payouts,
  project,
  rebuild,
  TZ,
  views,
} from './support';

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

    // a statement regenerated at an old cut shows the statuses it showed then: each run's event as the cut
    const runs = await fx.store.readStream(statementStream(MONTH));
    const at = async (i: number) =>
      (await payoutStatusesAt(fx.db.sql, runs[i]!.position, bank.payouts))!.map((p) => [p.reference, p.amount]);
    expect(await at(0)).toEqual([[REF, 1000_00n]]);
    expect(await at(1)).toEqual([[REF, 800_00n]]);
    expect(await at(2)).toEqual([
      [REF, 1000_00n],
      [`${REF}-2`, 100_00n],
    ]);
    expect(await at(3)).toEqual(await at(2));
  });
});

describe('payouts leg review: money paid under an ask lowered to nothing since is still money paid out', () => {
  const fx = useTestStore();

  it('both asks paid, then the month stated lower than the first: the later payment is matched, paid out, reported', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      issued(MONTH, '2026-11-02T08:00:00Z', [{ subMerchantId: 'SM1', reference: REF, payable: 1000_00n }]),
      issued(MONTH, '2026-11-03T08:00:00Z', [
        { subMerchantId: 'SM1', reference: `${REF}-2`, payable: 300_00n, amountDue: 1300_00n, stillAsked: 1300_00n },
      ]),
      booked({ bankRef: 'b1', amount: 1000_00n, bookingDate: '2026-11-04', remittance: REF }),
      booked({ bankRef: 'b2', amount: 300_00n, bookingDate: '2026-11-04', remittance: `${REF}-2` }),
      // a refund reported late: the month is 800.00 in all
      issued(MONTH, '2026-11-06T08:00:00Z', [
        { subMerchantId: 'SM1', reference: null, payable: 0n, amountDue: 800_00n, stillAsked: 800_00n },
      ]),
    ]);
    await project(fx.db.sql, fx.store);
    const v = await views(fx.db.sql);
    // both debits paid SM1's month: neither is a payment to no one
    expect(v.lines.map((l) => [l.bank_ref, l.role, l.reference])).toEqual(
      expect.arrayContaining([
        ['b1', 'paid', REF],
        ['b2', 'paid', `${REF}-2`],
      ]),
    );
    expect(v.payouts.map((p) => [p.reference, p.amount, p.asked, p.paid_out])).toEqual([
      [REF, 800_00n, 1000_00n, 1000_00n],
      [`${REF}-2`, 0n, 300_00n, 300_00n],
    ]);
    // 500.00 paid beyond what the month asks, reported on each reference; nothing unexpected
    expect(v.discrepancies.map((d) => [d.type, d.values.reference])).toEqual(
      expect.arrayContaining([
        ['payout_amount_mismatch', REF],
        ['payout_amount_mismatch', `${REF}-2`],
      ]),
    );
    expect(v.discrepancies.map((d) => d.type)).not.toContain('payout_unexpected');
    // what the statements count as paid out to SM1 (their "Paid out", the ledger's closing less it): all 1,300.00
    const paid = await paidOutAt(fx.db.sql, { commit: 2n ** 62n, prepare: 0n }, 10);
    expect(paidBetween(paid!, 'SM1', 'EUR', null, null)).toBe(1300_00n);

    // and the journal books both debits as payouts: 1,300.00 left the payouts account for SM1
    await catchUp(
      {
        sql: fx.db.sql,
        store: fx.store,
        log: silentLogger,
        timezone: TZ,
        graceHours: 48,
        bank,
        projections: [journal, payouts],
      },
      { batchSize: 1000 },
    );
    const [out] = await fx.db.sql<{ b: string }[]>`
      select coalesce(sum(amount), 0)::text as b from recon.journal_lines where account = ${`bank:${PAYOUTS_ACCOUNT}`}`;
    expect(BigInt(out!.b)).toBe(-1300_00n);

    await rebuild(fx.db.sql, fx.store, 1);
    expect(await views(fx.db.sql)).toEqual(v);
  });
});
