import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionStream } from '../../src/events/exception-events';
import { commentOnException } from '../../src/exceptions/actions';
import { applyDecisionRows, bulkAct } from '../../src/exceptions/bulk';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: a Decisions sheet is "all or nothing", and a bulk action writes "exactly the plans listed"; both
 * wrote their plans one append after another. Another person acting on one of the exceptions between the
 * first write and its own (a comment, an assignment) refused that row after the rows before it were written:
 * the sheet was half applied, and importing it again refused the rows already done. Now every plan of one
 * sheet or bulk action is written in one appendMany: another person first on any of them, nothing is.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = '';
let unpaid = '';
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
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** The store as the import sees it: before its first write, another person comments on `target`. */
function interfering(target: string): EventStore {
  let done = false;
  // its own instant: the same words at the same instant would be the same event, stored once
  const other: ExceptionDeps = {
    sql: db.sql,
    store,
    policy: exceptionPolicyOf({}).policy,
    now: () => new Date(NOW.getTime() + ++tick),
  };
  const before = async () => {
    if (done) return;
    done = true;
    await commentOnException(other, team.approver2, { id: target, text: 'looking at it too' });
  };
  return new Proxy(store, {
    get(t, k, r) {
      if (k === 'append' || k === 'appendMany')
        return async (...args: unknown[]) => {
          await before();
          return (t[k] as (...a: unknown[]) => unknown).apply(t, args);
        };
      return Reflect.get(t, k, r);
    },
  });
}

const lengthOf = async (id: string) => (await store.readStream(exceptionStream(id))).length;

describe('review6: another person acting while a sheet or a bulk action is written', () => {
  it('a Decisions sheet: nothing of it is written', async () => {
    const deps: ExceptionDeps = {
      sql: db.sql,
      store: interfering(unpaid),
      policy: exceptionPolicyOf({}).policy,
      now: () => new Date(NOW.getTime() + ++tick),
    };
    const [p0, u0] = [await lengthOf(psp), await lengthOf(unpaid)];
    const rows = [
      { row: 2, request: { action: 'comment' as const, id: psp, text: 'asked the PSP' } },
      { row: 3, request: { action: 'comment' as const, id: unpaid, text: 'asked the buyer' } },
    ];
    await expect(applyDecisionRows(deps, team.analyst, rows, { dryRun: false })).rejects.toThrow(/changed meanwhile/);
    expect(await lengthOf(psp)).toBe(p0);
    expect(await lengthOf(unpaid)).toBe(u0 + 1); // the other person's comment alone
  });

  it('a bulk comment: nothing of it is written', async () => {
    const deps: ExceptionDeps = {
      sql: db.sql,
      store: interfering(psp), // the last of the bulk's order: the others come first
      policy: exceptionPolicyOf({}).policy,
      now: () => new Date(NOW.getTime() + ++tick),
    };
    const [p0, u0] = [await lengthOf(psp), await lengthOf(unpaid)];
    await expect(
      bulkAct(deps, team.analyst, {}, { action: 'comment', reason: 'month-end sweep' }, { dryRun: false }),
    ).rejects.toThrow(/changed meanwhile/);
    expect(await lengthOf(unpaid)).toBe(u0);
    expect(await lengthOf(psp)).toBe(p0 + 1); // the other person's comment alone
  });
});
