import { DECISIONS, type Decision } from '../events/audit-events';
import { newEvent } from '../events/catalog';
import {
  ExceptionAssigned,
  ExceptionCommented,
  ExceptionDecisionApproved,
  ExceptionDecisionProposed,
  ExceptionDecisionRejected,
  ExceptionReopened,
  ExceptionResolvedByHand,
  HAND_REASONS,
} from '../events/exception-events';
import { eventIdFor } from '../events/ids';
import { checkText, NOTE_TEXT, plausibleInstant } from '../input-rules';
import type { Person } from '../people/directory';
import { may } from '../people/roles';
import { acceptanceOf } from '../reconciliation/discrepancy-queries';
import { amountInDoubt, moneyText } from '../reconciliation/discrepancy-summary';
import { holdsMoneyUnder } from '../config/hold-policy';
import {
  commit,
  contextOf,
  type ExceptionContext,
  type ExceptionDeps,
  holdPolicyOf,
  type Plan,
  requireRole,
  requireState,
  policyOf,
} from './context';
import { ExceptionRefused } from './errors';
import type { Proposal } from './state';
import { needsSecondPerson } from './severity';
import { releasedBy, revocationOf } from '../reconciliation/decisions';

/**
 * The exception's actions (docs/exceptions.md, "The exception's life"). Each is planned (roles, state and
 * values checked against what the store holds now; nothing written) and then committed; the bulk actions and
 * the decisions import plan every row before committing any. The person acting is a user from a token
 * (src/people), never a name typed.
 */

export type ActionRequest =
  | {
      readonly action: 'assign';
      readonly id: string;
      readonly assignee: string;
      readonly dueAt?: string;
      readonly note?: string;
    }
  | { readonly action: 'comment'; readonly id: string; readonly text: string }
  | {
      readonly action: 'resolve';
      readonly id: string;
      readonly reasonCode: string;
      readonly note: string;
      /** the money in doubt the person was shown: the work is taken out of the team's hands on that or refused */
      readonly seen?: MoneySeen;
    }
  | {
      readonly action: 'accept';
      readonly id: string;
      readonly decision?: string;
      readonly note: string;
      /** the money in doubt the person was shown (the console's page, the API's read): decided on that or refused */
      readonly seen?: MoneySeen;
    }
  | { readonly action: 'approve'; readonly id: string; readonly note: string; readonly proposal?: string }
  | { readonly action: 'reject'; readonly id: string; readonly note: string; readonly proposal?: string }
  | {
      readonly action: 'reopen';
      readonly id: string;
      readonly reason: string;
      /** the decision in force the person was shown (its acceptance; null: none): another one is not revoked unseen */
      readonly acceptance?: string | null;
    };

/** An amount in doubt (minor units, null: none) and its currency, as a person was shown them. */
export interface MoneySeen {
  readonly amountInDoubt: string | null;
  readonly currency: string | null;
}

/**
 * The money a decision was taken on, with how a refusal words it and what to do then; a pay, also what it
 * releases on the statements (minor units), which can change while the amount in doubt does not.
 */
type MoneyTaken = MoneySeen & { readonly words: string; readonly advice: string; readonly released?: string };

export type ActionName = ActionRequest['action'];
export const ACTION_REQUESTS: readonly ActionName[] = [
  'assign',
  'comment',
  'resolve',
  'accept',
  'approve',
  'reject',
  'reopen',
];

/** A required text, trimmed, checked by the door's rules; refused naming the field. */
function text(field: string, value: string | undefined): string {
  const r = checkText(value ?? '', { ...NOTE_TEXT, empty: true });
  if (!r.ok) throw new ExceptionRefused('INVALID', field, `${field}: ${r.reason}`);
  if (r.value.trim() === '') throw new ExceptionRefused('INVALID', field, `${field}: required, say why`);
  return r.value.trim();
}

const OPEN_WORK = ['open', 'assigned', 'reopened'] as const;

