import { type HoldPolicy, holdPolicyFromEnv } from '../config/hold-policy';
import type { Sql } from '../db/connect';
import { discrepancyStream } from '../events/audit-events';
import { exceptionStream } from '../events/exception-events';
import { type Directory, type Person, readDirectory } from '../people/directory';
import { NotAllowed } from '../people/errors';
import { type Action, may } from '../people/roles';
import { isStoreError } from '../store/errors';
import type { AppendRequest, EventStore, NewEvent } from '../store/types';
import { ExceptionRefused } from './errors';
import { exceptionPolicyOf } from './policy';
import { type ExceptionItem, getException } from './queries';
import type { ExceptionPolicy } from './severity';
import { type ExceptionWork, foldWork, stateOf, type ExceptionState } from './state';

/**
 * What every exception action reads before it decides (the discrepancy as its leg shows it, the two
 * streams of the exception folded), and how it writes: one append to `exception-<id>` at the revision read,
 * then what follows it on the money side (an acceptance, a revocation).
 */

export interface ExceptionDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly policy?: ExceptionPolicy;
  /** which types hold money on the statements (default: RECON_HOLD_POLICY's, as the statements read it) */
  readonly holdPolicy?: HoldPolicy;
  /** the clock (tests pass one); default: now */
  readonly now?: () => Date;
}

export const policyOf = (deps: ExceptionDeps): ExceptionPolicy => deps.policy ?? exceptionPolicyOf().policy;
export const holdPolicyOf = (deps: ExceptionDeps): HoldPolicy => deps.holdPolicy ?? holdPolicyFromEnv();
export const nowOf = (deps: ExceptionDeps): Date => deps.now?.() ?? new Date();

export interface ExceptionContext {
  readonly item: ExceptionItem;
  /** folded from the streams themselves, not the read model: what an append is checked against */
  readonly work: ExceptionWork;
  readonly state: ExceptionState;
  readonly at: Date;
  readonly directory: Directory;
  readonly policy: ExceptionPolicy;
  readonly holdPolicy: HoldPolicy;
}

/** The exception as it stands now, read from the store (the work) and the legs' views (the discrepancy). */
export async function contextOf(deps: ExceptionDeps, id: string): Promise<ExceptionContext> {
  const at = nowOf(deps);
  const policy = policyOf(deps);
  const item = await getException(deps.sql, id, at, policy);
  if (item === null)
    throw new ExceptionRefused('NOT_FOUND', 'id', `id: no discrepancy ${JSON.stringify(id.slice(0, 80))}`);
  const [work, decisions, directory] = await Promise.all([
    deps.store.readStream(exceptionStream(item.id)),
    deps.store.readStream(discrepancyStream(item.id)),
    readDirectory(deps.store),
  ]);
  // each stream folded in its order: the two parts of the state are independent of how they interleave
  const folded = foldWork(item.id, [...work, ...decisions]);
  return {
    item,
    work: folded,
    state: stateOf(item.discrepancy, folded).state,
    at,
    directory,
    policy,
    holdPolicy: holdPolicyOf(deps),
  };
}

const article = (role: string) => (/^[aeiou]/.test(role) ? 'an' : 'a');

/** Refuses a person whose role does not allow the action (NotAllowed FORBIDDEN, naming both). */
export function requireRole(actor: Person, action: Action): void {
  if (!may(actor.role, action))
    throw new NotAllowed('FORBIDDEN', `${actor.id} is ${article(actor.role)} ${actor.role}; ${action} is not theirs`);
}

/** Refuses unless the exception is in one of these states. */
export function requireState(ctx: ExceptionContext, allowed: readonly ExceptionState[], what: string): void {
  if (!allowed.includes(ctx.state))
    throw new ExceptionRefused(
      'CONFLICT',
      'id',
      `exception ${ctx.item.id} is ${ctx.state.replace(/_/g, ' ')}: cannot ${what} (only when ${allowed.join(', ').replace(/_/g, ' ')})`,
    );
}

/** What an action will do, checked and not yet written: the bulk dry run lists these. */
export interface Plan {
  readonly id: string;
  readonly action: string;
  /** in words, for the dry run and the CLI */
  readonly summary: string;
  readonly events: readonly NewEvent[];
  readonly revision: number;
  /**
   * The money side, checked and built when written: an acceptance or a revocation on the discrepancy's stream,
   * appended with the exception's events in one appendMany (refused: ExceptionRefused, nothing written)
   */
  readonly money?: (deps: ExceptionDeps) => Promise<AppendRequest>;
  /** an acceptance deciding pay: what it releases on the statements (decisions.ts `releasedByPay`), minor units */
  readonly released?: bigint;
  /** a hand resolution: the money in doubt it was planned on, in words ("10.00 UAH"), for a preview to bind */
  readonly inDoubt?: string;
}

/**
 * Writes the plans of one bulk action or one Decisions sheet in one appendMany, all or nothing: each written
 * on its own, another person acting on one of them between two writes refused that one after the ones before
 * it were written (a sheet half applied). Another person first on any of them: refused, nothing written.
 */
export async function commitAll(deps: ExceptionDeps, plans: readonly Plan[]): Promise<void> {
  if (plans.length === 0) return;
  const requests: AppendRequest[] = [];
  for (const plan of plans) {
    requests.push({
      stream: exceptionStream(plan.id),
      events: [...plan.events],
      expectedRevision: plan.revision < 0 ? 'no_stream' : plan.revision,
    });
    if (plan.money) requests.push(await plan.money(deps));
  }
  try {
    await deps.store.appendMany(requests);
  } catch (e) {
    if (isStoreError(e, 'WRONG_EXPECTED_REVISION'))
      throw new ExceptionRefused(
        'CONFLICT',
        'id',
        `one of the ${plans.length} exceptions changed meanwhile (another person acted first); nothing was written, look again`,
      );
    throw e;
  }
}

/**
 * Writes a plan: its events at the revision read and, for a decision, the money's event at the discrepancy's
 * revision read, in one appendMany. Another person first on either stream: refused, nothing written (on
 * PostgreSQL one transaction; EventStoreDB checks both revisions before writing either, docs/exceptions.md).
 */
export async function commit(
  deps: ExceptionDeps,
  plan: Plan,
): Promise<{ id: string; action: string; events: string[] }> {
  const own: AppendRequest = {
    stream: exceptionStream(plan.id),
    events: [...plan.events],
    expectedRevision: plan.revision < 0 ? 'no_stream' : plan.revision,
  };
  const money = plan.money ? await plan.money(deps) : undefined;
  try {
    if (money) await deps.store.appendMany([own, money]);
    else await deps.store.append(own.stream, own.events, { expectedRevision: own.expectedRevision! });
  } catch (e) {
    if (isStoreError(e, 'WRONG_EXPECTED_REVISION'))
      throw new ExceptionRefused(
        'CONFLICT',
        'id',
        money
          ? `exception ${plan.id} or the decision on its money changed meanwhile (another person acted first); look again`
          : `exception ${plan.id} changed meanwhile (another person acted first); look again`,
      );
    throw e;
  }
  return { id: plan.id, action: plan.action, events: plan.events.map((e) => e.id) };
}
