import { describe, expect, it } from 'vitest';
import { MAX_MINOR } from '../../src/money';
import { projection as journal } from '../../projections/journal';
import { ledgerPosition } from '../../src/export/statements/issue';
import { trialBalance } from '../../src/ledger/balances';
import { closingsByReceiver, statementFigures } from '../../src/ledger/ledger-queries';
import { registerRows } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { catchUp } from '../support/projection-spec';
import { cashDeps, sale } from '../settlement/support';

/**
 * A receiver's month is the sum of its lines: 9,224 sales at the largest amount the doors take (10^15 minor
 * units, src/money.ts) pass int8's 2^63 − 1. The journal kept each receiver's month in an int8 column
 * (payable_months.amount): the 9,224th sale of the month failed with "bigint out of range" and it and every
 * later one were set aside, so the journal, the statements and the payout runs missed them; and the statements'
 * figures and the runs' closings cast their sums, of every receiver at once, back to int8. The month must be
 * exact, and another receiver's statement and closing must not depend on it.
 */

const fx = useTestStore();
const SALES = 9_300;
const FEE = 1_234n;

describe('review16: a receiver whose month passes int8', () => {
  it('journals every sale; the figures and closings of both receivers are exact', async () => {
    const reqs = Array.from({ length: SALES }, (_, i) => sale(`big-${i}`, '2026-01-06', MAX_MINOR, FEE));
    reqs.push(
      registerRows({
        paymentId: 'small-1',
        dateTime: '2026-01-07T12:00:00.000Z',
        amount: 100_00n,
        currency: 'EUR',
        receivers: [{ name: 'Shop Two', amount: 99_00n, fee: 1_00n }],
        reportId: 'report-small',
        observedAt: '2026-01-07T23:00:00.000Z',
      }),
    );
    for (let i = 0; i < reqs.length; i += 1_000) await fx.store.appendMany(reqs.slice(i, i + 1_000));
    await waitVisible(fx.db.sql, fx.store);
    const deps = { ...cashDeps(fx.db.sql, fx.store), projections: [journal] };
    const report = await catchUp(deps, { batchSize: 2_000 });
    expect(report.projections.flatMap((p) => p.setAside.map((s) => s.error))).toEqual([]);

    const big = BigInt(SALES) * (MAX_MINOR - FEE);
    expect(big > 2n ** 63n - 1n).toBe(true);
    const [month] = await fx.db.sql<{ amount: string }[]>`
      select amount::text from recon.payable_months where receiver_name = 'Shop One' and component = 'gross'`;
    expect(month?.amount).toBe((BigInt(SALES) * MAX_MINOR).toString());

    const figures = await statementFigures(fx.db.sql, { month: '2026-01', timezone: 'UTC' });
    expect(figures.map((f) => [f.subMerchantName, f.gross, f.fees, f.netPayable, f.closing])).toEqual([
      ['Shop One', BigInt(SALES) * MAX_MINOR, BigInt(SALES) * FEE, big, big],
      ['Shop Two', 100_00n, 1_00n, 99_00n, 99_00n],
    ]);
    const atPosition = (await ledgerPosition(fx.db.sql))!;
    const closings = await closingsByReceiver(fx.db.sql, { month: '2026-01', timezone: 'UTC', atPosition });
    expect([...closings].sort()).toEqual([
      ['Shop One\u0000EUR', big],
      ['Shop Two\u0000EUR', 99_00n],
    ]);
    const payable = (await trialBalance(fx.db.sql)).find((b) => b.account === 'payable');
    expect(payable?.balance).toBe(-(big + 99_00n));
  }, 300_000);
});