function planAssign(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'assign' }>): Plan {
  requireRole(actor, 'exception.assign');
  requireState(ctx, [...OPEN_WORK, 'pending_approval'], 'assign it');
  const assignee = ctx.directory.users.get(r.assignee);
  if (!assignee || assignee.revokedAt !== null)
    throw new ExceptionRefused(
      'INVALID',
      'assignee',
      `assignee: no active user ${JSON.stringify(r.assignee.slice(0, 80))}`,
    );
  if (!may(assignee.role, 'exception.resolve') && !may(assignee.role, 'exception.propose'))
    throw new ExceptionRefused(
      'INVALID',
      'assignee',
      `assignee: ${assignee.id} is a ${assignee.role} and cannot work exceptions`,
    );
  let due = ctx.item.dueAt;
  if (r.dueAt !== undefined) {
    const checked = plausibleInstant(r.dueAt);
    if (!checked.ok) throw new ExceptionRefused('INVALID', 'due', `due: ${checked.reason}`);
    due = new Date(checked.value).toISOString();
  }
  const note = r.note === undefined ? undefined : text('reason', r.note);
  const event = newEvent(ExceptionAssigned, {
    discrepancyId: ctx.item.id,
    assignee: assignee.id,
    dueAt: due,
    ...(note ? { note } : {}),
    by: actor.id,
    at: ctx.at.toISOString(),
  });
  return {
    id: ctx.item.id,
    action: 'assign',
    summary: `assign to ${assignee.id}, due ${due ?? 'none'}`,
    events: [event],
    revision: ctx.work.revision,
  };
}

function planComment(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'comment' }>): Plan {
  requireRole(actor, 'exception.comment');
  const t = text('text', r.text);
  const event = newEvent(ExceptionCommented, {
    discrepancyId: ctx.item.id,
    text: t,
    by: actor.id,
    at: ctx.at.toISOString(),
  });
  return { id: ctx.item.id, action: 'comment', summary: 'comment', events: [event], revision: ctx.work.revision };
}

// by the hold policy in force, as the statements hold: a type RECON_HOLD_POLICY holds needs a decision
const holdsMoney = (ctx: ExceptionContext, type: string) => holdsMoneyUnder(ctx.holdPolicy, type);

function planResolve(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'resolve' }>): Plan {
  requireRole(actor, 'exception.resolve');
  requireState(ctx, OPEN_WORK, 'resolve it by hand');
  if (holdsMoney(ctx, ctx.item.type))
    throw new ExceptionRefused(
      'CONFLICT',
      'id',
      `a ${ctx.item.type} holds money on the statements: it cannot be resolved by hand; propose a decision instead (accept --decision pay|withhold|write_off)`,
    );
  if (!(HAND_REASONS as readonly string[]).includes(r.reasonCode))
    throw new ExceptionRefused(
      'INVALID',
      'reason-code',
      `reason-code: expected one of ${HAND_REASONS.join(', ')}, got ${JSON.stringify(String(r.reasonCode).slice(0, 80))}`,
    );
  // resolved on what its person read: the sources changed since (an order amended) is not resolved unseen
  if (r.seen)
    requireMoney(
      { ...checkedSeen(r.seen), words: 'decision was taken on', advice: LOOK_AGAIN },
      ctx.item.id,
      ctx.item.amountInDoubt,
      ctx.item.currency,
      'amount_in_doubt',
    );
  const evidence = ctx.item.discrepancy.updated_by_event ?? ctx.item.discrepancy.detected_by_event;
  const event = newEvent(ExceptionResolvedByHand, {
    discrepancyId: ctx.item.id,
    reasonCode: r.reasonCode as (typeof HAND_REASONS)[number],
    note: text('note', r.note),
    evidence,
    by: actor.id,
    at: ctx.at.toISOString(),
  });
  return {
    id: ctx.item.id,
    action: 'resolve',
    summary: `resolve by hand (${r.reasonCode})`,
    events: [event],
    revision: ctx.work.revision,
    inDoubt: moneyOf(ctx.item.amountInDoubt, ctx.item.currency),
  };
}

