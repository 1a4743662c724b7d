import { entriesFor, type RowFacts } from '../../journal-rules';
import { settlementDayOf } from '../../business-days';

/**
 * What the PSP owes the marketplace, from the journal's own rules: per register row, the movement of
 * `psp_clearing` (what the PSP collected for us, less refunds and chargebacks) and of `psp_fees` (what it
 * withholds). The PSP pays the net of both; reserves are the marketplace's own liability to its
 * sub-merchants, so they do not change what the PSP pays.
 */

export interface RowContribution {
  readonly currency: string;
  /** the row's local day (RECON_TIMEZONE) */
  readonly day: string;
  /** movement of psp_clearing (debit positive) */
  readonly clearing: bigint;
  /** fees the PSP withholds (positive) */
  readonly fees: bigint;
}

/** The row's effect on what the PSP owes; null when it moves no money (not success, or no settlement). */
export function contributionOf(f: RowFacts, timezone: string): RowContribution | null {
  let clearing = 0n;
  let fees = 0n;
  // the hold does not touch psp_clearing or psp_fees
  for (const e of entriesFor(f, 0, timezone)) {
    if (e.kind !== 'settlement') continue;
    for (const l of e.lines) {
      if (l.account === 'psp_clearing') clearing += l.amount;
      else if (l.account === 'psp_fees') fees -= l.amount;
    }
  }
  if (clearing === 0n && fees === 0n) return null;
  return { currency: f.currency, day: f.bookedOn, clearing, fees };
}

export interface ActivityDay {
  readonly currency: string;
  readonly day: string;
  readonly clearing: bigint;
  readonly fees: bigint;
}

/** One settlement the PSP owes: every activity day it pays, netted. */
export interface DueDay {
  readonly currency: string;
  /** the settlement day: the business day the credit is due on */
  readonly day: string;
  readonly firstActivity: string;
  readonly lastActivity: string;
  readonly clearing: bigint;
  readonly fees: bigint;
  /** clearing − fees: the credit expected (> 0) */
  readonly amount: bigint;
}

export interface SettlementCalendar {
  readonly lagBusinessDays: number;
  readonly holidays: ReadonlySet<string>;
}

/**
 * Activity days of one currency grouped by settlement day. A settlement day whose net is zero or negative
 * (refunds and chargebacks above sales) expects no credit: the PSP nets it against its next payment, so
 * its clearing and fees are carried into the next settlement day. A negative net at the end stays
 * carried (nothing is due yet).
 */
export function dueDays(days: readonly ActivityDay[], cal: SettlementCalendar): DueDay[] {
  const groups = new Map<string, { first: string; last: string; clearing: bigint; fees: bigint }>();
  for (const d of [...days].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))) {
    const due = settlementDayOf(d.day, cal.lagBusinessDays, cal.holidays);
    const g = groups.get(due);
    if (g) {
      g.last = d.day;
      g.clearing += d.clearing;
      g.fees += d.fees;
    } else groups.set(due, { first: d.day, last: d.day, clearing: d.clearing, fees: d.fees });
  }
  const out: DueDay[] = [];
  let carry: { first: string; clearing: bigint; fees: bigint } | null = null;
  const currency = days[0]?.currency ?? '';
  for (const [day, g] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const first: string = carry?.first ?? g.first;
    const clearing: bigint = g.clearing + (carry?.clearing ?? 0n);
    const fees: bigint = g.fees + (carry?.fees ?? 0n);
    if (clearing - fees <= 0n) {
      carry = { first, clearing, fees };
      continue;
    }
    carry = null;
    out.push({ currency, day, firstActivity: first, lastActivity: g.last, clearing, fees, amount: clearing - fees });
  }
  return out;
}
