import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, cancelRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { type PlanInput, planRun, type StatementRun } from '../../src/payout-runs/plan';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID } from './fixtures';

/**
 * A hostile review of payout runs after "A month stated lower" (docs/bank.md): a reference a run paid at a
 * lowered figure, raised again by a later correction, is paid the rest (the month's money is paid, once); a run
 * drafted before a correction lowered what it pays is neither approved, filed nor sent (it would pay money the
 * month no longer owes, or money now held).
 */

const payees = new Map([['SM-A', { name: 'A shop', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]);
const REF = 'RS-SM-A-2026-10-EUR';
const row = (reference: string | null, payable: string, stillAsked?: string) => ({
  subMerchantId: 'SM-A',
  currency: 'EUR',
  reference,
  payable,
  ...(stillAsked !== undefined ? { stillAsked } : {}),
  holds: [] as [string, string][],
});
const run = (id: string, payouts: StatementRun['payouts']): StatementRun => ({ id, month: '2026-10', payouts });
const E1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const E2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const E3 = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const input = (o: Partial<PlanInput>): PlanInput => ({
  runs: [],
  before: null,
  payoutRuns: [],
  payees,
  decisions: new Map(),
  paidByBank: new Map(),
  ...o,
});
const sent = (id: string, plan: ReturnType<typeof planRun>) =>
  ({ id, status: 'sent', lines: plan.lines }) as unknown as PlanInput['payoutRuns'][number];

describe('review: a reference paid lowered, then raised again, is paid the rest', () => {
  const first = run(E1, [row(REF, '100000')]);
  // 200.00 held for a discrepancy found since: the month owes 800.00
  const lower = run(E2, [row(null, '0', '80000')]);
  // the hold released: 1,000.00 again; 1,000.00 was asked, so nothing new is asked
  const raised = run(E3, [row(null, '0', '100000')]);

  it('paid 800.00 under the first reference, the month back at 1,000.00: a run pays the 200.00 left', () => {
    const paid = planRun(input({ runs: [first, lower] }));
    expect(paid.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '80000']]);
    const next = planRun(input({ runs: [first, lower, raised], payoutRuns: [sent('PR-2026-10-1', paid)] }));
    expect(next.lines.map((l) => [l.reference, l.amount, l.statementRun])).toEqual([[REF, '20000', E1]]);
    // and once that is paid too, nothing more: the month's 1,000.00 paid once
    const after = planRun(
      input({ runs: [first, lower, raised], payoutRuns: [sent('PR-2026-10-1', paid), sent('PR-2026-10-2', next)] }),
    );
    expect(after.lines).toEqual([]);
  });

  it('paid 1,000.00 before the month was stated lower, then raised: nothing more (paid in full once)', () => {
    const paid = planRun(input({ runs: [first] }));
    const next = planRun(input({ runs: [first, lower, raised], payoutRuns: [sent('PR-2026-10-1', paid)] }));
    expect(next.lines).toEqual([]);
  });

  it('a cancelled run took nothing: the reference is paid what it still asks', () => {
    const paid = planRun(input({ runs: [first, lower] }));
    const cancelled = { ...sent('PR-2026-10-1', paid), status: 'cancelled' } as PlanInput['payoutRuns'][number];
    const next = planRun(input({ runs: [first, lower, raised], payoutRuns: [cancelled] }));
    expect(next.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
  });
});

describe('review: a run drafted before the month was stated lower is not paid at the old figure', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  });
  afterAll(async () => {
    await db.drop();
  });

  const ana = person('ana', 'analyst');
  const iryna = person('iryna', 'approver');
  const at = { timezone: 'Europe/Kyiv', now: new Date('2026-11-26T09:00:00.000Z') };
  const payout = (o: { reference: string | null; payable: string; stillAsked?: string }) => ({
    subMerchantId: 'SM-A',
    currency: 'EUR',
    reference: o.reference,
    amountDue: o.stillAsked ?? o.payable,
    held: '0',
    payable: o.payable,
    ...(o.stillAsked !== undefined ? { stillAsked: o.stillAsked } : {}),
    holds: [] as [string, string][],
  });

  it('drafted at 1,000.00, the month stated at 800.00 before approval: approval refused, naming the reference', async () => {
    const month = '2026-04';
    await issue(store, month, [payout({ reference: 'RS-SM-A-2026-04-EUR', payable: '100000' })]);
    const id = (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID })).run!.id;
    await issue(store, month, [payout({ reference: null, payable: '0', stillAsked: '80000' })]);
    await expect(approveRun(store, iryna, id, at)).rejects.toMatchObject({
      code: 'STATED_LOWER',
      message: expect.stringContaining('RS-SM-A-2026-04-EUR'),
    });
  });

  it('approved at 1,000.00, the month stated lower before sending: no file, not sent; cancelled, drafted again at 800.00', async () => {
    const month = '2026-05';
    await issue(store, month, [payout({ reference: 'RS-SM-A-2026-05-EUR', payable: '100000' })]);
    const id = (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID })).run!.id;
    await approveRun(store, iryna, id, at);
    await issue(store, month, [payout({ reference: null, payable: '0', stillAsked: '80000' })]);
    await expect(paymentFile(store, ana, id, at)).rejects.toMatchObject({ code: 'STATED_LOWER' });
    await expect(sendRun(store, ana, id, at)).rejects.toMatchObject({ code: 'STATED_LOWER' });
    await cancelRun(store, iryna, id, 'the month was stated lower', at.now);
    const again = await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID });
    expect(again.run!.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2026-05-EUR', '80000']]);
  });

  it('stated higher since the draft (more asked under a new reference): the draft is still approved and sent', async () => {
    const month = '2026-06';
    await issue(store, month, [payout({ reference: 'RS-SM-A-2026-06-EUR', payable: '100000' })]);
    const id = (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID })).run!.id;
    await issue(store, month, [payout({ reference: 'RS-SM-A-2026-06-EUR-2', payable: '5000', stillAsked: '105000' })]);
    await approveRun(store, iryna, id, at);
    expect((await sendRun(store, ana, id, at)).status).toBe('sent');
  });
});

