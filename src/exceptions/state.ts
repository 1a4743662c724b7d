import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, type Decision } from '../events/audit-events';
import { dataOf, isEvent } from '../events/catalog';
import {
  ExceptionAssigned,
  ExceptionCommented,
  ExceptionDecisionApproved,
  ExceptionDecisionProposed,
  ExceptionDecisionRejected,
  ExceptionReopened,
  ExceptionResolvedByHand,
} from '../events/exception-events';
import type { RecordedEvent } from '../store/types';
import type { SinceAccepted } from '../reconciliation/discrepancies/columns';
import { type DiscrepancyType, entryOf } from '../reconciliation/discrepancies/registry';
import { moneyText } from '../reconciliation/discrepancy-summary';

/**
 * One exception's state, folded from its two streams: `exception-<id>` (the work) and `discrepancy-<id>`
 * (the decision in force). The two are kept apart (`work`, `acceptance`) and combined only when read
 * (`stateOf`), so the result does not depend on how the two streams' events interleave: a replay in any
 * batch sizes gives the same rows. Pure: the projection (projections/exceptions.ts) and the actions
 * (actions.ts, reading the streams themselves) share it.
 */

export const WORK_STATES = ['open', 'assigned', 'pending_approval', 'resolved_by_hand', 'reopened'] as const;
export type WorkState = (typeof WORK_STATES)[number];

/** The states an exception is shown in: the work's, `accepted` (a decision in force), `resolved` (sources agree). */
export const EXCEPTION_STATES = [
  'open',
  'assigned',
  'pending_approval',
  'resolved_by_hand',
  'accepted',
  'reopened',
  'resolved',
] as const;
export type ExceptionState = (typeof EXCEPTION_STATES)[number];

export interface Proposal {
  readonly id: string;
  readonly decision: Decision | null;
  readonly note: string;
  readonly amountInDoubt: string | null;
  readonly currency: string | null;
  /** a pay: the money it releases on the statements, minor units (absent: not a pay, or not recorded) */
  readonly released?: string;
  readonly by: string;
  readonly at: string;
}

export interface ExceptionWork {
  readonly discrepancyId: string;
  work: WorkState;
  assignee: string | null;
  dueAt: string | null;
  /** a proposal waiting for a second person */
  pending: Proposal | null;
  /** the discrepancy's updated_by_event when resolved by hand */
  evidence: string | null;
  reasonCode: string | null;
  /** the DiscrepancyAccepted event in force, and its decision */
  acceptance: string | null;
  decision: Decision | null;
  lastAction: string | null;
  lastBy: string | null;
  lastAt: string | null;
  /** the revision of `exception-<id>` read (-1: none), appended against */
  revision: number;
  /** the revision of `discrepancy-<id>` read (-1: none) */
  decisionRevision: number;
}

export function newWork(discrepancyId: string): ExceptionWork {
  return {
    discrepancyId,
    work: 'open',
    assignee: null,
    dueAt: null,
    pending: null,
    evidence: null,
    reasonCode: null,
    acceptance: null,
    decision: null,
    lastAction: null,
    lastBy: null,
    lastAt: null,
    revision: -1,
    decisionRevision: -1,
  };
}

/** One line of an exception's history: who did what, when, and why. */
export interface HistoryEntry {
  readonly eventId: string;
  readonly discrepancyId: string;
  readonly action: string;
  readonly by: string;
  readonly at: string;
  readonly why: string | null;
  readonly detail: Record<string, unknown>;
}

const touched = (w: ExceptionWork, action: string, by: string, at: string) => {
  w.lastAction = action;
  w.lastBy = by;
  w.lastAt = at;
};

/** Folds one event of the exception's streams into `w`; returns its history line, or null for another event. */
export function evolveWork(w: ExceptionWork, e: RecordedEvent): HistoryEntry | null {
  const entry = workEntry(w, e) ?? decisionEntry(w, e);
  if (entry === null) return null;
  touched(w, entry.action, entry.by, entry.at);
  return entry;
}

function line(
  e: RecordedEvent,
  w: ExceptionWork,
  action: string,
  by: string,
  at: string,
  why: string | null,
  detail = {},
) {
  return { eventId: e.id, discrepancyId: w.discrepancyId, action, by, at, why, detail };
}

function workEntry(w: ExceptionWork, e: RecordedEvent): HistoryEntry | null {
  if (isEvent(ExceptionAssigned, e)) {
    const d = dataOf(ExceptionAssigned, e);
    Object.assign(w, { revision: e.revision, assignee: d.assignee, dueAt: d.dueAt });
    if (w.work !== 'pending_approval') w.work = 'assigned';
    return line(e, w, 'assigned', d.by, d.at, d.note ?? null, { assignee: d.assignee, due_at: d.dueAt });
  }
  if (isEvent(ExceptionCommented, e)) {
    const d = dataOf(ExceptionCommented, e);
    w.revision = e.revision;
    return line(e, w, 'commented', d.by, d.at, d.text);
  }
  if (isEvent(ExceptionResolvedByHand, e)) {
    const d = dataOf(ExceptionResolvedByHand, e);
    Object.assign(w, {
      revision: e.revision,
      work: 'resolved_by_hand',
      evidence: d.evidence,
      reasonCode: d.reasonCode,
    });
    return line(e, w, 'resolved_by_hand', d.by, d.at, d.note, { reason_code: d.reasonCode, evidence: d.evidence });
  }
  return proposalEntry(w, e);
}

