import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { ExceptionDecisionProposed, exceptionStream } from '../../src/events/exception-events';
import { approveDecision, proposeDecision, rejectDecision } from '../../src/exceptions/actions';
import { applyDecisionRows } from '../../src/exceptions/bulk';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { releasedByPay } from '../../src/reconciliation/decisions';
import { amountInDoubt } from '../../src/reconciliation/discrepancy-summary';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, type Team } from '../exceptions/support';
import { order } from '../orders/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 15: under RECON_HOLD_POLICY=fee_mismatch=payment the statements hold a fee difference's whole payment,
 * so a `pay` releases the payment (releasedByPay), not the 4.00 in doubt. An analyst proposed to pay a
 * fee_mismatch on a payment of 5,000.00 (above pay.approvalAbove: it waits). The PSP then corrected the payment
 * to 9,000.00 in every source, the fee difference still 4.00. The approval was bound to the amount in doubt
 * alone, so it went through and released 9,000.00 on a proposal to release 5,000.00. A proposal now records what
 * it releases and an approval (every door: console, API, CLI, Decisions sheet) is refused when that changed.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let fee = '';
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;
const holdsWhole = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const limit = exceptionPolicyOf(exceptionsConfigFrom({ pay: { approvalAbove: '100000' } }).config).policy;
const t = at('2024-03-10T10:00:00Z');

/** The payment as all three sources state it: the register and period report 1.00 fee, the webhook 5.00. */
const sources = (amount: bigint, reportId: string, observedAt: string) => [
  registerRows({
    paymentId: 'pay-f',
    orderId: 'ord-f',
    dateTime: t,
    amount,
    receivers: [{ name: 'Alpha Shop', amount: amount - 1_00n, fee: 1_00n }],
    reportId,
    observedAt,
  }),
  periodRow({ paymentId: 'pay-f', orderId: 'ord-f', dateTime: t, amount, merchantFee: 1_00n, reportId, observedAt }),
  webhook({ paymentId: 'pay-f', orderId: 'ord-f', processedAt: t, amount, fee: 5_00n, receivedAt: observedAt }),
];

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('SM-A', 'Alpha Shop'),
    order({ order_id: 'ord-f', amount: '5000.00', currency: 'UAH', created_at: '2024-03-10T08:00:00Z', split: '' }),
    ...sources(5000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
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

const now = async () => {
  const found = await getDiscrepancy(db.sql, fee);
  if (!found.ok || !found.value) throw new Error('no fee_mismatch');
  return { inDoubt: amountInDoubt(found.value), released: releasedByPay(found.value, holdsWhole) };
};
const acceptances = async () =>
  (await store.readStream(discrepancyStream(fee))).filter((e) => isEvent(DiscrepancyAccepted, e));
const lastProposal = async () => {
  const ps = (await store.readStream(exceptionStream(fee))).filter((e) => isEvent(ExceptionDecisionProposed, e));
  return dataOf(ExceptionDecisionProposed, ps[ps.length - 1]!);
};

describe('review15: an approval of a pay releases what was proposed, or is refused', () => {
  it('refuses the approval when the payment changed under the same amount in doubt; approved once proposed again', async () => {
    expect(await now()).toEqual({ inDoubt: 4_00n, released: 5000_00n });
    const p = await proposeDecision(deps(), team.analyst, { id: fee, decision: 'pay', note: 'PSP confirmed' });
    expect(p.summary).toBe("propose pay (needs a second person's approval)");
    const first = (await lastProposal()).proposal;

    // the PSP corrects the payment in every source: the fee difference (the amount in doubt) stays 4.00
    await appendAll(store, sources(9000_00n, 'rep-2', at('2024-03-16T00:00:00Z')));
    await project(db.sql, store);
    expect(await now()).toEqual({ inDoubt: 4_00n, released: 9000_00n });

    // the Decisions sheet's approve row, naming the proposal it showed
    const sheet = await applyDecisionRows(
      deps(),
      team.approver,
      [{ row: 2, request: { action: 'approve', id: fee, note: 'checked', proposal: first } }],
      { dryRun: false },
    );
    expect(sheet.ok).toBe(false);
    expect(!sheet.ok && sheet.problems[0]?.message).toMatch(/release of 5,000\.00 UAH.*9,000\.00 UAH/);

    await expect(approveDecision(deps(), team.approver, { id: fee, note: 'checked' })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/pay was proposed for a release of 5,000\.00 UAH held.*9,000\.00 UAH now/),
    });
    expect(await acceptances()).toHaveLength(0);

    // rejected and proposed again on the payment as it is now: the approval releases that
    await rejectDecision(deps(), team.approver, { id: fee, note: 'the payment changed' });
    await proposeDecision(deps(), team.analyst, { id: fee, decision: 'pay', note: 'PSP confirmed 9,000.00' });
    expect(await lastProposal()).toMatchObject({ amountInDoubt: '400', released: '900000' });
    await approveDecision(deps(), team.approver, { id: fee, note: 'checked the 9,000.00' });
    const [accepted] = await acceptances();
    expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({ decision: 'pay', acceptedBy: team.approver.id });
  });
});
