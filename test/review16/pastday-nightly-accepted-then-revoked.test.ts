import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { openOnDayFrom } from '../../src/export/nightly/open';
import { nightlyReportData } from '../../src/export/nightly/report';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import { useTestStore } from '../support/db';

/**
 * The nightly report for a past day shows what was open at that day's end. A discrepancy accepted on one day and
 * its acceptance revoked two days later stood accepted on the day between: its report, regenerated after the
 * revocation, must not show it open, and still counts the acceptance that day.
 */

const fx = useTestStore();
const steps = payholdSteps(fx, DEFAULT_HOLD_POLICY);
const paymentId = 'pay-revoked-day';
const dateTime = at('2024-03-10T10:00:00Z');

/** The period report of the payment's day, stating it failed (the register says success), completed then. */
const failedPeriod = (reportId: string, observedAt: string) => [
  periodRow({ paymentId, dateTime, amount: 51_00n, status: 'failure', reportId, observedAt }),
  syncCompleted({
    from: at('2024-03-10T00:00:00Z'),
    to: at('2024-03-11T00:00:00Z'),
    completedAt: observedAt,
    reportId,
    announced: 1,
  }),
];

const row = async () =>
  (
    await fx.db.sql<{ id: string; status: string }[]>`
    select id::text, status from recon.discrepancies where payment_id = ${paymentId} and type = 'status_mismatch'`
  )[0]!;
const openIds = async (day: string) => (await openOnDayFrom(fx.db.sql, day, 'UTC')).open.map((d) => d.id);
const reportOf = async (date: string) => {
  const data = await nightlyReportData(
    { sql: fx.db.sql, store: fx.store },
    { date, timezone: 'UTC', graceHours: 48, windows: [], now: new Date(0) },
  );
  const view = data.asOfDay;
  return { counts: data.discrepancies, open: data.open.map((o) => o.id), month: view?.monthToDate };
};

describe('nightly report of a day a discrepancy stood accepted, revoked since', () => {
  it('shows it accepted on that day, open before and after', async () => {
    await appendAll(fx.store, [
      subMerchant('sm-alpha', 'Alpha Shop'),
      registerRows({
        paymentId,
        dateTime,
        amount: 51_00n,
        receivers: [{ name: 'Alpha Shop', amount: 50_00n, fee: 1_00n }],
        reportId: 'rep-1',
        observedAt: at('2024-03-10T23:00:00Z'),
      }),
      ...failedPeriod('rep-1', at('2024-03-13T12:00:00Z')),
    ]);
    await steps.settle();
    const { id } = await row();
    expect(await openIds('2024-03-14')).toContain(id);

    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id, note: 'the PSP will pay it', by: 'Olena K.', at: new Date('2024-03-15T09:00:00Z'), decision: 'pay' },
    );
    expect(accepted).toMatchObject({ ok: true });
    await steps.settle();
    expect((await row()).status).toBe('accepted');
    const before = await reportOf('2024-03-15');
    expect(before.open).not.toContain(id);
    expect(before.counts.find((c) => c.type === 'status_mismatch')?.accepted).toBe(1);
    const day16 = await openIds('2024-03-16');
    expect(day16).not.toContain(id);

    // the PSP's data moves on (the leg's clock, which stamps the revocation), then the decision is taken back
    await appendAll(fx.store, failedPeriod('rep-2', at('2024-03-17T12:00:00Z')));
    await steps.settle();
    const revoked = await revokeDecision(fx.store, {
      id,
      reason: 'it was not paid',
      by: 'Petro M.',
      at: new Date('2024-03-18T09:00:00Z'),
    });
    expect(revoked).toMatchObject({ ok: true });
    await steps.settle();
    expect((await row()).status).toBe('open');

    // regenerated after the revocation: the days it stood accepted read as they were written then
    expect(await reportOf('2024-03-15')).toEqual(before);
    expect(await openIds('2024-03-16')).toEqual(day16);
    // before the acceptance and after the revocation it stood open
    expect(await openIds('2024-03-14')).toContain(id);
    expect(await openIds('2024-03-18')).toContain(id);
  });
});
