import { dataOf, isEvent } from '../../events/catalog';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../../events/audit-events';
import { SubMerchantRegistered } from '../../events/ledger-events';
import { FeeScheduleLineSet, type FeeScheduleLine } from '../../events/order-events';
import { endsAppend } from '../appends';
import { eventTime } from '../event-clock';
import { applyFindings, recordAcceptance, recordRevocation } from '../discrepancies/lifecycle';
import { matchPayment, type MatchedOperation } from '../matching';
import type { Observation } from '../observations';
import type { RecordedEvent } from '../../store/types';
import { groupKeyOf, versionOf, type Group, type OrderBatch } from './groups';
import { judgeOrder, type GroupPayment, type Judgement } from './rules';

/**
 * Replaying a batch of the orders read model. The clock is the latest time the PSP's events carry (never the
 * wall clock), and the groups an append touched, or whose grace period ran out by the new clock, are judged at
 * the end of that append (events sharing `appendId`, which the runner never splits): the rows, with their
 * detection and resolution times and events, are the same whatever the batch sizes. A directory or fee
 * contract event judges every group with a payment again (chunks.ts loads them a chunk at a time).
 */

/** A group judged in this batch carries its judgement, for the views written back. */
export type JudgedGroup = Group & { judgement?: Judgement };

/** What the groups are judged with, rebuilt when a directory or contract event changes it. */
interface Judging {
  lookup: (name: string) => string | undefined;
  fees: FeeScheduleLine[];
  feeOrd: number;
  /** the groups the current append touched, each with the first of its events touching it */
  readonly toJudge: Map<Group, string>;
}

/**
 * The end of an append as a group coming due then is judged: the clock, the earliest order and the directory
 * and contract in force, and the append's last event, which names the judgement.
 */
export interface AppendEnd {
  readonly clock: number | null;
  readonly ordersSince: number | null;
  readonly lastId: string;
  readonly lookup: Judging['lookup'];
  readonly fees: Judging['fees'];
}

/**
 * An acceptance or a revocation whose discrepancy no group of the batch held: it may be one a group come due
 * after the batch opens before it (`end`: the append it belongs to; `clock`: the clock when it was applied).
 */
export interface LaterDecision {
  readonly end: number;
  readonly clock: number | null;
  readonly event: RecordedEvent;
}

/** What a batch's replay leaves for the groups come due that it did not load (`judgeComeDue`). */
export interface ReplayTrail {
  readonly ends: AppendEnd[];
  readonly decisions: LaterDecision[];
}

const decisionOf = (e: RecordedEvent): string | null =>
  isEvent(DiscrepancyAccepted, e) || isEvent(DiscrepancyAcceptanceRevoked, e)
    ? (e.data as { discrepancyId: string }).discrepancyId
    : null;

/**
 * Applies the batch's events in commit order; at the end of each append (events sharing `appendId`)
 * judges the groups it touched, named by the first of its events touching them, and the groups come of age.
 * Returns the appends' ends and the decisions no loaded group held, for the groups come due that the batch
 * did not load (`judgeComeDue`).
 */
export function replayOrders(
  b: OrderBatch,
  events: readonly RecordedEvent[],
  observed: readonly (Observation | null)[],
): ReplayTrail {
  const j = judgingOf(b);
  const ends: AppendEnd[] = [];
  const decisions: LaterDecision[] = [];
  // the earliest due time of the batch's groups: the groups are walked for those come of age only when the
  // clock has reached it, not at every append (a batch holds thousands of groups and of appends)
  let nextDue = earliestDue(b);
  for (const [i, e] of events.entries()) {
    const t = eventTime(e);
    if (t !== null && (b.clock === null || t > b.clock)) b.clock = t;
    applyEvent(b, j, e, observed[i]);
    const decided = decisionOf(e);
    if (decided !== null && ![...b.groups.values()].some((g) => g.discs.has(decided)))
      decisions.push({ end: ends.length, clock: b.clock, event: e });
    if (!endsAppend(events, i)) continue;
    nextDue = endAppend(b, j, e.id, nextDue);
    ends.push({ clock: b.clock, ordersSince: b.ordersSince, lastId: e.id, lookup: j.lookup, fees: j.fees });
  }
  return { ends, decisions };
}

/**
 * Groups no event of a batch touched, judged as the batch's appends' ends would have judged them had they been
 * loaded with it: at each end whose clock has reached the group's due time (its due time then changes), with
 * that end's clock, earliest order, directory and contract; and the batch's decisions on the discrepancies
 * such a judgement opened, applied before the end of their append, a revocation judging the group at that end
 * (named by the first that re-opened one). The batch's state is left as stored.
 */
