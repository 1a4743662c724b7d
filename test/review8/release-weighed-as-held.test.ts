import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { proposeDecision } from '../../src/exceptions/actions';
import { applyDecisionRows } from '../../src/exceptions/bulk';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { needsSecondPerson } from '../../src/exceptions/severity';
import { acceptDiscrepancy, getDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { releasedByPay } from '../../src/reconciliation/decisions';
import { amountInDoubt } from '../../src/reconciliation/discrepancy-summary';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, type Team } from '../exceptions/support';
import { order } from '../orders/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 8: a release of held money (`pay`) above exceptions.pay.approvalAbove needs a second person (50ed240),
 * but the amount weighed was the amount in doubt, while the statements hold what the hold policy says. Under a
 * `payment` rule they hold the payment's whole net: with RECON_HOLD_POLICY=fee_mismatch=payment (a documented
 * setting) a fee difference of 4.00 on a payment of 5,000.00 held the 5,000.00, and one person released it
 * alone, the limit weighed against the 4.00. Now a release is weighed as what it releases (the whole payment
 * under a `payment` rule), at every door: an exception's accept, a Decisions sheet's sum, and
 * `recon discrepancies accept --decision pay`.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let fee = ''; // fee_mismatch on a payment of 5,000.00 UAH: 4.00 in doubt
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;
const holdsWhole = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const limit = exceptionPolicyOf(exceptionsConfigFrom({ pay: { approvalAbove: '100000' } }).config).policy;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const t = at('2024-03-10T10:00:00Z');
  const observedAt = at('2024-03-11T00:00:00Z');
  await appendAll(store, [
    subMerchant('SM-A', 'Alpha Shop'),
    order({ order_id: 'ord-f', amount: '5000.00', currency: 'UAH', created_at: '2024-03-10T08:00:00Z', split: '' }),
    registerRows({
      paymentId: 'pay-f',
      orderId: 'ord-f',
      dateTime: t,
      amount: 5000_00n,
      receivers: [{ name: 'Alpha Shop', amount: 4999_00n, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt,
    }),
    periodRow({
      paymentId: 'pay-f',
      orderId: 'ord-f',
      dateTime: t,
      amount: 5000_00n,
      merchantFee: 1_00n,
      reportId: 'rep-1',
      observedAt,
    }),
    webhook({ paymentId: 'pay-f', orderId: 'ord-f', processedAt: t, amount: 5000_00n, fee: 5_00n, receivedAt: t }),
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: at('2024-03-14T00:00:00Z'),
      reportId: 'rep-1',
      announced: 1,
    }),
  ]);
  team = await addTeam(store);
  await project(db.sql, store);
  fee = await idOf(db.sql, 'fee_mismatch');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const deps = (): ExceptionDeps => ({
  sql: db.sql,
  store,
  policy: limit,
  holdPolicy: holdsWhole,
  now: () => new Date(NOW.getTime() + ++tick),
});

describe('review8: a release weighed as what the statements hold', () => {
  it('the fixture: 4.00 in doubt, the whole 5,000.00 held under fee_mismatch=payment', async () => {
    const found = await getDiscrepancy(db.sql, fee);
    const d = found.ok ? found.value : undefined;
    expect(d).toBeDefined();
    expect(amountInDoubt(d!)).toBe(4_00n);
    expect(releasedByPay(d!, holdsWhole)).toBe(5000_00n);
    // under the default rule (difference) only the difference is held and released
    expect(releasedByPay(d!, holdPolicyFrom({}).policy)).toBe(4_00n);
  });

  it("an exception's pay of it waits for a second person", async () => {
    const rows = [{ row: 2, request: { action: 'accept' as const, id: fee, decision: 'pay', note: 'PSP confirmed' } }];
    const dry = await applyDecisionRows(deps(), team.analyst, rows, { dryRun: true });
    expect(dry.ok && dry.changes.map((c) => c.summary)).toEqual(["propose pay (needs a second person's approval)"]);
  });

  it('recon discrepancies accept --decision pay of it is refused, naming the whole payment', async () => {
    const r = await acceptDiscrepancy(
      { sql: db.sql, store },
      {
        id: fee,
        note: 'PSP confirmed',
        by: team.analyst.id,
        at: NOW,
        decision: 'pay',
        holdPolicy: holdsWhole,
        releaseAllowed: (amount, currency) => !needsSecondPerson(limit, 'pay', amount, currency),
      },
    );
    expect(r).toMatchObject({ ok: false, code: 'NEEDS_SECOND_PERSON' });
    expect(!r.ok && r.message).toContain('releasing 5,000.00 UAH held');
  });

  it('proposed, it records the amount in doubt as before and waits', async () => {
    const p = await proposeDecision(deps(), team.analyst, { id: fee, decision: 'pay', note: 'PSP confirmed' });
    expect(p.summary).toBe("propose pay (needs a second person's approval)");
  });
});
