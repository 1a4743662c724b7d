import { DateTime } from 'luxon';
import { BankEntryBooked } from '../events/bank-events';
import { isEvent } from '../events/catalog';
import type { RecordedEvent } from '../store/types';

/**
 * The event clock: the time an event carries, read the same way by every read model that keeps a clock
 * (never the wall clock, so a replay judges at the same points of the log). The times, in the order read:
 * the metadata's observedAt or receivedAt (the PSP's observations), then the data's completedAt,
 * requestedAt, detectedAt or failedAt (projections/clock-events.ts lists the events that carry them).
 *
 * What a reader admits besides is its own, and stays so (a reader that admitted more would judge at other
 * points of the log and change its stored rows):
 *   issuedAt     a statement run's time of issue (metadata), read by the payouts leg: a run asks for payouts
 *   bookingDayIn the start of a bank entry's booking day in that zone, read by the payouts leg: the bank has
 *                seen that day begin
 *   acceptedAt   an auditor's decision (data), shown by `recon explain` beside every other event's time
 * The PSP and orders legs admit none of them.
 */
export interface ClockReading {
  readonly issuedAt?: boolean;
  readonly acceptedAt?: boolean;
  readonly bookingDayIn?: string;
}

/** The metadata's times every clock reads, in order (the PSP's observations and rejections). */
export const CLOCK_METADATA_FIELDS = ['observedAt', 'receivedAt'] as const;

/** The data's times every clock reads, in order (projections/clock-events.ts lists the events carrying them). */
export const CLOCK_DATA_FIELDS = ['completedAt', 'requestedAt', 'detectedAt', 'failedAt'] as const;

/** The first of the fields present (neither undefined nor null), as `a ?? b ?? …` reads them. */
function firstOf(o: Record<string, unknown>, fields: readonly string[]): unknown {
  for (const f of fields) {
    const v = o[f];
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

/** The time an event carries, as it carries it (ISO text), or null. */
export function eventTimeText(e: RecordedEvent, reading: ClockReading = {}): string | null {
  const m = (e.metadata ?? {}) as Record<string, unknown>;
  const d = (e.data ?? {}) as Record<string, unknown>;
  const t =
    firstOf(m, CLOCK_METADATA_FIELDS) ??
    (reading.issuedAt ? m.issuedAt : undefined) ??
    firstOf(d, CLOCK_DATA_FIELDS) ??
    (reading.acceptedAt ? d.acceptedAt : undefined);
  return typeof t === 'string' ? t : null;
}

/** The time an event carries (ms), or null. */
export function eventTime(e: RecordedEvent, reading: ClockReading = {}): number | null {
  if (reading.bookingDayIn !== undefined && isEvent(BankEntryBooked, e)) {
    const day = DateTime.fromISO(String((e.data as { bookingDate?: unknown }).bookingDate), {
      zone: reading.bookingDayIn,
    });
    return day.isValid ? day.toMillis() : null;
  }
  const t = eventTimeText(e, reading);
  if (t === null) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}