export function judgeComeDue(b: OrderBatch, trail: ReplayTrail): void {
  const { ends, decisions } = trail;
  const stored = { clock: b.clock, ordersSince: b.ordersSince };
  const j = judgingOf(b);
  const judgeAt = (g: Group, end: AppendEnd, eventId: string) => {
    b.clock = end.clock;
    b.ordersSince = end.ordersSince;
    j.lookup = end.lookup;
    j.fees = end.fees;
    judge(b, g, eventId, j);
  };
  for (const g of b.groups.values()) {
    let i = firstEndReaching(ends, g.due, 0);
    for (let k = 0; ; ) {
      const d = decisions[k]?.end ?? Number.POSITIVE_INFINITY;
      if (d <= i && d < ends.length) {
        // the append's decisions, in order, before its end judges anything
        let reopenedBy: string | null = null;
        for (; decisions[k]?.end === d; k++)
          if (applyDecision(b, g, decisions[k]!)) reopenedBy ??= decisions[k]!.event.id;
        if (reopenedBy !== null) {
          judgeAt(g, ends[d]!, reopenedBy);
          i = firstEndReaching(ends, g.due, d + 1);
        }
        continue;
      }
      if (i >= ends.length) break;
      judgeAt(g, ends[i]!, ends[i]!.lastId);
      i = firstEndReaching(ends, g.due, i + 1);
    }
  }
  b.clock = stored.clock;
  b.ordersSince = stored.ordersSince;
}

/** A decision on one of the group's discrepancies, as `applyEvent` applies it; true when it re-opened one. */
function applyDecision(b: OrderBatch, g: Group, dec: LaterDecision): boolean {
  const e = dec.event;
  if (isEvent(DiscrepancyAccepted, e)) {
    const d = dataOf(DiscrepancyAccepted, e);
    const r = g.discs.get(d.discrepancyId);
    if (r) recordAcceptance(b.lifecycle, r, { ...d, eventId: e.id });
    return false;
  }
  const d = dataOf(DiscrepancyAcceptanceRevoked, e);
  const r = g.discs.get(d.discrepancyId);
  const stamp = { now: dec.clock === null ? null : new Date(dec.clock).toISOString(), eventId: e.id };
  return Boolean(r && recordRevocation(b.lifecycle, r, { ...d, eventId: e.id }, stamp));
}

