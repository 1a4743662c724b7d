import { DateTime } from 'luxon';
import type { Tx } from '../projector/projection';
import type { RecordedEvent } from '../store/types';
import { monthBounds } from '../journal-rules';

/**
 * Each receiver's payable movements per month of the build's time zone and component (credit positive), kept
 * by the journal beside its lines: what a statement's opening, movements and a run's closings sum, so that
 * they read months, not every line since the company started (issue 26: a statement's cost grows with its month, not
 * with the company's age). The lines counted are those the statements count: the payable account, without
 * payouts (the bank's) and write-offs (the company's own loss). `first_*` is the position of the first
 * line of the month: a statement cut at an earlier position must not show a receiver that had no line yet.
 * The months are cut by `monthBounds`, as the statements cut them, never by the server's own zone data.
 * `amount` is numeric: a month of 9,224 lines at the largest amount a payment may have (10^15) passes int8.
 */

export const PAYABLE_MONTHS_TABLE = `
  create table %s.payable_months (
    receiver text not null,
    currency text not null,
    month text not null,
    component text not null,
    amount numeric not null,
    first_commit numeric(20,0) not null,
    first_prepare numeric(20,0) not null,
    primary key (receiver, currency, month, component)
  );`;

/**
 * The months (YYYY-MM in `zone`) from the one holding `lo` to the one holding `hi`, with their bounds, and one
 * more either side: a line is joined to a month by `monthBounds`, whatever month luxon's wall clock names.
 */
function monthsBetween(lo: Date, hi: Date, zone: string): { month: string; from: Date; to: Date }[] {
  const out: { month: string; from: Date; to: Date }[] = [];
  const last = DateTime.fromJSDate(hi, { zone }).plus({ months: 1 }).toFormat('yyyy-MM');
  for (let m = DateTime.fromJSDate(lo, { zone }).minus({ months: 1 }).startOf('month'); ; m = m.plus({ months: 1 })) {
    const month = m.toFormat('yyyy-MM');
    out.push({ month, ...monthBounds(month, zone) });
    if (month >= last) return out;
  }
}

/**
 * Adds the payable lines the batch's events wrote (every writer of lines stamps them with its event's
 * position) to their months. Called once at the end of the journal's batch, in its transaction.
 */
export async function addPayableMonths(
  tx: Tx,
  schema: string,
  events: readonly RecordedEvent[],
  zone: string,
): Promise<void> {
  if (events.length === 0) return;
  const first = events[0]!.position;
  const last = events[events.length - 1]!.position;
  const pos = [first.commit.toString(), first.prepare.toString(), last.commit.toString(), last.prepare.toString()];
  const [range] = await tx<{ lo: Date | null; hi: Date | null }[]>`
    select min(l.booked_at) as lo, max(l.booked_at) as hi from ${tx(schema)}.lines l
    where (l.commit_pos, l.prepare_pos) >= (${pos[0]!}::numeric, ${pos[1]!}::numeric)
      and (l.commit_pos, l.prepare_pos) <= (${pos[2]!}::numeric, ${pos[3]!}::numeric)
      and l.account = 'payable' and l.component not in ('payout', 'write_off') and l.receiver is not null`;
  if (!range?.lo || !range.hi) return;
  const months = monthsBetween(range.lo, range.hi, zone);
  await tx`
    insert into ${tx(schema)}.payable_months as m (receiver, currency, month, component, amount, first_commit, first_prepare)
    select l.receiver, l.currency, k.month, l.component, sum(-l.amount), min(l.commit_pos),
      (array_agg(l.prepare_pos order by l.commit_pos, l.prepare_pos))[1]
    from ${tx(schema)}.lines l
    join unnest(${months.map((m) => m.month)}::text[], ${months.map((m) => m.from.toISOString())}::timestamptz[],
      ${months.map((m) => m.to.toISOString())}::timestamptz[]) as k(month, f, t) on l.booked_at >= k.f and l.booked_at < k.t
    where (l.commit_pos, l.prepare_pos) >= (${pos[0]!}::numeric, ${pos[1]!}::numeric)
      and (l.commit_pos, l.prepare_pos) <= (${pos[2]!}::numeric, ${pos[3]!}::numeric)
      and l.account = 'payable' and l.component not in ('payout', 'write_off') and l.receiver is not null
    group by l.receiver, l.currency, k.month, l.component
    on conflict (receiver, currency, month, component) do update set amount = m.amount + excluded.amount`;
}
