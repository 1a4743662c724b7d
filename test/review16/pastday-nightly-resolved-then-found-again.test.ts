import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { type EventData, newEvent } from '../../src/events/catalog';
import { PeriodRecordObserved } from '../../src/events/ingest-events';
import { openOnDayFrom } from '../../src/export/nightly/open';
import { nightlyReportData } from '../../src/export/nightly/report';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import type { NewEvent } from '../../src/store/types';
import { useTestStore } from '../support/db';

/**
 * The nightly report for a past day shows what was open at that day's end. A discrepancy resolved on one day and
 * found again two days later stood resolved on the day between: its report, regenerated after the finding again,
 * must not show it open (nor drop its resolution from the month to date).
 */

const fx = useTestStore();
const steps = payholdSteps(fx, DEFAULT_HOLD_POLICY);
const paymentId = 'pay-flap-day';
const dateTime = at('2024-03-10T10:00:00Z');

/** A period report's row; each report's row its own event (an unmapped field naming it). */
function periodOf(status: 'success' | 'failure', reportId: string, observedAt: string) {
  const req = periodRow({ paymentId, dateTime, amount: 51_00n, status, reportId, observedAt });
  const e = req.events[0]! as NewEvent<EventData<typeof PeriodRecordObserved>>;
  const record = { ...e.data.record, other: { batch: reportId } };
  const data = { posId: e.data.posId, raw: JSON.stringify(record), record };
  return { ...req, events: [newEvent(PeriodRecordObserved, data, { metadata: e.metadata })] };
}

const period = (status: 'success' | 'failure', reportId: string, observedAt: string) => [
  periodOf(status, reportId, observedAt),
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
    await fx.db.sql<{ id: string; status: string; resolved_at: Date | null }[]>`
    select id::text, status, resolved_at from recon.discrepancies
    where payment_id = ${paymentId} and type = 'status_mismatch'`
  )[0]!;
const openIds = async (day: string) => (await openOnDayFrom(fx.db.sql, day, 'UTC')).open.map((d) => d.id);
/** The report's discrepancy counts of the day (opened, resolved, accepted, open at its end) and its open list. */
const reportOf = async (date: string) => {
  const data = await nightlyReportData(
    { sql: fx.db.sql, store: fx.store },
    { date, timezone: 'UTC', graceHours: 48, windows: [], now: new Date(0) },
  );
  return { counts: data.discrepancies, open: data.open.map((o) => o.id) };
};
const resolvedInMonth = async (day: string) =>
  (await openOnDayFrom(fx.db.sql, day, 'UTC')).monthToDate.reduce((n, r) => n + r.resolved, 0);

describe('nightly report of a day a discrepancy stood resolved, found again since', () => {
  it('shows it resolved on that day, open before and after', async () => {
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
      ...period('failure', 'rep-1', at('2024-03-13T12:00:00Z')),
    ]);
    await steps.settle();
    const { id } = await row();
    expect(await openIds('2024-03-13')).toContain(id);

    await appendAll(fx.store, period('success', 'rep-2', at('2024-03-15T12:00:00Z')));
    await steps.settle();
    const resolved = await row();
    expect(resolved.status).toBe('resolved');
    expect(resolved.resolved_at!.toISOString().slice(0, 10)).toBe('2024-03-15');
    // the day's report written then: resolved on the 15th and the 16th
    const before = { 15: await openIds('2024-03-15'), 16: await openIds('2024-03-16') };
    expect(before[15]).not.toContain(id);
    expect(before[16]).not.toContain(id);
    const resolvedBefore = await resolvedInMonth('2024-03-16');
    expect(resolvedBefore).toBeGreaterThan(0);
    const report15 = await reportOf('2024-03-15');
    expect(report15.counts.find((c) => c.type === 'status_mismatch')?.resolved).toBe(1);
    expect(report15.open).not.toContain(id);

    await appendAll(fx.store, period('failure', 'rep-3', at('2024-03-17T12:00:00Z')));
    await steps.settle();
    expect((await row()).status).toBe('open');
    // regenerated after the finding again: the days between still read it resolved, as written then
    expect(await openIds('2024-03-15')).toEqual(before[15]);
    expect(await openIds('2024-03-16')).toEqual(before[16]);
    expect(await resolvedInMonth('2024-03-16')).toBe(resolvedBefore);
    expect(await reportOf('2024-03-15')).toEqual(report15);
    // before the resolution and after the finding again it stood open
    expect(await openIds('2024-03-13')).toContain(id);
    expect(await openIds('2024-03-17')).toContain(id);
  });
});