/** The decision an acceptance of this exception takes, checked against its type (acceptDiscrepancy's rules). */
function decisionFor(ctx: ExceptionContext, given: string | undefined): Decision | undefined {
  if (given !== undefined && !(DECISIONS as readonly string[]).includes(given))
    throw new ExceptionRefused(
      'INVALID',
      'decision',
      `decision: expected one of ${DECISIONS.join(', ')}, got ${JSON.stringify(given.slice(0, 80))}`,
    );
  const decision = given as Decision | undefined;
  const type = ctx.item.type;
  if (holdsMoney(ctx, type) && decision === undefined)
    throw new ExceptionRefused(
      'INVALID',
      'decision',
      `decision: a ${type} holds money on the statements; say pay, withhold or write_off`,
    );
  if (decision === 'write_off' && ctx.item.amountInDoubt === null)
    throw new ExceptionRefused(
      'INVALID',
      'decision',
      `decision: a ${type} puts no amount in doubt; there is nothing to write off`,
    );
  if (!holdsMoney(ctx, type) && (decision === 'pay' || decision === 'withhold'))
    throw new ExceptionRefused(
      'INVALID',
      'decision',
      `decision: a ${type} holds no money on the statements; leave it out (or write_off)`,
    );
  return decision;
}

/** Money as the refusals word it: "100.00 UAH", or "no amount". */
const moneyOf = (amount: string | null, currency: string | null) =>
  amount === null ? 'no amount' : moneyText(BigInt(amount), currency);

/**
 * Refused when the money in doubt is no longer what the decision was taken on: an approval signs the amount
 * proposed, an acceptance the amount the person was shown (and planned on); a source that changed meanwhile (a
 * webhook re-sent with another amount) would have it write off or release another sum than anyone agreed to.
 */
function requireMoney(
  taken: MoneyTaken,
  id: string,
  amount: string | null,
  currency: string | null,
  field = 'id',
): void {
  if (taken.amountInDoubt === amount && taken.currency === currency) return;
  throw new ExceptionRefused(
    'CONFLICT',
    field,
    `exception ${id}: the ${taken.words} ${moneyOf(taken.amountInDoubt, taken.currency)}, the amount in doubt is now ${moneyOf(amount, currency)}: ${taken.advice}`,
  );
}

const proposedMoney = (p: Proposal): MoneyTaken => ({
  amountInDoubt: p.amountInDoubt,
  currency: p.currency,
  words: `${p.decision ?? 'decision'} was proposed for`,
  advice: 'reject it and propose again',
  ...(p.released !== undefined ? { released: p.released } : {}),
});

/**
 * Refused when a pay would release another sum than it was taken on: under a `payment` hold rule the statements
 * hold the whole payment, so a payment corrected from 5,000.00 to 9,000.00 with the same 4.00 fee difference in
 * doubt had an approval release 9,000.00 on a proposal to release 5,000.00. A proposal recorded before releases
 * were recorded has none to hold to.
 */
function requireRelease(taken: MoneyTaken, id: string, now: bigint | null, currency: string | null): void {
  if (taken.released === undefined || taken.released === (now === null ? null : now.toString())) return;
  throw new ExceptionRefused(
    'CONFLICT',
    'id',
    `exception ${id}: the ${taken.words} a release of ${moneyOf(taken.released, taken.currency)} held, it would release ${moneyOf(now === null ? null : now.toString(), currency)} now (the payment changed): ${taken.advice}`,
  );
}

const LOOK_AGAIN = 'look again and decide on the amount now';

/** The money a request says its person was shown, refused naming the field when it is no amount or currency. */
function checkedSeen(seen: MoneySeen): MoneySeen {
  if (seen.amountInDoubt !== null && !/^-?\d{1,30}$/.test(seen.amountInDoubt))
    throw new ExceptionRefused('INVALID', 'amount_in_doubt', 'amount_in_doubt: expected minor units (digits), or none');
  if (seen.currency !== null && !/^[A-Z]{3}$/.test(seen.currency))
    throw new ExceptionRefused('INVALID', 'currency', 'currency: expected a three-letter currency code, or none');
  return seen;
}

