import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import { type OperationArgs, paymentOperation } from './holds-support';

/**
 * Review 16: a payment authorised once may be captured in parts, each capture an operation of its own. A pay of a
 * discrepancy of one capture records the release of that capture (its amount, its shares), and the statements
 * weighed it against every capture of the payment: paid as it was, a capture of 3,000.00 beside another of
 * 2,000.00 held the 2,000.00 as "changed since it was reviewed", though neither changed. A capture's release is
 * weighed against that capture; the capture corrected upwards since still holds its growth.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({}).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const day = (d: string) => at(`${d}T00:00:00Z`);
const AUTH = at('2024-03-10T09:00:00Z');
const FIRST = at('2024-03-10T10:00:00Z');
const SECOND = at('2024-03-10T12:00:00Z');

const operation = (...args: OperationArgs) => paymentOperation('pay-c', ...args);

const completed = (reportId: string, done: string, announced: number) =>
  syncCompleted({ from: day('2024-03-10'), to: day('2024-03-11'), completedAt: day(done), reportId, announced });

describe('review16: a paid capture is weighed against itself, not the payment’s other captures', () => {
  it('paid as it was, nothing is held; the capture corrected upwards since holds exactly its growth', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...operation('auth', 5000_00n, AUTH, 'rep-1', day('2024-03-11')),
      // the first capture's notification says 2,900.00: an amount_mismatch of that capture
      ...operation('capture', 3000_00n, FIRST, 'rep-1', day('2024-03-11'), 2900_00n),
      ...operation('capture', 2000_00n, SECOND, 'rep-1', day('2024-03-11')),
      completed('rep-1', '2024-03-14', 3),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-c', 'amount_mismatch');
    // open: the whole payment (both captures) is held
    expect((await steps.held(APRIL_END)).map(([p, a]) => [p, a])).toEqual([['pay-c', 5000_00n - 2_00n]]);
    expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    // paid as it was, and nothing of the payment changed since: nothing is held
    expect(await steps.held(APRIL_END)).toEqual([]);

    // April: the PSP corrects the first capture to 3,500.00 (the notification still 2,900.00)
    await appendAll(fx.store, [
      ...operation('capture', 3500_00n, FIRST, 'rep-2', day('2024-04-05'), 2900_00n),
      completed('rep-2', '2024-04-06', 1),
    ]);
    await steps.settle();
    const april = await steps.held(APRIL_END);
    expect(april.map(([p, a]) => [p, a])).toEqual([['pay-c', 500_00n]]);
    expect(april[0]![2]).toMatch(/changed since it was reviewed|more in doubt since/);
  });
});
