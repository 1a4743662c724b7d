import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentOnException, proposeDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { revokeUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * What a person types (an exception's comment, a decision's note, a revocation's reason) is stored in the event
 * store for good and shown in the console, the history and the nightly report. An analyst who pastes the payer's
 * card number into a comment ("card 4111 1111 1111 1111 charged twice") had it stored whole, although card
 * numbers are never stored (README, "Secrets and card data") and every other text from outside (a bank
 * remittance, an order's reference, a PSP description) is masked. Now a person's note is masked the same way.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let tick = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 1n } }).policy;
  deps = { sql: db.sql, store, policy, now: () => new Date(Date.UTC(2024, 2, 15, 12) + ++tick) };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** Everything the store and the read models hold, as text: where a card number must not be. */
async function everythingStored(): Promise<string> {
  const events = await db.sql<{ d: string }[]>`select data::text as d from es_events`;
  const history = await db.sql<{ t: string }[]>`select row_to_json(h)::text as t from recon.exception_history h`;
  return [...events.map((r) => r.d), ...history.map((r) => r.t)].join('\n').replace(/[ -]/g, '');
}

describe('a card number in what a person types', () => {
  it('an exception comment and a decision note are stored masked, the rest of the text as typed', async () => {
    const id = await idOf(db.sql, 'amount_mismatch');
    await commentOnException(deps, team.analyst, { id, text: 'payer says card 4111 1111 1111 1111 charged twice' });
    await proposeDecision(deps, team.analyst, {
      id,
      decision: 'write_off',
      note: `refund to ${PAN} agreed by phone`,
    });
    await project(db.sql, store);
    const stored = await everythingStored();
    expect(stored).not.toContain(PAN);
    const [comment] = await db.sql<{ d: string }[]>`
      select data::text as d from es_events where type like 'Exception%' and data::text like '%charged twice%'`;
    expect(JSON.parse(comment!.d).text).toBe(`payer says card ${MASKED} charged twice`);
  });

  it("a user's revocation reason is stored masked", async () => {
    await revokeUser(store, team.admin.token, 'vera', `left; her company card ${PAN} cancelled`);
    const [revoked] = await db.sql<{ d: string }[]>`select data::text as d from es_events where type = 'UserRevoked'`;
    expect(JSON.parse(revoked!.d).reason).toBe(`left; her company card ${MASKED} cancelled`);
  });

  it('a text that only looks like one (no check digit) is kept as typed', async () => {
    const id = await idOf(db.sql, 'order_not_at_psp');
    await commentOnException(deps, team.analyst, { id, text: 'PSP ticket 4111111111111112, bank ref 2025-03-01' });
    const rows = await db.sql<
      { d: string }[]
    >`select data::text as d from es_events where data::text like '%PSP ticket%'`;
    expect(JSON.parse(rows[0]!.d).text).toBe('PSP ticket 4111111111111112, bank ref 2025-03-01');
  });
});