/**
 * Makes the acceptance (the money side), refused as a conflict when the discrepancy changed meanwhile or its
 * money is no longer what the decision was taken on.
 */
function accepting(id: string, note: string, by: string, at: Date, decision: Decision | undefined, taken: MoneyTaken) {
  return async (deps: ExceptionDeps) => {
    const writeOffAccount = policyOf(deps).writeOff.account;
    const holdPolicy = holdPolicyOf(deps);
    const r = await acceptanceOf(deps, {
      id,
      note,
      by,
      at,
      writeOffAccount,
      holdPolicy,
      ...(decision ? { decision } : {}),
    });
    if (!r.ok) throw new ExceptionRefused('CONFLICT', 'id', r.message);
    const amount = amountInDoubt(r.discrepancy);
    requireMoney(taken, id, amount === null ? null : amount.toString(), r.discrepancy.currency);
    requireRelease(taken, id, releasedBy(r.discrepancy, decision, holdPolicy), r.discrepancy.currency);
    return r.request;
  };
}

function planAccept(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'accept' }>): Plan {
  requireRole(actor, 'exception.propose');
  requireState(ctx, OPEN_WORK, 'propose a decision');
  const decision = decisionFor(ctx, r.decision);
  const note = text('note', r.note);
  const amount = ctx.item.amountInDoubt;
  // a release weighed as what the statements hold for it (the whole payment under a `payment` hold rule, a
  // write-off's too)
  const released = releasedBy(ctx.item.discrepancy, decision, ctx.holdPolicy);
  // decided on the money the person was shown: more in doubt since (a new event) is not accepted unseen
  const taken: MoneyTaken = {
    amountInDoubt: amount,
    currency: ctx.item.currency,
    words: 'decision was taken on',
    advice: LOOK_AGAIN,
    ...(released !== null ? { released: released.toString() } : {}),
  };
  if (r.seen)
    requireMoney(
      { ...checkedSeen(r.seen), words: taken.words, advice: LOOK_AGAIN },
      ctx.item.id,
      amount,
      ctx.item.currency,
      'amount_in_doubt',
    );
  const needsApproval = needsSecondPerson(
    ctx.policy,
    decision,
    decision === 'pay' ? released : amount === null ? null : BigInt(amount),
    ctx.item.currency,
  );
  const at = ctx.at.toISOString();
  const proposal = eventIdFor('exception-proposal', { discrepancyId: ctx.item.id, by: actor.id, at, decision, note });
  const event = newEvent(ExceptionDecisionProposed, {
    discrepancyId: ctx.item.id,
    proposal,
    ...(decision ? { decision } : {}),
    note,
    amountInDoubt: amount,
    currency: ctx.item.currency,
    ...(released !== null ? { released: released.toString() } : {}),
    needsApproval,
    by: actor.id,
    at,
  });
  const what = decision ?? 'accept';
  return {
    id: ctx.item.id,
    action: 'accept',
    summary: needsApproval ? `propose ${what} (needs a second person's approval)` : `accept: ${what}`,
    events: [event],
    revision: ctx.work.revision,
    ...(released !== null ? { released } : {}),
    ...(needsApproval ? {} : { money: accepting(ctx.item.id, note, actor.id, ctx.at, decision, taken) }),
  };
}

/**
 * The proposal waiting; when the request names the one its person was shown (the console's form, the API's
 * `proposal`), refused unless it is still that one: rejected and proposed again meanwhile, another decision
 * by another person would be approved on a signature given for the first.
 */
function pendingOf(ctx: ExceptionContext, shown: string | undefined) {
  requireState(ctx, ['pending_approval'], 'approve or reject a proposal');
  const p = ctx.work.pending;
  if (p === null) throw new ExceptionRefused('CONFLICT', 'id', `exception ${ctx.item.id} has no proposal waiting`);
  if (shown !== undefined && shown !== p.id)
    throw new ExceptionRefused(
      'CONFLICT',
      'proposal',
      `exception ${ctx.item.id}: the proposal waiting is no longer the one shown (now ${p.decision ?? 'a decision'} proposed by ${p.by} at ${p.at}): look again`,
    );
  return p;
}

