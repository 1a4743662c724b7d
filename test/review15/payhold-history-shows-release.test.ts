import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { project } from '../exceptions/support';
import { payholdSteps } from './payhold-support';

/**
 * Review 15: under a `payment` hold rule a pay records the payment it released (DiscrepancyAccepted.released),
 * which is what the statements hold its growth above. An acceptance taken without the console (`recon
 * discrepancies accept`) has no proposal line, and its history line showed the decision alone: an auditor reading
 * the history could not see that a 4.00 fee difference released a 5,000.00 payment. The line now says so.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const steps = payholdSteps(fx, policy);
const dateTime = at('2024-03-10T10:00:00Z');
const observedAt = at('2024-03-11T00:00:00Z');

describe('review15: the history line of an acceptance shows what it released', () => {
  it('a pay of a 4.00 fee difference on a 5,000.00 payment: the accepted line names the 5,000.00', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      registerRows({
        paymentId: 'pay-h',
        dateTime,
        amount: 5000_00n,
        receivers: [{ name: 'Alpha Shop', amount: 4999_00n, fee: 1_00n }],
        reportId: 'rep-1',
        observedAt,
      }),
      periodRow({ paymentId: 'pay-h', dateTime, amount: 5000_00n, merchantFee: 1_00n, reportId: 'rep-1', observedAt }),
      webhook({ paymentId: 'pay-h', processedAt: dateTime, amount: 5000_00n, fee: 5_00n, receivedAt: observedAt }),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 1,
      }),
    ]);
    await steps.settle();
    const id = await steps.discrepancy('pay-h', 'fee_mismatch');
    expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await project(fx.db.sql, fx.store);
    const lines = await fx.db.sql<{ action: string; by_user: string; detail: Record<string, unknown> }[]>`
      select action, by_user, detail from recon.exception_history where discrepancy_id = ${id}::uuid`;
    expect(lines).toEqual([
      { action: 'accepted', by_user: 'Olena K.', detail: { decision: 'pay', released: '500000' } },
    ]);
  });
});
