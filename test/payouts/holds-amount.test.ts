import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { heldAt } from '../../src/export/payouts/holds';
import { issueStatements, ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, POS, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { bank, payouts } from './support';

/**
 * What a discrepancy holds, from real events through the projections (issue 25): the payment's net
 * contribution to the statement (its sale less its refunds, fees and the reserve withheld; a reserve released
 * after the month is not the month's), never more; a fully refunded payment holds nothing; a currency
 * mismatch holds its payment; a fee gap below the materiality holds nothing, above it the gap at most.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-holds-amount-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({
      ...deps(),
      graceHours: 48,
      bank,
      projections: [journal, reconciliation, payouts],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const dateTime = at('2024-03-10T10:00:00Z');
const observedAt = at('2024-03-11T00:00:00Z');
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };

/** Alpha Shop's part: 98.00 paid + 2.00 fee, 10.00 of it to the reserve (released after 90 days: June) */
const part = { name: 'Alpha Shop', amount: 98_00n, fee: 2_00n, reserve: 10_00n };

function purchase(
  paymentId: string,
  period: { status?: 'success' | 'failure'; currency?: string; merchantFee?: bigint },
  method: 'purchase' | 'refund' = 'purchase',
) {
  const dt = method === 'refund' ? at('2024-03-12T10:00:00Z') : dateTime;
  return [
    registerRows({
      paymentId,
      method,
      dateTime: dt,
      amount: 100_00n,
      receivers: [part],
      reportId: 'rep-1',
      observedAt,
    }),
    periodRow({
      paymentId,
      method,
      dateTime: dt,
      amount: 100_00n,
      merchantFee: 2_00n,
      ...period,
      reportId: 'rep-1',
      observedAt,
    }),
  ];
}

describe('the amount held is the payment’s net contribution, by the hold policy', () => {
  it('holds net of refunds, fees and reserve; nothing for a refunded payment; the policy per type', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      // status mismatch, then refunded in full in the month: nothing left to hold
      ...purchase('pay-refunded', { status: 'failure' }),
      ...purchase('pay-refunded', {}, 'refund'),
      // status mismatch: 100.00 − 2.00 fee − 10.00 reserve = 88.00 (the reserve is released in June)
      ...purchase('pay-reserve', { status: 'failure' }),
      // currency mismatch: the amount is in doubt, so is all of the payment
      ...purchase('pay-currency', { currency: 'EUR' }),
      // the PSP's reports differ by 0.01 in the fee: below the materiality, nothing held
      ...purchase('pay-fee-cent', { merchantFee: 2_01n }),
      // differ by 5.00: that much held, not the payment
      ...purchase('pay-fee-five', { merchantFee: 7_00n }),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 6 }),
      syncCompleted({
        from: at('2024-03-12T00:00:00Z'),
        to: at('2024-03-13T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 1,
      }),
    ]);
    await settle();
    const cut = (await ledgerPosition(fx.db.sql))!;
    const held = (await heldAt(fx.db.sql, fx.store, cut, { periodEnd: new Date('2024-04-01T00:00:00Z') }))!;
    const byPayment = Object.fromEntries(held.map((h) => [h.paymentId, h.amount]));
    expect(byPayment).toEqual({ 'pay-reserve': 88_00n, 'pay-currency': 88_00n, 'pay-fee-five': 5_00n });

    // other money in doubt (an event in quarantine) is capped and held once like a discrepancy
    const quarantined = (paymentId: string) => ({
      id: `quarantine-${paymentId}`,
      type: 'quarantined',
      reason: 'under investigation',
      posId: POS,
      paymentId,
      orderId: null,
      occurredAt: null,
      receiverName: null,
      currency: null,
      atMost: null,
    });
    const withExtra = (await heldAt(fx.db.sql, fx.store, cut, {
      periodEnd: new Date('2024-04-01T00:00:00Z'),
      extra: [quarantined('pay-reserve'), quarantined('pay-fee-cent')],
    }))!;
    expect(
      withExtra.filter((h) => h.discrepancyId.startsWith('quarantine-')).map((h) => [h.paymentId, h.amount]),
    ).toEqual([['pay-fee-cent', 88_00n]]);

    // the statement holds the same, and its amount due is net payable less exactly that
    await issueStatements(deps(), { month: '2024-03', outDir: out, now: new Date('2024-05-01T00:00:00Z') });
    const [run] = await fx.store.readStream(statementStream('2024-03'));
    const issued = dataOf(StatementIssued, run!).payouts ?? [];
    expect(issued.map((p) => [p.currency, BigInt(p.held)])).toEqual([['UAH', 181_00n]]);

    // a policy that holds no currency mismatch and a materiality of 10.00 holds only the reserve's payment
    const strict = {
      rules: { ...DEFAULT_HOLD_POLICY.rules, currency_mismatch: 'none' as const },
      materiality: { all: 10_00n, byCurrency: {} },
    };
    const other = (await heldAt(fx.db.sql, fx.store, cut, { policy: strict }))!;
    // without a period end the whole net counts, the reserve released in June too: 98.00
    expect(other.map((h) => [h.paymentId, h.amount])).toEqual([['pay-reserve', 98_00n]]);
  });
});