/** The most an acceptance's note holds (DiscrepancyAccepted), as each of the notes it is made of. */
const NOTE_MAX = 4000;

/**
 * An approval's acceptance note: the approver's note whole, then as much of the proposer's as fits in what an
 * acceptance holds, cut with "…" (never half a surrogate pair): two notes of 4,000 characters each are taken at
 * the door, and their sum refused at the acceptance left the proposal unapprovable. The proposal keeps it all.
 */
function approvalNote(note: string, proposer: string, proposerNote: string): string {
  const whole = `${note} (proposed by ${proposer}: ${proposerNote})`;
  if (whole.length <= NOTE_MAX) return whole;
  const head = `${note} (proposed by ${proposer}: `;
  let room = NOTE_MAX - head.length - 2;
  if (room <= 0) return note;
  if (/[\uD800-\uDBFF]/.test(proposerNote[room - 1] ?? '')) room--;
  return `${head}${proposerNote.slice(0, room).trimEnd()}…)`;
}

function planApprove(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'approve' }>): Plan {
  requireRole(actor, 'exception.approve');
  const p = pendingOf(ctx, r.proposal);
  // maker-checker: the second person must be another person
  if (p.by === actor.id)
    throw new ExceptionRefused(
      'FORBIDDEN',
      null,
      `maker-checker: ${actor.id} proposed this ${p.decision ?? 'decision'}; another approver must approve it`,
    );
  requireMoney(proposedMoney(p), ctx.item.id, ctx.item.amountInDoubt, ctx.item.currency);
  requireRelease(
    proposedMoney(p),
    ctx.item.id,
    releasedBy(ctx.item.discrepancy, p.decision, ctx.holdPolicy),
    ctx.item.currency,
  );
  const note = text('note', r.note);
  const event = newEvent(ExceptionDecisionApproved, {
    discrepancyId: ctx.item.id,
    proposal: p.id,
    note,
    by: actor.id,
    at: ctx.at.toISOString(),
  });
  // the acceptance names the approver; the proposer and their reason stay in its note and in the history
  const acceptNote = approvalNote(note, p.by, p.note);
  return {
    id: ctx.item.id,
    action: 'approve',
    summary: `approve ${p.decision ?? 'decision'} proposed by ${p.by}`,
    events: [event],
    revision: ctx.work.revision,
    money: accepting(ctx.item.id, acceptNote, actor.id, ctx.at, p.decision ?? undefined, proposedMoney(p)),
  };
}

function planReject(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'reject' }>): Plan {
  requireRole(actor, 'exception.approve');
  const p = pendingOf(ctx, r.proposal);
  const event = newEvent(ExceptionDecisionRejected, {
    discrepancyId: ctx.item.id,
    proposal: p.id,
    note: text('note', r.note),
    by: actor.id,
    at: ctx.at.toISOString(),
  });
  return {
    id: ctx.item.id,
    action: 'reject',
    summary: `reject ${p.decision ?? 'decision'} proposed by ${p.by}`,
    events: [event],
    revision: ctx.work.revision,
  };
}

/** Refuses a reopening planned on another decision in force than the one there now (`shown`; null: none). */
function requireAcceptance(ctx: ExceptionContext, shown: string | null): never {
  const now = ctx.work.decision ?? 'an acceptance';
  throw new ExceptionRefused(
    'CONFLICT',
    'acceptance',
    shown === null
      ? `exception ${ctx.item.id}: a decision (${now}) was taken since it was shown without one; reopening would revoke it unseen: look again`
      : `exception ${ctx.item.id}: the decision in force is no longer the one shown: look again`,
  );
}

/**
 * Reopens a decided exception. Taking back a decision in force moves money again, so it is an approver's;
 * reopening a hand resolution is the work of whoever may resolve.
 */
