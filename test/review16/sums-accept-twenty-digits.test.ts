import { describe, expect, it } from 'vitest';
import { MAX_MINOR } from '../../src/money';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { projectCash, sale, statement } from '../settlement/support';

/**
 * A settlement day of 10,001 sales at the largest amount the doors take owes 10^19 + 10^15 minor units, 20 digits,
 * and when it never comes it is a settlement_missing of that amount. Accepting it (no decision: nothing is
 * booked) built a DiscrepancyAccepted whose `amount` the event's schema allowed at 19 digits at most: the
 * acceptance threw a schema error instead of recording the decision. It must be recorded, the amount exact.
 */

const fx = useTestStore();
const SALES = 10_001;

describe('review16: accepting an amount in doubt of twenty digits', () => {
  it('records the acceptance with the exact amount; nothing is set aside', async () => {
    const reqs = Array.from({ length: SALES }, (_, i) => sale(`big-${i}`, '2026-01-06', MAX_MINOR, 0n));
    for (let i = 0; i < reqs.length; i += 1_000) await fx.store.appendMany(reqs.slice(i, i + 1_000));
    await fx.store.appendMany([statement('S-1', '2026-01-06', '2026-01-12', 0n, 0n, 0)]);
    await waitVisible(fx.db.sql, fx.store);
    await projectCash(fx.db.sql, fx.store, 2_000);
    const owed = (BigInt(SALES) * MAX_MINOR).toString();
    expect(owed).toHaveLength(20);
    const [missing] = await fx.db.sql<{ id: string; amount_in_doubt: string }[]>`
      select id::text, amount_in_doubt::text from recon.settlement_discrepancies where type = 'settlement_missing'`;
    expect(missing?.amount_in_doubt).toBe(owed);

    const r = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: missing!.id, note: 'the PSP pays it next week', by: 'Finance', at: new Date('2026-01-16T09:00:00Z') },
    );
    expect(r.ok).toBe(true);
    const report = await projectCash(fx.db.sql, fx.store, 2_000);
    expect(report.projections.flatMap((p) => p.setAside.map((s) => `${p.name}: ${s.error}`))).toEqual([]);
    const [row] = await fx.db.sql<{ status: string; amount_in_doubt: string }[]>`
      select status, amount_in_doubt::text from recon.settlement_discrepancies where id = ${missing!.id}::uuid`;
    expect(row).toEqual({ status: 'accepted', amount_in_doubt: owed });
  }, 300_000);
});
