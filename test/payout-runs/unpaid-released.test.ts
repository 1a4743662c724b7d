import { describe, expect, it } from 'vitest';
import {
  type BankPaid,
  linesPaidSince,
  type PlanInput,
  planRun,
  referencesTaken,
  type StatementRun,
} from '../../src/payout-runs/plan';
import type { PayoutRun, UnpaidRelease } from '../../src/payout-runs/runs';
import { unpaidLinesOf, unpaidPastDueAfter } from '../../src/payout-runs/unpaid';

/**
 * What a sent run the bank did not pay in full frees (pure): what the bank's debits had not paid of each line,
 * counted against the earliest runs first, and a release no longer taken by the run, so the month's next draft
 * pays exactly the rest, once.
 */

const REF = 'RS-SM-A-2026-10-EUR';
const E1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const payees = new Map([['SM-A', { name: 'A shop', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]);
const statement: StatementRun = {
  id: E1,
  month: '2026-10',
  payouts: [{ subMerchantId: 'SM-A', currency: 'EUR', reference: REF, payable: '100000', holds: [] }],
};

function run(id: string, amount: string, o: Partial<PayoutRun> = {}): PayoutRun {
  return {
    id,
    month: '2026-10',
    statementRuns: [E1],
    lines: [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        amount,
        reference: REF,
        statementRun: E1,
        creditorName: 'A shop',
        creditorAccount: 'FR1420041010050500013M02606',
        releasedHolds: [],
      },
    ],
    debtors: [],
    leftOut: [],
    releasedSinceStatement: [],
    heldInForce: [],
    draftedBy: 'ana',
    draftedAt: '2026-11-02T10:00:00.000Z',
    status: 'sent',
    approvedBy: 'iryna',
    approvedAt: '2026-11-02T11:00:00.000Z',
    executionDate: '2026-11-03',
    sentBy: 'ana',
    sentAt: '2026-11-02T12:00:00.000Z',
    fileSha256: 'a'.repeat(64),
    fileTaken: [],
    cancelledBy: null,
    cancelledAt: null,
    cancelReason: null,
    bankDidNotExecute: false,
    ...o,
  };
}

const release = (amount: string, paid: string): UnpaidRelease => ({
  releasedBy: 'ana',
  releasedAt: '2026-11-10T10:00:00.000Z',
  reason: 'the bank rejected the rest',
  bankDidNotExecute: true,
  lines: [{ reference: REF, currency: 'EUR', amount, paid }],
});

const bank = (paid: bigint, returned = 0n): BankPaid =>
  Object.assign(new Map(paid > 0n ? [[REF, paid]] : []), { returned: new Map(returned > 0n ? [[REF, returned]] : []) });

const input = (payoutRuns: PayoutRun[], paidByBank: BankPaid): PlanInput => ({
  runs: [statement],
  before: null,
  payoutRuns,
  payees,
  decisions: new Map(),
  paidByBank,
});

describe('a sent run the bank paid in part', () => {
  it('the unpaid rest is what the bank did not pay; nothing when it paid all, or when what came back is asked again', () => {
    expect(unpaidLinesOf(run('PR-2026-10-1', '100000'), [run('PR-2026-10-1', '100000')], bank(60000n))).toEqual([
      { reference: REF, currency: 'EUR', amount: '40000', paid: '60000' },
    ]);
    expect(unpaidLinesOf(run('PR-2026-10-1', '100000'), [run('PR-2026-10-1', '100000')], bank(0n))).toEqual([
      { reference: REF, currency: 'EUR', amount: '100000', paid: '0' },
    ]);
    expect(unpaidLinesOf(run('PR-2026-10-1', '100000'), [run('PR-2026-10-1', '100000')], bank(100000n))).toEqual([]);
    // paid in full, 300.00 sent back: a draft asks it again (repaysReturned), nothing to release
    expect(unpaidLinesOf(run('PR-2026-10-1', '100000'), [run('PR-2026-10-1', '100000')], bank(70000n, 30000n))).toEqual(
      [],
    );
  });

  it('released, the run takes only what the bank paid: the next draft pays the rest once, and asks nothing after', () => {
    const old = run('PR-2026-10-1', '100000', { unpaidReleased: [release('40000', '60000')] });
    expect(referencesTaken([old]).get(REF)).toBe(60000n);
    const plan = planRun(input([old], bank(60000n)));
    expect(plan.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '40000']]);
    // never released: nothing new to pay (the reviewer's finding)
    expect(planRun(input([run('PR-2026-10-1', '100000')], bank(60000n))).lines).toEqual([]);
    // the old transfer's rest booked after the release, before the new run: the draft asks nothing, a waiting run is PAID_SINCE
    expect(planRun(input([old], bank(100000n))).lines).toEqual([]);
    const waiting = run('PR-2026-10-2', '40000', { status: 'draft' });
    expect(linesPaidSince(waiting, [old, waiting], [statement], bank(100000n)).map((l) => l.reference)).toEqual([REF]);
    expect(linesPaidSince(waiting, [old, waiting], [statement], bank(60000n))).toEqual([]);
    // the new run sent and paid: nothing more
    const paidAgain = run('PR-2026-10-2', '40000');
    expect(planRun(input([old, paidAgain], bank(100000n))).lines).toEqual([]);
  });

  it('the new run pending does not free the old run again; the new run unpaid frees its own line', () => {
    const old = run('PR-2026-10-1', '100000', { unpaidReleased: [release('40000', '60000')] });
    const next = run('PR-2026-10-2', '40000');
    expect(unpaidLinesOf(old, [old, next], bank(60000n))).toEqual([]);
    expect(unpaidLinesOf(next, [old, next], bank(60000n))).toEqual([
      { reference: REF, currency: 'EUR', amount: '40000', paid: '60000' },
    ]);
  });

  it('past due: the later of the due day and the execution date plus the due days', () => {
    const due = { bookedThrough: new Map([['EUR', '2026-11-20']]), dueDays: 5, dueOn: new Map([[REF, '2026-11-06']]) };
    expect(unpaidPastDueAfter(run('PR-2026-10-1', '100000'), REF, due)).toBe('2026-11-08');
    expect(unpaidPastDueAfter(run('PR-2026-10-1', '100000', { executionDate: '2026-10-30' }), REF, due)).toBe(
      '2026-11-06',
    );
    expect(unpaidPastDueAfter(run('PR-2026-10-1', '100000'), 'RS-OTHER', due)).toBeNull();
  });
});
