import { describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { holdReason } from '../../src/export/i18n/labels';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';

/**
 * Review 15: under RECON_HOLD_POLICY=fee_mismatch=payment the statements hold a fee difference's whole payment,
 * and a `pay` releases it. The release was bound to the amount in doubt alone (the fee difference): once paid,
 * each statement released the payment's whole current net, so a payment the PSP corrected from 5,000.00 to
 * 9,000.00 after the decision (the fee difference unchanged) had its 4,000.00 paid out though nobody saw it.
 * The acceptance now records what it released, and the statements hold the payment's growth above it.
 */

const fx = useTestStore();
const policy = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=payment' }).policy;
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  projections: [journal, reconciliation],
});

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const MARCH_END = new Date('2024-04-01T00:00:00Z');
const APRIL_END = new Date('2024-05-01T00:00:00Z');

/** The payment as every source states it: the register and period report a 1.00 fee, the webhook 5.00. */
const sources = (paymentId: string, amount: bigint, reportId: string, observedAt: string) => {
  const dateTime = at('2024-03-10T10:00:00Z');
  return [
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
};

const held = async (periodEnd: Date) => {
  const cut = (await ledgerPosition(fx.db.sql))!;
  return ((await heldAt(fx.db.sql, fx.store, cut, { periodEnd, policy })) ?? []).map(
    (h) => [h.paymentId, h.amount, h.reason] as const,
  );
};
const netOf = async (paymentId: string, periodEnd: Date) => {
  const [r] = await fx.db.sql<{ net: string | null }[]>`
    select sum(net)::text as net from recon.journal_entries where payment_id = ${paymentId} and booked_at < ${periodEnd}`;
  return BigInt(r?.net ?? '0');
};
const feeMismatch = async (paymentId: string) =>
  (
    await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where payment_id = ${paymentId} and type = 'fee_mismatch'`
  )[0]!.id;

describe('review15: a pay under a payment hold rule releases the payment its person saw, not its growth since', () => {
  it('month 1 releases 5,000.00; month 2 the payment is 9,000.00: exactly the 4,000.00 is held, then a shrink holds nothing', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sources('pay-g', 5000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      ...sources('pay-s', 5000_00n, 'rep-1', at('2024-03-11T00:00:00Z')),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 2,
      }),
    ]);
    await settle();
    const grows = await feeMismatch('pay-g');
    const shrinks = await feeMismatch('pay-s');
    // open: the whole payment is held
    const march = await netOf('pay-g', MARCH_END);
    expect((await held(MARCH_END)).map(([p, a]) => [p, a])).toEqual([
      ['pay-g', march],
      ['pay-s', march],
    ]);

    // month 1: paid, the whole 5,000.00 released (and recorded so)
    for (const id of [grows, shrinks]) {
      const r = await acceptDiscrepancy(
        { sql: fx.db.sql, store: fx.store },
        {
          id,
          note: 'PSP confirmed',
          by: 'Olena K.',
          at: new Date('2024-03-20T09:00:00Z'),
          decision: 'pay',
          holdPolicy: policy,
        },
      );
      expect(r).toMatchObject({ ok: true });
    }
    await settle();
    expect(await held(MARCH_END)).toEqual([]);

    // month 2: the PSP corrects one payment to 9,000.00 and the other to 3,000.00, the fee difference still 4.00
    await appendAll(fx.store, [
      ...sources('pay-g', 9000_00n, 'rep-2', at('2024-04-05T00:00:00Z')),
      ...sources('pay-s', 3000_00n, 'rep-2', at('2024-04-05T00:00:00Z')),
    ]);
    await settle();
    // the 9,000.00 payment adds 4,000.00 more to the statement than it did when it was paid...
    expect((await netOf('pay-g', APRIL_END)) - march).toBe(4000_00n);
    // ...and exactly that is held, nothing more, nothing less; the 3,000.00 one holds nothing (nothing asked twice)
    const april = await held(APRIL_END);
    expect(april.map(([p, a]) => [p, a])).toEqual([['pay-g', 4000_00n]]);
    const reason = april[0]![2];
    expect(reason).toMatch(/the payment changed since it was reviewed/);
    expect(reason).not.toMatch(/decision|released|fee_mismatch|pay\b/);
    // in the statement's language
    expect(holdReason(reason, 'uk')).not.toBe(reason);
    expect(holdReason(reason, 'uk')).toMatch(/платіж змінився/);

    // the acceptance recorded what its person released: the payment as it was then
    for (const id of [grows, shrinks]) {
      const [accepted] = (await fx.store.readStream(discrepancyStream(id))).filter((e) =>
        isEvent(DiscrepancyAccepted, e),
      );
      expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({
        decision: 'pay',
        amount: '400',
        released: '500000',
      });
    }
  });
});