/** The first end from `from` on whose clock has reached `due` (the clocks never go back; null is before any). */
function firstEndReaching(ends: readonly AppendEnd[], due: number | null, from: number): number {
  if (due === null) return ends.length;
  let lo = from;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = ends[mid]!.clock;
    if (c !== null && c >= due) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const judgingOf = (b: OrderBatch): Judging => ({
  lookup: lookupOf(b),
  fees: currentFeeLines(b),
  feeOrd: b.feeVersions.length,
  toJudge: new Map(),
});

/** The end of an append: the groups it touched are judged, then those come of age; the next earliest due time. */
function endAppend(b: OrderBatch, j: Judging, lastId: string, nextDue: number): number {
  for (const [g, id] of j.toJudge) {
    judge(b, g, id, j);
    if (g.due !== null && g.due < nextDue) nextDue = g.due;
  }
  j.toJudge.clear();
  if (b.clock === null || nextDue > b.clock) return nextDue;
  for (const g of b.groups.values()) if (g.due !== null && g.due <= b.clock) judge(b, g, lastId, j);
  return earliestDue(b);
}

/**
 * A later chunk of an append that judged every group with a payment again (`paidBy`, its first such event;
 * `lastId`, its last event): the chunk's groups are judged as the end of that append judged them, with the
 * clock, directory and contract the append left.
 */
export function judgePaidAgain(b: OrderBatch, paidBy: string, lastId: string): void {
  const j = judgingOf(b);
  for (const g of b.groups.values()) if (g.payments.size) touch(j, g, paidBy);
  endAppend(b, j, lastId, earliestDue(b));
}

function earliestDue(b: OrderBatch): number {
  let min = Number.POSITIVE_INFINITY;
  for (const g of b.groups.values()) if (g.due !== null && g.due < min) min = g.due;
  return min;
}

const touch = (j: Judging, g: Group, eventId: string) => {
  if (!j.toJudge.has(g)) j.toJudge.set(g, eventId);
};

/** Every group with a payment is judged again (the first order, a directory or a contract event). */
const touchPaid = (b: OrderBatch, j: Judging, eventId: string) => {
  b.paidJudgedBy ??= eventId;
  for (const g of b.groups.values()) if (g.payments.size) touch(j, g, eventId);
};

function applyEvent(b: OrderBatch, j: Judging, e: RecordedEvent, o: Observation | null | undefined): void {
  const v = o ? null : versionOf(e);
  if (o) {
    const g = b.groups.get(groupKeyOf(o))!;
    const pk = `${o.posId}\u0001${o.paymentId}`;
    const list = g.payments.get(pk);
    if (list) list.push(o);
    else g.payments.set(pk, [o]);
    g.grown = true;
    touch(j, g, e.id);
  } else if (v) {
    const g = b.groups.get(v.data.orderId)!;
    g.versions.push(v);
    g.grown = true;
    if (v.kind === 'placed') {
      const created = Date.parse(v.at);
      const first = b.ordersSince === null;
      if (first || created < b.ordersSince!) b.ordersSince = created;
      // payments judged while no order was recorded are compared with the orders from now on
      if (first) touchPaid(b, j, e.id);
    }
    touch(j, g, e.id);
  } else if (isEvent(SubMerchantRegistered, e)) {
    const d = dataOf(SubMerchantRegistered, e);
    b.directory.set(d.subMerchantId, d.name.trim());
    b.directoryDirty = true;
    j.lookup = lookupOf(b);
    touchPaid(b, j, e.id);
  } else if (isEvent(FeeScheduleLineSet, e)) {
    const line = { ...dataOf(FeeScheduleLineSet, e), eventId: e.id };
    b.feeVersions.push(line);
    b.newFeeVersions.push({ ...line, ord: j.feeOrd++ });
    j.fees = currentFeeLines(b);
    touchPaid(b, j, e.id);
  } else if (isEvent(DiscrepancyAccepted, e)) {
    const d = dataOf(DiscrepancyAccepted, e);
    for (const g of b.groups.values()) {
      const r = g.discs.get(d.discrepancyId);
      if (r) recordAcceptance(b.lifecycle, r, { ...d, eventId: e.id });
    }
  } else if (isEvent(DiscrepancyAcceptanceRevoked, e)) {
    const d = dataOf(DiscrepancyAcceptanceRevoked, e);
    const stamp = { now: b.clock === null ? null : new Date(b.clock).toISOString(), eventId: e.id };
    for (const g of b.groups.values()) {
      const r = g.discs.get(d.discrepancyId);
      // open again: the group is judged at the end of the append, which updates or resolves it
      if (r && recordRevocation(b.lifecycle, r, { ...d, eventId: e.id }, stamp)) touch(j, g, e.id);
    }
  }
}

function lookupOf(b: OrderBatch): (name: string) => string | undefined {
  const byName = new Map<string, string>();
  for (const [id, name] of [...b.directory].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
    if (!byName.has(name)) byName.set(name, id);
  return (name) => byName.get(name.trim());
}

/** The contract in force: the latest version of each line (sub-merchant, method, currency, day), in commit order. */
function currentFeeLines(b: OrderBatch): FeeScheduleLine[] {
  const latest = new Map<string, FeeScheduleLine>();
  for (const v of b.feeVersions) {
    const { eventId: _, ...line } = v as FeeScheduleLine & { eventId: string; ord?: number };
    delete (line as { ord?: number }).ord;
    latest.set(`${v.subMerchantId}|${v.method}|${v.currency}|${v.effectiveFrom}`, line);
  }
  return [...latest.values()];
}

/**
 * A payment's operations as last matched, with how many observations they were matched from: a group is judged
 * at every append that touches it and when it comes due, most often with its other payments unchanged (a
 * payment's observations only grow, by `applyEvent`).
 */
const matched = new WeakMap<Observation[], { readonly n: number; readonly ops: MatchedOperation[] }>();

function operationsOf(obs: Observation[]): MatchedOperation[] {
  const m = matched.get(obs);
  if (m?.n === obs.length) return m.ops;
  const ops = matchPayment(obs);
  matched.set(obs, { n: obs.length, ops });
  return ops;
}

function judge(b: OrderBatch, g: JudgedGroup, eventId: string, j: Judging): void {
  const payments: GroupPayment[] = [...g.payments.values()].map((obs) => ({
    posId: obs[0]!.posId,
    paymentId: obs[0]!.paymentId,
    ops: operationsOf(obs),
  }));
  const judgement = judgeOrder(g.key, g.versions, payments, {
    clock: b.clock,
    ordersSince: b.ordersSince,
    graceMs: b.ctx.graceHours * 3_600_000,
    timezone: b.ctx.timezone,
    subMerchantOf: j.lookup,
    feeLines: j.fees,
  });
  g.due = judgement.due;
  g.dirty = true;
  // the group's rows: every row the rules no longer find in the group is resolved (the core's lifecycle)
  const now = b.clock === null ? null : new Date(b.clock).toISOString();
  applyFindings(b.lifecycle, g.discs, judgement.findings, { now, eventId });
  g.judgement = judgement;
}
