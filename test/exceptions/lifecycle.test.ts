import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import {
  approveDecision,
  assignException,
  commentOnException,
  planAction,
  proposeDecision,
  rejectDecision,
  reopenException,
  resolveExceptionByHand,
} from '../../src/exceptions/actions';
import { bulkAct } from '../../src/exceptions/bulk';
import { commit, type ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { exceptionHistory, getException, listExceptions } from '../../src/exceptions/queries';
import { DEFAULT_EXCEPTION_POLICY, dueAt } from '../../src/exceptions/severity';
import { stateOf } from '../../src/exceptions/state';
import { rebuildProjection } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, exceptionDeps, idOf, project, seedTwoLegs, snapshot, type Team } from './support';

/**
 * The exception's life on two legs (PSP and orders), through the actions the CLI, the API and the console
 * call: assignment, comments, hand resolution (refused where money is held), decisions in force at once or
 * proposed for a second person (maker-checker), reopening; bulk dry run equals the real run; a replay from
 * zero gives the same rows.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let psp: string; // amount_mismatch: 100.00 in doubt, holds money
let unpaid: string; // order_not_at_psp: holds none
let orphan: string; // payment_without_order: holds money
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  orphan = await idOf(db.sql, 'payment_without_order');
  // a write-off above 50.00 needs a second person; each action a millisecond later (ids from content)
  const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 5000n } }).policy;
  deps = { sql: db.sql, store, policy, now: () => new Date(NOW.getTime() + ++tick) };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const show = async (id: string) => {
  await project(db.sql, store);
  return (await getException(db.sql, id, NOW, deps.policy))!;
};

describe('the exception of a PSP discrepancy that holds money', () => {
  it('is assigned (due by its SLA), commented, and cannot be resolved by hand', async () => {
    const before = await show(psp);
    expect(before).toMatchObject({ leg: 'psp', state: 'open', amountInDoubt: '10000', assignee: null });
    await assignException(deps, team.analyst, { id: psp, assignee: 'ivan' });
    await commentOnException(deps, team.analyst, { id: psp, text: 'webhook says 90.00, asked the PSP' });
    const x = await show(psp);
    expect(x).toMatchObject({ state: 'assigned', assignee: 'ivan', lastAction: 'commented', lastBy: 'ivan' });
    expect(x.dueAt).toBe(dueAt(x.discrepancy, deps.policy)!.toISOString());
    await expect(
      resolveExceptionByHand(deps, team.analyst, { id: psp, reasonCode: 'timing', note: 'x' }),
    ).rejects.toThrow(/holds money on the statements: it cannot be resolved by hand; propose a decision instead/);
    await expect(assignException(deps, team.viewer, { id: psp, assignee: 'ivan' })).rejects.toThrow(
      'vera is a viewer; exception.assign is not theirs',
    );
  });

  it('a large write-off waits for a second person: not the analyst, not the proposer', async () => {
    const p = await proposeDecision(deps, team.analyst, {
      id: psp,
      decision: 'write_off',
      note: 'PSP will not pay it',
    });
    expect(p.summary).toMatch(/needs a second person's approval/);
    expect(await show(psp)).toMatchObject({
      state: 'pending_approval',
      pending: { by: 'ivan', decision: 'write_off', amountInDoubt: '10000' },
    });
    await expect(approveDecision(deps, team.analyst, { id: psp, note: 'ok' })).rejects.toThrow(
      'ivan is an analyst; exception.approve is not theirs',
    );
    await rejectDecision(deps, team.approver, { id: psp, note: 'ask the PSP once more' });
    expect(await show(psp)).toMatchObject({ state: 'assigned', pending: null });
    // the approver proposes herself: she cannot approve it; the other approver can
    await proposeDecision(deps, team.approver, { id: psp, decision: 'write_off', note: 'asked twice, no answer' });
    await expect(approveDecision(deps, team.approver, { id: psp, note: 'mine' })).rejects.toThrow(
      'maker-checker: anna proposed this write_off; another approver must approve it',
    );
    await approveDecision(deps, team.approver2, { id: psp, note: 'agreed' });
    const x = await show(psp);
    expect(x).toMatchObject({
      state: 'accepted',
      decision: 'write_off',
      discrepancy: { status: 'accepted', accepted_by: 'petro' },
    });
    expect(x.discrepancy.accepted_note).toBe('agreed (proposed by anna: asked twice, no answer)');
  });

  it('reopening takes the decision back: an approver’s, recorded as a revocation', async () => {
    await expect(reopenException(deps, team.analyst, { id: psp, reason: 'paid after all' })).rejects.toThrow(
      'ivan is an analyst; exception.approve is not theirs',
    );
    await reopenException(deps, team.approver, { id: psp, reason: 'the PSP paid after all' });
    expect(await show(psp)).toMatchObject({ state: 'reopened', decision: null });
    const decisions = await store.readStream(discrepancyStream(psp));
    expect(decisions.map((e) => e.type)).toEqual(['DiscrepancyAccepted', 'DiscrepancyAcceptanceRevoked']);
    expect(decisions[1]!.data).toMatchObject({
      acceptance: decisions[0]!.id,
      revokedBy: 'anna',
      reason: 'the PSP paid after all',
    });
    const history = await exceptionHistory(db.sql, psp);
    expect(history.map((h) => `${h.by} ${h.action}`)).toEqual([
      'ivan assigned',
      'ivan commented',
      'ivan proposed',
      'anna rejected',
      'anna proposed',
      'petro approved',
      'petro accepted',
      'anna reopened',
      'anna acceptance_revoked',
    ]);
    expect(history[1]!.why).toBe('webhook says 90.00, asked the PSP');
  });
});

describe('the exceptions of the orders leg', () => {
  it('one that holds no money is resolved by hand, reopened, then accepted at once', async () => {
    await expect(
      resolveExceptionByHand(deps, team.analyst, { id: unpaid, reasonCode: 'soon', note: 'x' }),
    ).rejects.toThrow(
      /^reason-code: expected one of explained_elsewhere, duplicate, timing, corrected_at_source, other/,
    );
    await resolveExceptionByHand(deps, team.analyst, {
      id: unpaid,
      reasonCode: 'timing',
      note: 'paid by card next day',
    });
    const x = await show(unpaid);
    expect(x).toMatchObject({ leg: 'orders', state: 'resolved_by_hand' });
    await expect(proposeDecision(deps, team.analyst, { id: unpaid, note: 'x' })).rejects.toThrow(
      /is resolved by hand: cannot/,
    );
    await reopenException(deps, team.analyst, { id: unpaid, reason: 'no card payment found' });
    expect(await show(unpaid)).toMatchObject({ state: 'reopened' });
    // a write-off of 10.00, below the approval amount: in force at once
    await proposeDecision(deps, team.analyst, { id: unpaid, decision: 'write_off', note: 'customer never paid' });
    expect(await show(unpaid)).toMatchObject({
      state: 'accepted',
      decision: 'write_off',
      discrepancy: { accepted_by: 'ivan' },
    });
  });

  it('one that holds money takes a decision, in force at once when it is not a large write-off', async () => {
    await expect(proposeDecision(deps, team.analyst, { id: orphan, note: 'x' })).rejects.toThrow(
      /^decision: a payment_without_order holds money on the statements; say pay, withhold or write_off/,
    );
    await proposeDecision(deps, team.analyst, { id: orphan, decision: 'withhold', note: 'order being traced' });
    expect(await show(orphan)).toMatchObject({ state: 'accepted', decision: 'withhold' });
  });

  it('a hand resolution the sources later contradict shows as reopened, naming why', () => {
    const resolved = { work: 'resolved_by_hand' as const, acceptance: null, evidence: 'e1' };
    expect(stateOf({ status: 'open', updated_by_event: 'e1' }, resolved)).toEqual({
      state: 'resolved_by_hand',
      why: null,
    });
    expect(stateOf({ status: 'open', updated_by_event: 'e2' }, resolved)).toEqual({
      state: 'reopened',
      why: 'the sources changed after the hand resolution',
    });
    expect(stateOf({ status: 'resolved', updated_by_event: 'e2' }, resolved).state).toBe('resolved');
  });
});

describe('acting at once, in bulk, and replaying', () => {
  it('of two people acting on the same view, the second is refused and writes nothing', async () => {
    const a = await planAction(deps, team.analyst, { action: 'comment', id: orphan, text: 'first' });
    const b = await planAction(deps, team.approver, { action: 'comment', id: orphan, text: 'second' });
    await commit(deps, a);
    await expect(commit(deps, b)).rejects.toThrow(/changed meanwhile \(another person acted first\)/);
    expect((await store.readStream(exceptionStream(orphan))).map((e) => (e.data as { text?: string }).text)).toContain(
      'first',
    );
    expect(
      (await store.readStream(exceptionStream(orphan))).map((e) => (e.data as { text?: string }).text),
    ).not.toContain('second');
  });

  it('a bulk dry run lists exactly what the real run then changes', async () => {
    await project(db.sql, store);
    const filter = { leg: undefined };
    const request = { action: 'assign' as const, assignee: 'anna', reason: 'month-end sweep' };
    const before = await snapshot(db.sql);
    const dry = await bulkAct(deps, team.approver, filter, request, { dryRun: true });
    await project(db.sql, store);
    expect(await snapshot(db.sql)).toBe(before);
    expect(dry.changes.length).toBeGreaterThan(0);
    expect(dry.skipped.map((s) => s.reason).join('\n')).toMatch(/is accepted: cannot assign it/);
    const real = await bulkAct(deps, team.approver, filter, request, { dryRun: false });
    expect(real.changes.map((c) => c.id)).toEqual(dry.changes.map((c) => c.id));
    await project(db.sql, store);
    const { items } = await listExceptions(db.sql, { assignee: 'anna' }, NOW, deps.policy);
    expect(items.map((x) => x.id).sort()).toEqual(dry.changes.map((c) => c.id).sort());
    await expect(bulkAct(deps, team.approver, filter, { ...request, reason: ' ' }, { dryRun: true })).rejects.toThrow(
      /^reason: required/,
    );
    // a filter matching more than one action takes is refused before any plan, naming it; nothing is written
    const n = (await listExceptions(db.sql, {}, NOW, deps.policy)).items.length;
    const untouched = await snapshot(db.sql);
    const tooMany = bulkAct(deps, team.approver, filter, request, { dryRun: false, maxTargets: n - 1 });
    await expect(tooMany).rejects.toThrow(new RegExp(`^the filter matches more than ${n - 1} exceptions`));
    await expect(tooMany).rejects.toMatchObject({ code: 'INVALID', field: 'filter' });
    await project(db.sql, store);
    expect(await snapshot(db.sql)).toBe(untouched);
    const justSo = await bulkAct(deps, team.approver, filter, request, { dryRun: true, maxTargets: n });
    expect(justSo.changes.length + justSo.skipped.length).toBe(n);
  });

  it('lists with filters and pages by keyset', async () => {
    const all = await listExceptions(db.sql, {}, NOW, deps.policy);
    expect(all.items.length).toBeGreaterThanOrEqual(3);
    expect(
      (await listExceptions(db.sql, { leg: 'orders' }, NOW, deps.policy)).items.every((x) => x.leg === 'orders'),
    ).toBe(true);
    expect((await listExceptions(db.sql, { minAmount: 5000n }, NOW, deps.policy)).items.map((x) => x.id)).toContain(
      psp,
    );
    expect((await listExceptions(db.sql, { minAmount: 5000n }, NOW, deps.policy)).items.map((x) => x.id)).not.toContain(
      unpaid,
    );
    const pages: string[] = [];
    let after: string | undefined;
    do {
      const page = await listExceptions(db.sql, { limit: 1, after }, NOW, deps.policy);
      pages.push(...page.items.map((x) => x.id));
      after = page.next ?? undefined;
    } while (after);
    expect(pages).toEqual(all.items.map((x) => x.id));
    await expect(listExceptions(db.sql, { state: 'done' })).rejects.toThrow(/^state: expected one of/);
  });

  it('a replay from zero gives the same states, assignees and histories', async () => {
    await project(db.sql, store);
    const live = await snapshot(db.sql);
    expect(live).toContain('petro');
    for (const batchSize of [1, 7]) {
      await rebuildProjection(exceptionDeps(db.sql, store), 'exceptions', { batchSize });
      await project(db.sql, store);
      expect(await snapshot(db.sql), `replay in batches of ${batchSize}`).toBe(live);
    }
    expect(DEFAULT_EXCEPTION_POLICY.writeOff.approvalAbove).toBe(100_000n);
  });
});
