import { createHash } from 'node:crypto';
import { ExceptionDecisionProposed, exceptionStream } from '../events/exception-events';
import { eventIdFor } from '../events/ids';
import type { Person } from '../people/directory';
import { type ActionRequest, planAction } from './actions';
import { commitAll, type ExceptionDeps, policyOf, nowOf, type Plan } from './context';
import { ExceptionRefused } from './errors';
import { type ExceptionFilter, exceptionBatches } from './queries';
import { needsSecondPerson } from './severity';
import { moneyText } from '../reconciliation/discrepancy-summary';

/**
 * Bulk actions (assign, comment, resolve, accept) on every exception matching a filter, and the seam of the
 * offline decisions: a list of rows applied all or nothing. Every target is planned first (checked against
 * the store, nothing written); the dry run stops there and lists the plans, the real run commits exactly
 * those plans. A target whose plan is refused is listed as skipped with the reason, and never written.
 */

export const BULK_ACTIONS = ['assign', 'comment', 'resolve', 'accept'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** The most exceptions one bulk action plans and writes (in one append): more is refused, naming the filter. */
export const MAX_BULK = 10_000;

/** What the bulk action does to each target: its fields without the id; `reason` is the required why. */
export interface BulkRequest {
  readonly action: BulkAction;
  readonly reason: string;
  readonly assignee?: string;
  readonly reasonCode?: string;
  readonly decision?: string;
}

export interface BulkOutcome {
  /** `inDoubt`: a decision's money as planned ("10.00 UAH"), which the preview shows and its digest binds */
  readonly changes: Array<{ id: string; summary: string; inDoubt?: string }>;
  readonly skipped: Array<{ id: string; reason: string }>;
  readonly dryRun: boolean;
}

function requestFor(id: string, b: BulkRequest): ActionRequest {
  switch (b.action) {
    case 'assign':
      return { action: 'assign', id, assignee: b.assignee ?? '', note: b.reason };
    case 'comment':
      return { action: 'comment', id, text: b.reason };
    case 'resolve':
      return { action: 'resolve', id, reasonCode: b.reasonCode ?? '', note: b.reason };
    case 'accept':
      return { action: 'accept', id, note: b.reason, ...(b.decision !== undefined ? { decision: b.decision } : {}) };
  }
}

/**
 * A plan's proposed write-off or release of held money: the decision, its currency and amount in doubt, whether
 * it already waits for approval.
 */
function moneyDecisionOf(
  plan: Plan,
): { decision: 'write_off' | 'pay'; currency: string | null; amount: bigint; waits: boolean } | null {
  const e = plan.events[0];
  if (plan.action !== 'accept' || e?.type !== ExceptionDecisionProposed.type) return null;
  const d = e.data as {
    decision?: string;
    amountInDoubt: string | null;
    currency: string | null;
    needsApproval: boolean;
  };
  if (d.decision !== 'write_off' && d.decision !== 'pay') return null;
  // a release summed as what it releases on the statements (the whole payment under a `payment` hold rule)
  const amount = d.decision === 'pay' && plan.released !== undefined ? plan.released : d.amountInDoubt;
  if (amount === null) return null;
  return { decision: d.decision, currency: d.currency, amount: BigInt(amount), waits: d.needsApproval };
}

/**
 * The write-offs (or the releases of held money) of one action (a bulk accept, a Decisions sheet) that together
 * come to more than their currency's approval limit each wait for a second person, however small each is: one
 * person's word alone writes off or releases no more in one action than in one exception. Those planned in force
 * are planned again so.
 */
async function overLimit(
  deps: ExceptionDeps,
  actor: Person,
  planned: ReadonlyArray<{ request: ActionRequest; plan: Plan }>,
): Promise<Plan[]> {
  const policy = policyOf(deps);
  const keyOf = (m: { decision: string; currency: string | null }) => `${m.decision} ${m.currency}`;
  const totals = new Map<string, { decision: string; currency: string | null; total: bigint }>();
  for (const { plan } of planned) {
    const m = moneyDecisionOf(plan);
    if (!m) continue;
    const t = totals.get(keyOf(m));
    if (t) t.total += m.amount;
    else totals.set(keyOf(m), { decision: m.decision, currency: m.currency, total: m.amount });
  }
  const over = new Set(
    [...totals].filter(([, t]) => needsSecondPerson(policy, t.decision, t.total, t.currency)).map(([k]) => k),
  );
  if (over.size === 0) return planned.map((p) => p.plan);
  // every write-off or release of the action above nothing: each needs the second person
  const strict = {
    ...deps,
    policy: {
      ...policy,
      writeOff: { ...policy.writeOff, approvalAbove: 0n, approvalAboveByCurrency: {} },
      pay: { approvalAbove: 0n, approvalAboveByCurrency: {} },
    },
  };
  const plans: Plan[] = [];
  for (const { request, plan } of planned) {
    const m = moneyDecisionOf(plan);
    plans.push(m && !m.waits && over.has(keyOf(m)) ? await planAction(strict, actor, request) : plan);
  }
  return plans;
}

/** Plans every request; refusals of a single exception are kept, with their message, beside the plans. */
async function planAll(deps: ExceptionDeps, actor: Person, requests: readonly ActionRequest[]) {
  const planned: Array<{ request: ActionRequest; plan: Plan }> = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  for (const r of requests) {
    try {
      planned.push({ request: r, plan: await planAction(deps, actor, r) });
    } catch (e) {
      // a refusal of the person (role) is the whole run's, not one exception's
      if (!(e instanceof ExceptionRefused)) throw e;
      skipped.push({ id: r.id, reason: e.message });
    }
  }
  return { plans: await overLimit(deps, actor, planned), skipped };
}

/**
 * What a dry run listed, as a digest: the apply of a preview (the console's) passes it back as `expected`. A
 * decision's money is in it: the same exceptions with more in doubt since are not what was previewed.
 */
export function changesDigest(changes: BulkOutcome['changes']): string {
  const h = createHash('sha256');
  for (const c of changes) h.update(`${c.id}\u0000${c.summary}\u0000${c.inDoubt ?? ''}\u0000`);
  return h.digest('base64url');
}

/** A plan as the outcome lists it; a decision or hand resolution with the money in doubt it was planned on. */
function changeOf(plan: Plan): BulkOutcome['changes'][number] {
  if (plan.inDoubt !== undefined) return { id: plan.id, summary: plan.summary, inDoubt: plan.inDoubt };
  const e = plan.events[0];
  if (plan.action !== 'accept' || e?.type !== ExceptionDecisionProposed.type)
    return { id: plan.id, summary: plan.summary };
  const d = e.data as { amountInDoubt: string | null; currency: string | null; released?: string };
  const inDoubt = d.amountInDoubt === null ? 'no amount' : moneyText(BigInt(d.amountInDoubt), d.currency);
  // a pay releasing more than its doubt (the whole payment under a `payment` rule): the preview binds that too
  const release =
    d.released !== undefined && d.released !== d.amountInDoubt
      ? ` (releases ${moneyText(BigInt(d.released), d.currency)})`
      : '';
  return { id: plan.id, summary: plan.summary, inDoubt: `${inDoubt}${release}` };
}

/**
 * A bulk action on every exception matching `filter`; `dryRun` lists what would change and writes nothing.
 * `expected` (changesDigest of a dry run): refused, nothing written, unless the plans are still exactly those.
 */
export async function bulkAct(
  deps: ExceptionDeps,
  actor: Person,
  filter: ExceptionFilter,
  b: BulkRequest,
  opts: { dryRun: boolean; maxTargets?: number; expected?: string },
): Promise<BulkOutcome> {
  const most = opts.maxTargets ?? MAX_BULK;
  if (!(BULK_ACTIONS as readonly string[]).includes(b.action))
    throw new ExceptionRefused('INVALID', 'action', `action: expected one of ${BULK_ACTIONS.join(', ')}`);
  if (!b.reason?.trim()) throw new ExceptionRefused('INVALID', 'reason', 'reason: required for a bulk action, say why');
  const ids: string[] = [];
  const matching = exceptionBatches(
    deps.sql,
    { ...filter, limit: undefined, after: undefined },
    nowOf(deps),
    policyOf(deps),
  );
  for await (const batch of matching) {
    for (const x of batch) ids.push(x.id);
    // refused before any plan: a month's million resolved rows matched by a loose filter are not one action
    if (ids.length > most)
      throw new ExceptionRefused(
        'INVALID',
        'filter',
        `the filter matches more than ${most.toLocaleString('en-US')} exceptions, more than one action takes: narrow it (leg, type, state, sub-merchant, currency, amount, age)`,
      );
  }
  const { plans, skipped } = await planAll(
    deps,
    actor,
    ids.map((id) => requestFor(id, b)),
  );
  const changes = plans.map(changeOf);
  if (opts.expected !== undefined && changesDigest(changes) !== opts.expected)
    throw new ExceptionRefused(
      'CONFLICT',
      'filter',
      'the exceptions this action would change are no longer those previewed (another person acted meanwhile): nothing was written, preview it again',
    );
  if (!opts.dryRun) await commitAll(deps, plans);
  return { changes, skipped, dryRun: opts.dryRun };
}

/** One refused row of a decisions list, by its place in the list (a sheet's row number for an import). */
export interface RowProblem {
  readonly row: number;
  readonly field: string | null;
  readonly message: string;
}

/**
 * The id of a Decisions sheet row's n-th event, from the file (its sha-256), the row and the exception: the
 * events carry the time they were written, so without it the same file imported again wrote every row again.
 */
const sheetEventId = (sheet: string, row: number, id: string, n: number) =>
  eventIdFor('DecisionsSheetRow', { sheet, row, id, n });

/** Whether this row of this file was written before (its first event is in the exception's stream). */
async function rowImported(deps: ExceptionDeps, sheet: string, row: number, id: string): Promise<boolean> {
  const first = sheetEventId(sheet, row, id, 0);
  return (await deps.store.readStream(exceptionStream(id))).some((e) => e.id === first);
}

/**
 * Applies a list of actions all or nothing: every row is planned first, and one refused row refuses the list
 * (every problem returned, nothing written). The seam of the offline Decisions sheet: its importer turns
 * rows into ActionRequests (numbered as the sheet numbers them) and calls this. `sheet`: the file's sha-256;
 * a row of it written before is passed by, and its events are given ids from it.
 */
export async function applyDecisionRows(
  deps: ExceptionDeps,
  actor: Person,
  rows: ReadonlyArray<{ row: number; request: ActionRequest }>,
  opts: { dryRun: boolean; sheet?: string },
): Promise<
  { ok: true; changes: Array<{ row: number; id: string; summary: string }> } | { ok: false; problems: RowProblem[] }
> {
  const planned: Array<{ row: number; request: ActionRequest; plan: Plan }> = [];
  const problems: RowProblem[] = [];
  const first = new Map<string, number>();
  for (const { row, request } of rows) {
    // every plan is checked against the revision read: a second row for one exception would fail half-way
    const before = first.get(request.id.toLowerCase());
    if (before !== undefined) {
      problems.push({ row, field: 'id', message: `id: the exception of row ${before} again; one row per exception` });
      continue;
    }
    first.set(request.id.toLowerCase(), row);
    if (opts.sheet && (await rowImported(deps, opts.sheet, row, request.id.toLowerCase()))) continue;
    try {
      const plan = await planAction(deps, actor, request);
      const sheet = opts.sheet;
      const events = sheet
        ? plan.events.map((e, n) => ({ ...e, id: sheetEventId(sheet, row, plan.id, n) }))
        : plan.events;
      planned.push({ row, request, plan: { ...plan, events } });
    } catch (e) {
      if (!(e instanceof ExceptionRefused)) throw e;
      problems.push({ row, field: e.field, message: e.message });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const plans = await overLimit(deps, actor, planned);
  if (!opts.dryRun) await commitAll(deps, plans);
  return { ok: true, changes: plans.map((p, i) => ({ row: planned[i]!.row, id: p.id, summary: p.summary })) };
}
