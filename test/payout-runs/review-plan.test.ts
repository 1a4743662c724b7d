import { describe, expect, it } from 'vitest';
import { type PlanInput, planRun, type StatementRun } from '../../src/payout-runs/plan';

/**
 * A hostile review of what a run pays (pure planRun): a reference asked by two statement runs of the same cut
 * is paid once; money whose release was taken back (revoked, or decided withhold since) is not paid.
 */

const D1 = '11111111-1111-4111-8111-111111111111';
const payees = new Map([['SM-A', { name: 'A shop', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]);
const row = (reference: string, payable: string, holds: [string, string][] = []) => ({
  subMerchantId: 'SM-A',
  currency: 'EUR',
  reference,
  payable,
  holds,
});
const run = (id: string, payouts: StatementRun['payouts']): StatementRun => ({ id, month: '2026-10', payouts });
const E1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const E2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

const input = (o: Partial<PlanInput>): PlanInput => ({
  runs: [],
  before: null,
  payoutRuns: [],
  payees,
  decisions: new Map(),
  paidByBank: new Map(),
  ...o,
});

describe('review: a run never pays one reference twice', () => {
  it('the month issued for all and for one sub-merchant at the same cut (one reference, two runs): paid once', () => {
    // statements/payouts.ts: a run at the same cut is not "earlier", so both ask RS-…-EUR for the same amount
    const plan = planRun(
      input({
        runs: [run(E1, [row('RS-SM-A-2026-10-EUR', '100000')]), run(E2, [row('RS-SM-A-2026-10-EUR', '100000')])],
      }),
    );
    expect(plan.lines.map((l) => l.reference)).toEqual(['RS-SM-A-2026-10-EUR']);
    expect(plan.lines[0]!.statementRun).toBe(E1);
  });
});

describe('review: money whose release was taken back is not paid', () => {
  const held = run(E1, [row('RS-SM-A-2026-10-EUR', '100000', [[D1, '2500']])]);
  // issued again after D1 was decided pay: 25.00 released into the difference
  const released = run(E2, [row('RS-SM-A-2026-10-EUR-2', '2500')]);

  it('decided pay, then revoked before the run: the line is left out (the hold is in force again), listed', () => {
    const plan = planRun(input({ runs: [held, released], decisions: new Map([[D1, 'revoked']]) }));
    expect(plan.lines.map((l) => l.reference)).toEqual(['RS-SM-A-2026-10-EUR']);
    expect(plan.leftOut).toEqual([
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        amount: '2500',
        reference: 'RS-SM-A-2026-10-EUR-2',
        reason: 'hold_in_force',
      },
    ]);
  });

  it('decided withhold since: left out as well; decided pay or resolved by the sources: paid', () => {
    const withheld = planRun(input({ runs: [held, released], decisions: new Map([[D1, 'withhold']]) }));
    expect(withheld.leftOut.map((l) => [l.reference, l.reason])).toEqual([['RS-SM-A-2026-10-EUR-2', 'hold_in_force']]);
    for (const d of ['pay', 'open'] as const) {
      const plan = planRun(input({ runs: [held, released], decisions: new Map([[D1, d]]) }));
      expect(plan.lines.map((l) => l.reference)).toEqual(['RS-SM-A-2026-10-EUR', 'RS-SM-A-2026-10-EUR-2']);
      expect(plan.leftOut).toEqual([]);
    }
  });
});

describe('review: a creditor name the file can carry', () => {
  const one = (payee: { name: string; legalName: string | null }) =>
    planRun(
      input({
        runs: [run(E1, [row('RS-SM-A-2026-10-EUR', '100')])],
        payees: new Map([['SM-A', { ...payee, payoutAccount: 'FR1420041010050500013M02606' }]]),
      }),
    );

  it('a legal name with nothing printable falls back to the name; neither: left out, listed (the draft still lands)', () => {
    expect(one({ name: 'A shop', legalName: ' \u0085 ' }).lines.map((l) => l.creditorName)).toEqual(['A shop']);
    const none = one({ name: '\u200f', legalName: null });
    expect(none.lines).toEqual([]);
    expect(none.leftOut.map((l) => l.reason)).toEqual(['no_name']);
  });
});

describe('review: a month stated lower is paid lowered, never at the earlier figure', () => {
  const first = run(E1, [row('RS-SM-A-2026-10-EUR', '100000')]);
  // a correction: the month now owes 700.00 in all; it asks nothing and records the figure
  const lower = run(E2, [{ ...row('', '0'), reference: null, stillAsked: '70000' }]);

  it('the first ask not yet paid: paid at what the month still asks', () => {
    const plan = planRun(input({ runs: [first, lower] }));
    expect(plan.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2026-10-EUR', '70000']]);
  });

  it('stated at nothing: no line at all', () => {
    const none = run(E2, [{ ...row('', '0'), reference: null, stillAsked: '0' }]);
    expect(planRun(input({ runs: [first, none] })).lines).toEqual([]);
  });

  it('the first ask already in a run: nothing more is paid (the payouts leg reports the 300.00 paid beyond)', () => {
    const earlier = planRun(input({ runs: [first] }));
    const standing = {
      id: 'PR-2026-10-1',
      status: 'sent',
      lines: earlier.lines,
    } as unknown as PlanInput['payoutRuns'][number];
    expect(planRun(input({ runs: [first, lower], payoutRuns: [standing] })).lines).toEqual([]);
  });
});

describe('review: an account that is not an IBAN is paid only with its bank named', () => {
  const asks = run(E1, [row('RS-SM-A-2026-10-EUR', '100000')]);
  const withAccount = (payoutAccount: string, payoutBic?: string) =>
    new Map([['SM-A', { name: 'A shop', legalName: null, payoutAccount, payoutBic: payoutBic ?? null }]]);

  it('no BIC in the directory: left out as no_bank_identifier, with its amount', () => {
    const plan = planRun(input({ runs: [asks], payees: withAccount('40817810099910004312') }));
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([
      ['RS-SM-A-2026-10-EUR', '100000', 'no_bank_identifier'],
    ]);
  });

  it('with a BIC: paid, the BIC as the creditor agent; an IBAN needs none, and carries one when given', () => {
    const other = planRun(input({ runs: [asks], payees: withAccount('40817810099910004312', 'SABRRUMMXXX') }));
    expect(other.lines.map((l) => [l.creditorAccount, l.creditorAgent])).toEqual([
      ['40817810099910004312', 'SABRRUMMXXX'],
    ]);
    const iban = planRun(input({ runs: [asks] }));
    expect(iban.lines.map((l) => [l.creditorAccount, l.creditorAgent])).toEqual([
      ['FR1420041010050500013M02606', undefined],
    ]);
    const both = planRun(input({ runs: [asks], payees: withAccount('FR1420041010050500013M02606', 'BNPAFRPP') }));
    expect(both.lines[0]!.creditorAgent).toBe('BNPAFRPP');
  });
});
