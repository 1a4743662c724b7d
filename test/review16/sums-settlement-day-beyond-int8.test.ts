import { describe, expect, it } from 'vitest';
import { MAX_MINOR } from '../../src/money';
import { projection as settlement } from '../../projections/settlement';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { catchUp } from '../support/projection-spec';
import { cashDeps, sale, statement } from '../settlement/support';

/**
 * The doors take an amount of up to 10^15 minor units (src/money.ts MAX_MINOR). What the PSP owes for one day is
 * the sum of that day's rows: 9,224 sales at that amount pass int8's 2^63 − 1 (in IRR, 10^15 hundredths is some
 * ten million dollars: a big day of a big marketplace). The settlement read model summed the day into an int8
 * column (cash_days.clearing), so the 9,224th sale of the day failed with "bigint out of range" and it and every
 * later one were set aside: the day expected less than was sold, and no discrepancy named the money missing.
 * The sum must be exact, the day missing in full.
 */

const fx = useTestStore();
const SALES = 9_300;
const FEE = 1_234n;

describe('review16: a settlement day whose sum passes int8', () => {
  it('projects every sale; the day expects the exact sum and the missing discrepancy holds it', async () => {
    const reqs = Array.from({ length: SALES }, (_, i) => sale(`big-${i}`, '2026-01-06', MAX_MINOR, FEE));
    for (let i = 0; i < reqs.length; i += 1_000) await fx.store.appendMany(reqs.slice(i, i + 1_000));
    // the bank's statement through 2026-01-12 shows no credit: the day (due 01-07, late after 01-09) is missing
    await fx.store.appendMany([statement('S-1', '2026-01-06', '2026-01-12', 0n, 0n, 0)]);
    await waitVisible(fx.db.sql, fx.store);
    const report = await catchUp({ ...cashDeps(fx.db.sql, fx.store), projections: [settlement] }, { batchSize: 2_000 });

    expect(report.projections.flatMap((p) => p.setAside.map((s) => s.error))).toEqual([]);
    const owed = BigInt(SALES) * (MAX_MINOR - FEE);
    expect(owed > 2n ** 63n - 1n).toBe(true);
    const days = await fx.db.sql<{ due_on: string; clearing: string; fees: string; amount: string; status: string }[]>`
      select due_on, clearing::text, fees::text, amount::text, status from recon.settlements_expected`;
    expect(days).toEqual([
      {
        due_on: '2026-01-07',
        clearing: (BigInt(SALES) * MAX_MINOR).toString(),
        fees: (BigInt(SALES) * FEE).toString(),
        amount: owed.toString(),
        status: 'missing',
      },
    ]);
    const found = await fx.db.sql<{ type: string; amount_in_doubt: string }[]>`
      select type, amount_in_doubt::text from recon.settlement_discrepancies where status = 'open'`;
    expect(found).toEqual([{ type: 'settlement_missing', amount_in_doubt: owed.toString() }]);
  }, 300_000);
});