function planReopen(ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: 'reopen' }>): Plan {
  const reason = text('reason', r.reason);
  const accepted = ctx.state === 'accepted';
  requireRole(actor, accepted ? 'exception.approve' : 'exception.resolve');
  if (!accepted && ctx.work.work !== 'resolved_by_hand')
    requireState(ctx, ['accepted', 'resolved_by_hand'], 'reopen it');
  // a decision taken outside the exception's stream (`recon discrepancies accept`) leaves its revision as read
  const inForce = ctx.work.acceptance;
  if (r.acceptance !== undefined && r.acceptance !== inForce) requireAcceptance(ctx, r.acceptance);
  const at = ctx.at;
  const event = newEvent(ExceptionReopened, { discrepancyId: ctx.item.id, reason, by: actor.id, at: at.toISOString() });
  const revoke = async (deps: ExceptionDeps) => {
    const r = await revocationOf(deps.store, { id: ctx.item.id, reason, by: actor.id, at });
    if (!r.ok) throw new ExceptionRefused('CONFLICT', 'id', r.message);
    // the decision revoked is the one planned on, never one taken between the plan and the write
    if (r.acceptance !== inForce) requireAcceptance(ctx, inForce);
    return r.request;
  };
  return {
    id: ctx.item.id,
    action: 'reopen',
    summary: accepted ? 'reopen: revoke the decision in force' : 'reopen the hand resolution',
    events: [event],
    revision: ctx.work.revision,
    ...(accepted ? { money: revoke } : {}),
  };
}

const PLANNERS: {
  [A in ActionName]: (ctx: ExceptionContext, actor: Person, r: Extract<ActionRequest, { action: A }>) => Plan;
} = {
  assign: planAssign,
  comment: planComment,
  resolve: planResolve,
  accept: planAccept,
  approve: planApprove,
  reject: planReject,
  reopen: planReopen,
};

/** Checks an action against the exception as it stands, without writing: what it would do, or a refusal. */
export async function planAction(deps: ExceptionDeps, actor: Person, r: ActionRequest): Promise<Plan> {
  const ctx = await contextOf(deps, r.id);
  const planner = PLANNERS[r.action] as (ctx: ExceptionContext, actor: Person, r: ActionRequest) => Plan;
  return planner(ctx, actor, r);
}

export interface ActionResult {
  readonly id: string;
  readonly action: string;
  readonly summary: string;
  /** the events written to the exception's stream */
  readonly events: string[];
}

/** Plans and commits one action. */
export async function actOnException(deps: ExceptionDeps, actor: Person, r: ActionRequest): Promise<ActionResult> {
  const plan = await planAction(deps, actor, r);
  const done = await commit(deps, plan);
  return { ...done, summary: plan.summary };
}

type Without<A extends ActionName> = Omit<Extract<ActionRequest, { action: A }>, 'action'>;

export const assignException = (deps: ExceptionDeps, actor: Person, r: Without<'assign'>) =>
  actOnException(deps, actor, { action: 'assign', ...r });
export const commentOnException = (deps: ExceptionDeps, actor: Person, r: Without<'comment'>) =>
  actOnException(deps, actor, { action: 'comment', ...r });
export const resolveExceptionByHand = (deps: ExceptionDeps, actor: Person, r: Without<'resolve'>) =>
  actOnException(deps, actor, { action: 'resolve', ...r });
export const proposeDecision = (deps: ExceptionDeps, actor: Person, r: Without<'accept'>) =>
  actOnException(deps, actor, { action: 'accept', ...r });
export const approveDecision = (deps: ExceptionDeps, actor: Person, r: Without<'approve'>) =>
  actOnException(deps, actor, { action: 'approve', ...r });
export const rejectDecision = (deps: ExceptionDeps, actor: Person, r: Without<'reject'>) =>
  actOnException(deps, actor, { action: 'reject', ...r });
export const reopenException = (deps: ExceptionDeps, actor: Person, r: Without<'reopen'>) =>
  actOnException(deps, actor, { action: 'reopen', ...r });
