import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDecisionRows, bulkAct } from '../../src/exceptions/bulk';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { listExceptions } from '../../src/exceptions/queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: a write-off above the approval limit waits for a second person, but a bulk accept (or a Decisions
 * sheet) of many write-offs each under the limit put them all in force on one person's word, however much
 * they came to: 26.00 + 10.00 UAH under a 30.00 limit, or a thousand of 999.99 under a 1,000.00 one. Now,
 * when the write-offs of one action come to more than the limit of their currency, each waits for approval.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let orphan = ''; // payment_without_order: 26.00 UAH in doubt
let unpaid = ''; // order_not_at_psp: 10.00 UAH in doubt
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;
let deps: ExceptionDeps;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  orphan = await idOf(db.sql, 'payment_without_order');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  // each of the two under 30.00, both together above it
  const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 3000n } }).policy;
  deps = { sql: db.sql, store, policy, now: () => new Date(NOW.getTime() + ++tick) };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const stateOf = async (id: string) => {
  await project(db.sql, store);
  const { items } = await listExceptions(db.sql, {}, NOW, deps.policy);
  return items.find((x) => x.id === id)?.state;
};

describe('review6: write-offs of one action that together pass the approval limit', () => {
  it('a Decisions sheet of two write-offs, 36.00 UAH under a 30.00 limit: each waits for a second person', async () => {
    const rows = [
      { row: 2, request: { action: 'accept' as const, id: orphan, decision: 'write_off', note: 'never ours' } },
      { row: 3, request: { action: 'accept' as const, id: unpaid, decision: 'write_off', note: 'never paid' } },
    ];
    const dry = await applyDecisionRows(deps, team.analyst, rows, { dryRun: true });
    expect(dry.ok).toBe(true);
    if (!dry.ok) return;
    expect(dry.changes.map((c) => c.summary)).toEqual([
      "propose write_off (needs a second person's approval)",
      "propose write_off (needs a second person's approval)",
    ]);
  });

  it('a bulk write-off of the same two: each waits for a second person, none in force', async () => {
    const out = await bulkAct(
      deps,
      team.analyst,
      { leg: 'orders' },
      { action: 'accept', decision: 'write_off', reason: 'month-end clean-up' },
      { dryRun: false },
    );
    expect(out.changes.map((c) => c.id)).toEqual(expect.arrayContaining([orphan, unpaid]));
    expect(out.changes.every((c) => /needs a second person's approval/.test(c.summary))).toBe(true);
    expect(await stateOf(orphan)).toBe('pending_approval');
    expect(await stateOf(unpaid)).toBe('pending_approval');
  });
});
