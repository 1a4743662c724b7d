import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import { type OperationArgs, paymentOperation } from './holds-support';

/**
 * Review 16: an authorised payment's money is booked by its captures, and a discrepancy of its authorisation holds
 * all of it (a `payment` rule). A pay released the payment as its person saw it (the authorised amount), but the
 * statements weighed growth since for sales only (purchase, capture, recurrent): captures beyond the authorised
 * amount decided on, booked after the pay, were paid out though nobody saw them. A purchase's pay held the same.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({}).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const day = (d: string) => at(`${d}T00:00:00Z`);

const operation = (...args: OperationArgs) => paymentOperation('pay-a', ...args);

const completed = (from: string, reportId: string, done: string, announced: number) =>
  syncCompleted({ from: day(from), to: at(`${from}T23:59:59Z`), completedAt: day(done), reportId, announced });

describe('review16: a paid authorisation holds the captures beyond what its person saw', () => {
  it('an auth of 5,000.00 paid with its capture; a second capture of 4,000.00 after the pay is held', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      // the notification of the authorisation says 4,900.00: an amount_mismatch of the auth
      ...operation('auth', 5000_00n, at('2024-03-10T10:00:00Z'), 'rep-1', day('2024-03-11'), 4900_00n),
      ...operation('capture', 5000_00n, at('2024-03-10T12:00:00Z'), 'rep-1', day('2024-03-11')),
      completed('2024-03-10', 'rep-1', '2024-03-14', 2),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-a', 'amount_mismatch');
    // open: the whole payment (its capture) is held
    expect((await steps.held(APRIL_END)).map(([p, a]) => [p, a])).toEqual([['pay-a', 5000_00n - 1_00n]]);
    expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    // paid as it was: nothing held
    expect(await steps.held(APRIL_END)).toEqual([]);

    // April: the PSP books a second capture of 4,000.00 under the payment, 9,000.00 captured of the 5,000.00 seen
    await appendAll(fx.store, [
      ...operation('capture', 4000_00n, at('2024-04-02T10:00:00Z'), 'rep-2', day('2024-04-03')),
      completed('2024-04-02', 'rep-2', '2024-04-06', 1),
    ]);
    await steps.settle();
    const april = await steps.held(APRIL_END);
    expect(april.map(([p, a]) => [p, a])).toEqual([['pay-a', 4000_00n]]);
    expect(april[0]![2]).toMatch(/the payment changed since it was reviewed/);
  });
});
