import { ReconError } from '../../errors';
import { DateTime } from 'luxon';
import { monthBounds } from '../../journal-rules';
import { dataOf, isEvent } from '../../events/catalog';
import { StatementIssued, statementStream } from '../../events/statement-events';
import { comparePositions, formatPosition, type EventStore, type Position } from '../../store/types';
import type { IssuedRun } from './previous';

/**
 * The checks a statement run passes before any figure is read: money leaves on these documents, so a month
 * not ended, a cut beyond what the store holds, or a time zone other than the one finance was told in are
 * refused, each naming what to do instead.
 */

export class StatementRefused extends ReconError {
  readonly kind = 'usage';
  constructor(
    readonly code:
      | 'STATEMENT_MONTH_NOT_ENDED'
      | 'STATEMENT_POSITION_BEYOND_HEAD'
      | 'STATEMENT_TIMEZONE_CHANGED'
      | 'STATEMENT_PROVISIONAL_NEEDS_MONTH_NOT_ENDED',
    message: string,
  ) {
    super(message);
    this.name = 'StatementRefused';
  }
}

/** The instant a month ends in the business zone (the next month's local midnight). */
export function monthEnd(month: string, timezone: string): DateTime {
  return DateTime.fromJSDate(monthBounds(month, timezone).to, { zone: timezone });
}

/**
 * A month that has not ended at `now` (current or future) is refused unless `provisional`; a provisional run
 * of a month that has ended is refused too (it would be mistaken for the issued one). Returns whether the run
 * is provisional.
 */
export function checkMonthEnded(month: string, timezone: string, now: Date, provisional: boolean): boolean {
  const end = monthEnd(month, timezone);
  const ended = end.toMillis() <= now.getTime();
  if (!ended && !provisional)
    throw new StatementRefused(
      'STATEMENT_MONTH_NOT_ENDED',
      `--month ${month} has not ended in ${timezone} (it ends ${end.toISO()}): its figures would still change and reserve not yet due would be paid; run again after it ends, or pass --provisional for a draft that is marked PROVISIONAL and not recorded as issued`,
    );
  if (ended && provisional)
    throw new StatementRefused(
      'STATEMENT_PROVISIONAL_NEEDS_MONTH_NOT_ENDED',
      `--provisional: ${month} has ended in ${timezone}; issue its statements without --provisional`,
    );
  return provisional;
}

/** A cut beyond the store's head would be recorded as the latest and give other figures later: refused. */
export async function checkPositionWithinHead(store: EventStore, position: Position): Promise<void> {
  const head = (await store.headPosition()) ?? { commit: 0n, prepare: 0n };
  if (comparePositions(position, head) > 0)
    throw new StatementRefused(
      'STATEMENT_POSITION_BEYOND_HEAD',
      `--at-position ${formatPosition(position)} is beyond the event store's last event (${formatPosition(head)}): a cut must be a position the store has reached`,
    );
}

/**
 * The statements a run builds on. The latest issued before the month fixes the time zone: another
 * RECON_TIMEZONE is refused, naming both zones, unless the operator re-bases explicitly
 * (`rebase`): the run then builds on the statements issued in the former zone (what moved between the two
 * zones' month boundaries shows as adjustments), and the next runs build on it in the new zone.
 */
export function runsInZone(
  runs: readonly IssuedRun[],
  timezone: string,
  rebase: boolean,
): { runs: IssuedRun[]; rebasedFrom?: string } {
  const latest = runs[0];
  if (!latest || latest.timezone === timezone) return { runs: runs.filter((r) => r.timezone === timezone) };
  if (!rebase)
    throw new StatementRefused(
      'STATEMENT_TIMEZONE_CHANGED',
      `RECON_TIMEZONE is ${timezone} but the statements already issued (latest: ${latest.month}) are in ${latest.timezone}: set RECON_TIMEZONE=${latest.timezone} back, or re-base the statements on ${timezone} with --rebase-timezone (once; later runs build on the re-based one)`,
    );
  return { runs: runs.filter((r) => r.timezone === latest.timezone), rebasedFrom: latest.timezone };
}

/**
 * A month is stated in one zone. Issued again in another, its runs would not see what the first zone's asked (a
 * month's runs, and so what they asked, are read in the run's zone): the month's whole amount due was asked a
 * second time. --rebase-timezone does not lift it: a re-base is for the first month issued in the new zone.
 */
export async function checkMonthZone(store: EventStore, month: string, timezone: string): Promise<void> {
  for (const e of await store.readStream(statementStream(month))) {
    if (!isEvent(StatementIssued, e)) continue;
    const issuedIn = dataOf(StatementIssued, e).timezone;
    if (issuedIn !== timezone)
      throw new StatementRefused(
        'STATEMENT_TIMEZONE_CHANGED',
        `RECON_TIMEZONE is ${timezone} but ${month} was issued in ${issuedIn}: issue it again with RECON_TIMEZONE=${issuedIn} (its statements would otherwise ask again what they asked); --rebase-timezone re-bases a month not issued yet`,
      );
  }
}

/** The month before `month` (YYYY-MM). */
export function monthBefore(month: string): string {
  return DateTime.fromFormat(month, 'yyyy-MM', { zone: 'UTC' }).minus({ months: 1 }).toFormat('yyyy-MM');
}

/** The months after `from` up to `to` inclusive, as text ("2026-11", "2026-11 to 2027-04"). */
export function monthsBetween(after: string, to: string): string {
  const first = DateTime.fromFormat(after, 'yyyy-MM', { zone: 'UTC' }).plus({ months: 1 }).toFormat('yyyy-MM');
  return first === to ? first : `${first} to ${to}`;
}
