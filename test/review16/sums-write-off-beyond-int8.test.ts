import { describe, expect, it } from 'vitest';
import { MAX_MINOR } from '../../src/money';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { projectCash, sale, statement } from '../settlement/support';

/**
 * A settlement day of 9,300 sales at the largest amount the doors take owes more than int8's 2^63 − 1 minor
 * units, and when it never comes it is a settlement_missing of that amount (numeric since
 * sums-settlement-day-beyond-int8). A write-off of it was accepted, and the journal books a write-off as one line
 * (an int8 column, as every line): the decision failed there with "bigint out of range" and was set aside, so
 * the settlement leg showed it written off and the journal booked nothing. Such a write-off must be refused at
 * the door, saying why, and the journal keep going.
 */

const fx = useTestStore();
const SALES = 9_300;

describe('review16: a write-off beyond what one journal line holds', () => {
  it('is refused naming the amount; no event is set aside', async () => {
    const reqs = Array.from({ length: SALES }, (_, i) => sale(`big-${i}`, '2026-01-06', MAX_MINOR, 0n));
    for (let i = 0; i < reqs.length; i += 1_000) await fx.store.appendMany(reqs.slice(i, i + 1_000));
    await fx.store.appendMany([statement('S-1', '2026-01-06', '2026-01-12', 0n, 0n, 0)]);
    await waitVisible(fx.db.sql, fx.store);
    await projectCash(fx.db.sql, fx.store, 2_000);
    const [missing] = await fx.db.sql<{ id: string; amount_in_doubt: string }[]>`
      select id::text, amount_in_doubt::text from recon.settlement_discrepancies where type = 'settlement_missing'`;
    expect(missing?.amount_in_doubt).toBe((BigInt(SALES) * MAX_MINOR).toString());

    const r = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      {
        id: missing!.id,
        note: 'the PSP will not pay it',
        by: 'Finance',
        at: new Date('2026-01-16T09:00:00Z'),
        decision: 'write_off',
      },
    );
    const report = await projectCash(fx.db.sql, fx.store, 2_000);
    expect(report.projections.flatMap((p) => p.setAside.map((s) => `${p.name}: ${s.error}`))).toEqual([]);
    expect(r).toMatchObject({ ok: false, code: 'DECISION_NOT_APPLICABLE' });
    expect(r.ok ? '' : r.message).toMatch(/93,000,000,000,000,000\.00 EUR/);
  }, 300_000);
});
