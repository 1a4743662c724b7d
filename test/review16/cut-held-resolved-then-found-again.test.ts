import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { type EventData, newEvent } from '../../src/events/catalog';
import { PeriodRecordObserved } from '../../src/events/ingest-events';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import type { NewEvent } from '../../src/store/types';
import { useTestStore } from '../support/db';

/**
 * A statement cut at a position holds what was in doubt at that position (holds.ts `heldAt`). A discrepancy
 * resolved before the cut and found again after it stood resolved at the cut: nothing of it was held then, so
 * nothing is held when that cut is read again (a statement issued again at its cut, a replay).
 */

const fx = useTestStore();
const policy = DEFAULT_HOLD_POLICY;
const steps = payholdSteps(fx, policy);
const paymentId = 'pay-flap';
const dateTime = at('2024-03-10T10:00:00Z');

/** A period report's row; each report's row its own event (an unmapped field naming it: else one event id). */
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

const cutNow = async () => {
  await steps.settle();
  return (await ledgerPosition(fx.db.sql))!;
};
const heldOf = async (cut: Awaited<ReturnType<typeof cutNow>>) =>
  ((await heldAt(fx.db.sql, fx.store, cut, { policy })) ?? [])
    .filter((h) => h.paymentId === paymentId)
    .map((h) => [h.type, h.amount] as const);
const statusNow = async () =>
  (
    await fx.db.sql<{ status: string }[]>`
    select status from recon.discrepancies where payment_id = ${paymentId} and type = 'status_mismatch'`
  )[0]?.status;

describe('held at a cut where the discrepancy stood resolved, found again since', () => {
  it('holds nothing of it at that cut, before and after it is found again', async () => {
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
      ...period('failure', 'rep-1', at('2024-03-14T00:00:00Z')),
    ]);
    const opened = await cutNow();
    expect(await statusNow()).toBe('open');
    const heldOpen = await heldOf(opened);
    expect(heldOpen.length).toBeGreaterThan(0);

    await appendAll(fx.store, period('success', 'rep-2', at('2024-03-15T00:00:00Z')));
    const resolved = await cutNow();
    expect(await statusNow()).toBe('resolved');
    expect(await heldOf(resolved)).toEqual([]);

    await appendAll(fx.store, period('failure', 'rep-3', at('2024-03-16T00:00:00Z')));
    const again = await cutNow();
    expect(await statusNow()).toBe('open');
    expect(await heldOf(again)).toEqual(heldOpen);
    // the cut where it stood resolved reads as it did then
    expect(await heldOf(resolved)).toEqual([]);
    expect(await heldOf(opened)).toEqual(heldOpen);

    // resolved once more: each cut still reads as it stood then
    await appendAll(fx.store, period('success', 'rep-4', at('2024-03-17T00:00:00Z')));
    const last = await cutNow();
    expect(await statusNow()).toBe('resolved');
    expect(await heldOf(last)).toEqual([]);
    expect(await heldOf(again)).toEqual(heldOpen);
    expect(await heldOf(resolved)).toEqual([]);
    expect(await heldOf(opened)).toEqual(heldOpen);
  });
});