function proposalEntry(w: ExceptionWork, e: RecordedEvent): HistoryEntry | null {
  if (isEvent(ExceptionDecisionProposed, e)) {
    const d = dataOf(ExceptionDecisionProposed, e);
    w.revision = e.revision;
    const p: Proposal = {
      id: d.proposal,
      decision: d.decision ?? null,
      note: d.note,
      amountInDoubt: d.amountInDoubt,
      currency: d.currency,
      ...(d.released !== undefined ? { released: d.released } : {}),
      by: d.by,
      at: d.at,
    };
    if (d.needsApproval) Object.assign(w, { pending: p, work: 'pending_approval' });
    const detail = {
      proposal: d.proposal,
      decision: p.decision,
      amount_in_doubt: d.amountInDoubt,
      ...(d.released !== undefined ? { released: d.released } : {}),
      needs_approval: d.needsApproval,
    };
    return line(e, w, 'proposed', d.by, d.at, d.note, detail);
  }
  if (isEvent(ExceptionDecisionApproved, e) || isEvent(ExceptionDecisionRejected, e)) {
    const approved = isEvent(ExceptionDecisionApproved, e);
    const d = approved ? dataOf(ExceptionDecisionApproved, e) : dataOf(ExceptionDecisionRejected, e);
    const proposer = w.pending?.by ?? null;
    Object.assign(w, { revision: e.revision, pending: null });
    if (!approved) w.work = w.assignee ? 'assigned' : 'open';
    return line(e, w, approved ? 'approved' : 'rejected', d.by, d.at, d.note, {
      proposal: d.proposal,
      proposed_by: proposer,
    });
  }
  if (isEvent(ExceptionReopened, e)) {
    const d = dataOf(ExceptionReopened, e);
    Object.assign(w, { revision: e.revision, work: 'reopened', evidence: null, reasonCode: null, pending: null });
    return line(e, w, 'reopened', d.by, d.at, d.reason);
  }
  return null;
}

function decisionEntry(w: ExceptionWork, e: RecordedEvent): HistoryEntry | null {
  if (isEvent(DiscrepancyAccepted, e)) {
    const d = dataOf(DiscrepancyAccepted, e);
    Object.assign(w, { decisionRevision: e.revision, acceptance: e.id, decision: d.decision ?? null, pending: null });
    if (w.work === 'pending_approval') w.work = w.assignee ? 'assigned' : 'open';
    // what a release under a `payment` rule let go (the whole payment), for an auditor reading the history
    const detail = { decision: d.decision ?? null, ...(d.released !== undefined ? { released: d.released } : {}) };
    return line(e, w, 'accepted', d.acceptedBy, d.acceptedAt, d.note, detail);
  }
  if (isEvent(DiscrepancyAcceptanceRevoked, e)) {
    const d = dataOf(DiscrepancyAcceptanceRevoked, e);
    w.decisionRevision = e.revision;
    if (w.acceptance === d.acceptance) Object.assign(w, { acceptance: null, decision: null });
    return line(e, w, 'acceptance_revoked', d.revokedBy, d.revokedAt, d.reason, { acceptance: d.acceptance });
  }
  return null;
}

/** The events of both streams folded, each stream in its order. */
export function foldWork(discrepancyId: string, events: readonly RecordedEvent[]): ExceptionWork {
  const w = newWork(discrepancyId);
  for (const e of events) evolveWork(w, e);
  return w;
}

/** What the discrepancy's row says that the exception's state reads. */
export interface DiscrepancyFacts {
  readonly status: string;
  readonly updated_by_event: string | null;
  /** an accepted one's amount in doubt then and now, when they differ */
  readonly since_accepted?: SinceAccepted;
  readonly currency?: string | null;
  /** its type: a settlement or payout discrepancy holds nothing on a statement */
  readonly type?: string;
}

/**
 * Why an accepted exception needs a person again: more is in doubt now than the decision was taken on. A release
 * (pay, write off) covers the amount accepted, so the statements hold the rest; withheld, all of it is held.
 */
function moreInDoubt(d: DiscrepancyFacts, decision: Decision | null): string | null {
  const s = d.since_accepted;
  if (!s || s.amount_in_doubt_now === null) return null;
  const [then, now] = [BigInt(s.amount_in_doubt ?? '0'), BigInt(s.amount_in_doubt_now)];
  if (now <= then) return null;
  const m = (x: bigint) => moneyText(x, d.currency ?? null);
  // the statements hold money of a payment (holds.ts): the bank side's discrepancies name none
  const leg = d.type ? entryOf(d.type as DiscrepancyType)?.leg : undefined;
  const held =
    leg === 'settlement' || leg === 'payouts'
      ? 'no statement holds money for it (the bank side)'
      : decision === 'withhold'
        ? 'all of it is held'
        : `the statements hold the ${m(now - then)} above it`;
  return `more in doubt than when it was accepted (${m(now)} now, ${m(then)} then): ${held}; reopen it to decide again`;
}

/**
 * The state an exception is shown in, and why when it was reopened by the sources. Sources that agree
 * resolve it whatever was done by hand; a decision in force makes it accepted; a hand resolution whose
 * evidence the sources have since changed (the discrepancy still open) shows as reopened, naming why.
 * Computed when read, never stored: a replay cannot disagree with it.
 */
export function stateOf(
  d: DiscrepancyFacts,
  w: (Pick<ExceptionWork, 'work' | 'acceptance' | 'evidence'> & { readonly decision?: Decision | null }) | null,
): { state: ExceptionState; why: string | null } {
  if (d.status === 'resolved') return { state: 'resolved', why: 'the sources agree now' };
  if (w === null) return { state: d.status === 'accepted' ? 'accepted' : 'open', why: moreInDoubt(d, null) };
  if (w.acceptance !== null) return { state: 'accepted', why: moreInDoubt(d, w.decision ?? null) };
  if (w.work === 'resolved_by_hand' && d.status === 'open' && w.evidence !== d.updated_by_event)
    return { state: 'reopened', why: 'the sources changed after the hand resolution' };
  return { state: w.work, why: null };
}
