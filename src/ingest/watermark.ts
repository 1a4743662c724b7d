import { dataOf, isEvent } from '../events/catalog';
import { SyncWindowCompleted, SyncWindowFailed } from '../events/ingest-events';
import type { RecordedEvent } from '../store/types';

/**
 * What the `sync-<posId>` stream says was truly read, for the incremental sync of one project:
 *  - the watermark: the end of the unbroken stretch of completed windows that holds the first window ever
 *    completed. A window completed beyond a gap (a range run ahead of the nightly job, a later window of a
 *    run whose earlier one failed) does not move it: the gap was never read;
 *  - `unreadFrom`: the start of the earliest failed window that the windows completed after it do not cover
 *    (together: windows are cut differently from run to run, the lookback shifts them).
 * A window counts only up to the moment it was recorded: what lies after it was not there to be read (runs
 * before this rule recorded range windows that ended in the future).
 * Reading again is harmless (every append is idempotent); not reading is data lost, so when in doubt the
 * answer is the earlier instant.
 */

export interface ReadMarks {
  readonly watermark: Date | undefined;
  readonly unreadFrom: Date | undefined;
}

interface Span {
  readonly from: number;
  readonly to: number;
}

function spanOf(window: { from: string; to: string }, recordedAt: string): Span {
  return { from: Date.parse(window.from), to: Math.min(Date.parse(window.to), Date.parse(recordedAt)) };
}

/** The end of the unbroken stretch of `spans` that covers `from` onwards; `from` itself when none does. */
function coveredUntil(spans: readonly Span[], from: number): number {
  let end = from;
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    if (s.from > end) break;
    if (s.to > end) end = s.to;
  }
  return end;
}

export function readMarks(syncEvents: readonly RecordedEvent[]): ReadMarks {
  // In the stream's order, which is the order the windows ended in. A span ending where it starts (a window
  // recorded before it began) read nothing and needed nothing: it is left out.
  const completed: Span[] = [];
  const failed: { span: Span; completedBefore: number }[] = [];
  for (const e of syncEvents) {
    if (isEvent(SyncWindowCompleted, e)) {
      const d = dataOf(SyncWindowCompleted, e);
      const span = spanOf(d.window, d.completedAt);
      if (span.to > span.from) completed.push(span);
    } else if (isEvent(SyncWindowFailed, e)) {
      const d = dataOf(SyncWindowFailed, e);
      const span = spanOf(d.window, d.failedAt);
      if (span.to > span.from) failed.push({ span, completedBefore: completed.length });
    }
  }
  const watermark = completed.length ? coveredUntil(completed, completed[0]!.from) : undefined;
  let unreadFrom: number | undefined;
  for (const f of failed) {
    if (unreadFrom !== undefined && f.span.from >= unreadFrom) continue;
    if (coveredUntil(completed.slice(f.completedBefore), f.span.from) < f.span.to) unreadFrom = f.span.from;
  }
  const date = (t: number | undefined) => (t === undefined ? undefined : new Date(t));
  return { watermark: date(watermark), unreadFrom: date(unreadFrom) };
}
