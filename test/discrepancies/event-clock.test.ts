import { describe, expect, it } from 'vitest';
import { BankEntryBooked } from '../../src/events/bank-events';
import { eventTime, eventTimeText } from '../../src/reconciliation/event-clock';
import { payoutsClock } from '../../src/reconciliation/payouts/tables';
import type { RecordedEvent } from '../../src/store/types';

/**
 * One event clock (src/reconciliation/event-clock.ts) for the PSP and orders legs, the payouts leg and
 * `recon explain`: the same times in the same order, and what each reader admits besides.
 */

const event = (type: string, version: number, data: object, metadata: object = {}) =>
  ({ type, version, data, metadata, id: 'e', stream: 's', revision: 0, appendId: 'a' }) as unknown as RecordedEvent;

describe('the event clock', () => {
  it('reads the observation time first, then the data times in order', () => {
    const observed = event(
      'RegisterRecordObserved',
      1,
      { completedAt: '2025-03-02T00:00:00Z' },
      { observedAt: '2025-03-01T00:00:00Z' },
    );
    expect(eventTimeText(observed)).toBe('2025-03-01T00:00:00Z');
    const window = event('SyncWindowCompleted', 1, {
      requestedAt: '2025-03-04T00:00:00Z',
      completedAt: '2025-03-03T00:00:00Z',
    });
    expect(eventTime(window)).toBe(Date.parse('2025-03-03T00:00:00Z'));
    expect(eventTime(event('Other', 1, { completedAt: 'not a time' }))).toBeNull();
  });

  it("admits a run's time of issue and a booking day for the payouts leg only", () => {
    const issued = event('StatementIssued', 1, {}, { issuedAt: '2025-04-01T06:00:00Z' });
    expect(eventTime(issued)).toBeNull();
    expect(eventTime(issued, payoutsClock('Europe/Kyiv'))).toBe(Date.parse('2025-04-01T06:00:00Z'));
    const booked = event(BankEntryBooked.type, BankEntryBooked.version, { bookingDate: '2025-04-02' });
    expect(eventTime(booked)).toBeNull();
    // the start of the booking day in the zone: midnight in Kyiv is 21:00 UTC the day before (summer time)
    expect(eventTime(booked, payoutsClock('Europe/Kyiv'))).toBe(Date.parse('2025-04-01T21:00:00Z'));
  });

  it("admits an auditor's decision for `recon explain` only", () => {
    const accepted = event('DiscrepancyAccepted', 1, { acceptedAt: '2025-03-05T08:00:00Z' });
    expect(eventTimeText(accepted)).toBeNull();
    expect(eventTimeText(accepted, { acceptedAt: true })).toBe('2025-03-05T08:00:00Z');
  });
});
