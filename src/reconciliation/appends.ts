import type { RecordedEvent } from '../store/types';

/**
 * A batch's appends: runs of consecutive events sharing `appendId` (one append's transaction, which the runner
 * never splits between batches). Both legs judge at the end of each append, and cut a batch at appends.
 */

/** Is `events[i]` the last event of its append? */
export const endsAppend = (events: readonly RecordedEvent[], i: number): boolean => {
  const next = events[i + 1];
  return next === undefined || next.appendId !== events[i]!.appendId;
};

/** The batch's appends, in order. */
export function appendsOf(events: readonly RecordedEvent[]): RecordedEvent[][] {
  const out: RecordedEvent[][] = [];
  let start = 0;
  for (let i = 0; i < events.length; i++) {
    if (!endsAppend(events, i)) continue;
    out.push(events.slice(start, i + 1));
    start = i + 1;
  }
  return out;
}
