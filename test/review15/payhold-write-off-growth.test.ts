import { describe, expect, it } from 'vitest';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { ExceptionDecisionProposed, exceptionStream } from '../../src/events/exception-events';
import { approveDecision, proposeDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { addTeam, project } from '../exceptions/support';
import { payholdSteps } from './payhold-support';

/**
 * Review 15: under RECON_HOLD_POLICY=fee_mismatch=payment a fee difference holds its whole payment, and a `pay`
 * records the payment it released, so the statements hold what it grows by since. A `write_off` releases the
 * payment just the same (the difference written off, the payment paid) but recorded no release: a payment of
 * 5,000.00 whose 4.00 difference was written off, corrected by the PSP to 9,000.00 since, paid the 4,000.00 out
 * unseen; and a write-off waiting for approval was approved on the 9,000.00 though proposed on the 5,000.00.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const dateTime = at('2024-03-10T10:00:00Z');

/** The payment as every source states it: the register and period report a 1.00 fee, the webhook 5.00. */
const sources = (paymentId: string, amount: bigint, reportId: string, observedAt: string) => [
  registerRows({
    paymentId,
    dateTime,
    amount,
    receivers: [{ name: 'Alpha Shop', amount: amount - 1_00n, fee: 1_00n }],
    reportId,
    observedAt,
  }),
  periodRow({ paymentId, dateTime, amount, merchantFee: 1_00n, reportId, observedAt }),
  webhook({ paymentId, processedAt: dateTime, amount, fee: 5_00n, receivedAt: observedAt }),
];
const acceptances = async (id: string) =>
  (await fx.store.readStream(discrepancyStream(id)))
    .filter((e) => isEvent(DiscrepancyAccepted, e))
    .map((e) => dataOf(DiscrepancyAccepted, e));

describe('review15: a write-off under a payment hold rule releases the payment its person saw, not its growth', () => {
  it('written off at 5,000.00, corrected to 9,000.00: exactly the 4,000.00 is held', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sources('pay-w', 5000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      ...sources('pay-a', 5000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 2,
      }),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-w', 'fee_mismatch');
    expect(await steps.decide(id, 'write_off', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    expect((await steps.held(APRIL_END)).map(([p]) => p)).toEqual(['pay-a']);
    expect(await acceptances(id)).toMatchObject([{ decision: 'write_off', amount: '400', released: '500000' }]);

    await appendAll(fx.store, sources('pay-w', 9000_00n, 'rep-2', at('2024-04-05T00:00:00Z')));
    await steps.settle();
    const april = (await steps.held(APRIL_END)).filter(([p]) => p === 'pay-w');
    expect(april.map(([p, a]) => [p, a])).toEqual([['pay-w', 4000_00n]]);
    expect(april[0]![2]).toMatch(/the payment changed since it was reviewed/);
  });

  it('a write-off waiting for approval is refused once the payment changed under the same difference', async () => {
    const team = await addTeam(fx.store);
    await project(fx.db.sql, fx.store);
    const id = await steps.discrepancy('pay-a', 'fee_mismatch');
    let tick = 0;
    const deps = (): ExceptionDeps => ({
      sql: fx.db.sql,
      store: fx.store,
      // a write-off above 1.00 waits for a second person
      policy: exceptionPolicyOf(exceptionsConfigFrom({ writeOff: { approvalAbove: '100' } }).config).policy,
      holdPolicy: policy,
      now: () => new Date(Date.parse('2024-04-01T12:00:00Z') + ++tick),
    });
    const p = await proposeDecision(deps(), team.analyst, { id, decision: 'write_off', note: 'PSP confirmed' });
    expect(p.summary).toBe("propose write_off (needs a second person's approval)");
    const proposed = (await fx.store.readStream(exceptionStream(id))).filter((e) =>
      isEvent(ExceptionDecisionProposed, e),
    );
    expect(dataOf(ExceptionDecisionProposed, proposed[0]!)).toMatchObject({ amountInDoubt: '400', released: '500000' });

    await appendAll(fx.store, sources('pay-a', 9000_00n, 'rep-3', at('2024-04-06T00:00:00Z')));
    await steps.settle();
    await project(fx.db.sql, fx.store);
    await expect(approveDecision(deps(), team.approver, { id, note: 'checked' })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/write_off was proposed for a release of 5,000\.00 UAH held.*9,000\.00 UAH now/),
    });
    expect(await acceptances(id)).toEqual([]);
  });
});