describe('review: the figure of the latest cut is in force, whenever it was recorded', () => {
  const at = (cut: string, r: StatementRun): StatementRun => ({ ...r, cut });
  const first = at('100/1', run(E1, [row(REF, '100000')]));
  const lower = at('200/1', run(E2, [row(null, '0', '80000')]));
  const raised = at('300/1', run(E3, [row(`${REF}-2`, '10000', '110000')]));
  // SM-A's statement regenerated at the cut of the lowering, recorded after the raise
  const again = at('200/1', run('dddddddd-dddd-4ddd-8ddd-dddddddddddd', [row(null, '0', '80000')]));

  it('a run at an earlier cut recorded last lowers nothing: both asks paid in full (1,100.00)', () => {
    const plan = planRun(input({ runs: [first, lower, raised, again] }));
    expect(plan.lines.map((l) => [l.reference, l.amount])).toEqual([
      [REF, '100000'],
      [`${REF}-2`, '10000'],
    ]);
  });

  it('recorded in the order of their cuts, the lowering is in force until the raise', () => {
    expect(planRun(input({ runs: [first, lower] })).lines.map((l) => l.amount)).toEqual(['80000']);
  });
});

describe('review: money released into an earlier ask a correction restored is checked like any release', () => {
  const D1 = '11111111-1111-4111-8111-111111111111';
  const first = run(E1, [row(REF, '100000')]);
  // 200.00 held for D1 since: the month owes 800.00, the first ask is lowered to it
  const held = run(E2, [{ ...row(null, '0', '80000'), holds: [[D1, '20000']] }]);
  // D1 decided pay: released, the month is 1,000.00 again and the first ask is restored (nothing new is asked)
  const released = run(E3, [row(null, '0', '100000')]);

  it('the release taken back before the run: the restored ask is left out (held again), listed', () => {
    const plan = planRun(input({ runs: [first, held, released], decisions: new Map([[D1, 'revoked']]) }));
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([[REF, '100000', 'hold_in_force']]);
  });

  it('decided pay: paid in full, naming the hold released into it', () => {
    const plan = planRun(input({ runs: [first, held, released], decisions: new Map([[D1, 'pay']]) }));
    expect(plan.lines.map((l) => [l.reference, l.amount, l.releasedHolds])).toEqual([
      [REF, '100000', [{ discrepancyId: D1, amount: '20000', decision: 'pay' }]],
    ]);
  });

  it('held again by a later correction (the month back at 800.00): the 800.00 nobody disputes is paid', () => {
    const again = run('dddddddd-dddd-4ddd-8ddd-dddddddddddd', [{ ...row(null, '0', '80000'), holds: [[D1, '20000']] }]);
    const plan = planRun(input({ runs: [first, held, released, again], decisions: new Map([[D1, 'withhold']]) }));
    expect(plan.lines.map((l) => [l.reference, l.amount, l.releasedHolds])).toEqual([[REF, '80000', []]]);
    expect(plan.heldInForce.map((h) => [h.discrepancyId, h.amount])).toEqual([[D1, '20000']]);
  });

  it('paid 800.00 while held, the release revoked since: the 200.00 left is not paid', () => {
    const paid = planRun(input({ runs: [first, held] }));
    const plan = planRun(
      input({
        runs: [first, held, released],
        payoutRuns: [sent('PR-2026-10-1', paid)],
        decisions: new Map([[D1, 'revoked']]),
      }),
    );
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([[REF, '20000', 'hold_in_force']]);
  });
});

describe('review: a month stated lower in one currency lowers nothing in another', () => {
  const uah = (reference: string | null, payable: string, stillAsked?: string) => ({
    ...row(reference, payable, stillAsked),
    currency: 'UAH',
  });
  it('EUR stated at 800.00, UAH unchanged: EUR paid 800.00, UAH 5,000.00 as asked', () => {
    const first = run(E1, [row(REF, '100000'), uah('RS-SM-A-2026-10-UAH', '500000')]);
    const lower = run(E2, [row(null, '0', '80000'), uah(null, '0', '500000')]);
    const plan = planRun(input({ runs: [first, lower] }));
    expect(plan.lines.map((l) => [l.reference, l.currency, l.amount])).toEqual([
      [REF, 'EUR', '80000'],
      ['RS-SM-A-2026-10-UAH', 'UAH', '500000'],
    ]);
  });
});
