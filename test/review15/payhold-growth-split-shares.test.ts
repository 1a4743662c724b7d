import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { payholdSteps } from './payhold-support';

/**
 * Review 15: a pay under a payment hold rule records the payment it released (the largest amount a source states)
 * and the statements held the payment's growth since, measured as the receivers' shares in the journal. Where the
 * shares do not add up to the payment (a split_mismatch, held whole by default) the two measures differ from the
 * start: a split paying its receiver 5,001.00 of a 5,000.00 payment, paid as it was, held 1.00 as "changed since
 * it was reviewed" though nothing changed; one paying 4,000.00 of 5,000.00, corrected to 5,000.00 of 6,000.00
 * after the pay, paid the 1,000.00 more to the receiver unseen. The decision now records the shares it saw too.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({}).policy;
const steps = payholdSteps(fx, policy);
const APRIL_END = new Date('2024-05-01T00:00:00Z');
const dateTime = at('2024-03-10T10:00:00Z');

/** Every source states `amount`; the register splits `share` of it to Alpha Shop (1.00 of it the receiver's fee). */
const sources = (paymentId: string, amount: bigint, share: bigint, reportId: string, observedAt: string) => [
  registerRows({
    paymentId,
    dateTime,
    amount,
    receivers: [{ name: 'Alpha Shop', amount: share - 1_00n, fee: 1_00n }],
    reportId,
    observedAt,
  }),
  periodRow({ paymentId, dateTime, amount, merchantFee: 1_00n, reportId, observedAt }),
  webhook({ paymentId, processedAt: dateTime, amount, fee: 1_00n, receivedAt: observedAt }),
];

const completed = (reportId: string, day: string, announced: number) =>
  syncCompleted({
    from: at('2024-03-10T00:00:00Z'),
    to: at('2024-03-11T00:00:00Z'),
    completedAt: at(day),
    reportId,
    announced,
  });

describe('review15: a paid split payment’s growth is measured against the shares its decision saw', () => {
  it('paid as it was, a split of more than its payment holds nothing; one of less, grown since, holds the growth', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sources('pay-over', 5000_00n, 5001_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      ...sources('pay-under', 5000_00n, 4000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      completed('rep-1', '2024-03-14T00:00:00Z', 2),
    ]);
    await steps.settle();
    const over = await steps.discrepancy('pay-over', 'split_mismatch');
    const under = await steps.discrepancy('pay-under', 'split_mismatch');
    // open: each payment is held whole
    expect((await steps.held(APRIL_END)).map(([p]) => p).sort()).toEqual(['pay-over', 'pay-under']);
    for (const id of [over, under])
      expect(await steps.decide(id, 'pay', new Date('2024-03-20T09:00:00Z'))).toMatchObject({ ok: true });
    await steps.settle();
    // paid as they were: nothing changed, nothing held
    expect(await steps.held(APRIL_END)).toEqual([]);

    // the PSP corrects the second: 6,000.00, of which 5,000.00 to Alpha Shop (the same 1,000.00 unassigned)
    await appendAll(fx.store, [
      ...sources('pay-under', 6000_00n, 5000_00n, 'rep-2', at('2024-04-05T00:00:00Z')),
      completed('rep-2', '2024-04-06T00:00:00Z', 1),
    ]);
    await steps.settle();
    const april = await steps.held(APRIL_END);
    expect(april.map(([p, a]) => [p, a])).toEqual([['pay-under', 1000_00n]]);
    expect(april[0]![2]).toMatch(/the payment changed since it was reviewed/);

    // the acceptance recorded the shares its person saw beside the payment it released
    const [accepted] = (await fx.store.readStream(discrepancyStream(under))).filter((e) =>
      isEvent(DiscrepancyAccepted, e),
    );
    expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({ released: '500000', releasedShares: '400000' });
  });
});
