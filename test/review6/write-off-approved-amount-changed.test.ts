import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import { approveDecision, proposeDecision, rejectDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getException } from '../../src/exceptions/queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: a write-off waiting for approval records the amount in doubt it was proposed for (100.00 UAH);
 * the approval wrote off the amount in doubt at the moment of approval. When the PSP's sources changed
 * meanwhile (a webhook now says 9,000.00) the approver wrote off ninety times what was proposed, and the
 * journal booked it on two signatures neither of which was given for that sum. Now the approval is refused
 * (CONFLICT) when the amount or currency in doubt is no longer the one proposed; nothing is written.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let psp = ''; // amount_mismatch: register 100.00, webhook 90.00
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 5000n } }).policy;
  deps = { sql: db.sql, store, policy, now: () => new Date(NOW.getTime() + ++tick) };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const written = async () =>
  (await store.readStream(exceptionStream(psp))).length + (await store.readStream(discrepancyStream(psp))).length;

describe('review6: a write-off approved after its amount in doubt changed', () => {
  it('is refused, nothing written; proposed again at the new amount, it is approved', async () => {
    const p = await proposeDecision(deps, team.analyst, { id: psp, decision: 'write_off', note: 'PSP will not pay' });
    expect(p.summary).toMatch(/needs a second person's approval/);
    await project(db.sql, store);
    // the PSP's webhook is re-sent with another amount: the money in doubt is now 9,000.00
    const t = at('2024-03-10T10:00:00Z');
    await appendAll(store, [
      webhook({
        paymentId: 'pay-a',
        orderId: 'ord-a',
        processedAt: t,
        amount: 9000_00n,
        fee: 100n,
        receivedAt: at('2024-03-12T10:00:00Z'),
      }),
    ]);
    await project(db.sql, store);
    const now = await getException(db.sql, psp, NOW, deps.policy);
    expect(now?.amountInDoubt).toBe('900000');
    expect(now?.state).toBe('pending_approval');
    const before = await written();
    await expect(approveDecision(deps, team.approver, { id: psp, note: 'ok' })).rejects.toThrow(
      /proposed for 100\.00 UAH.*now 9,000\.00 UAH/,
    );
    expect(await written()).toBe(before);
    await rejectDecision(deps, team.approver, { id: psp, note: 'the amount changed' });
    await project(db.sql, store);
    await proposeDecision(deps, team.analyst, { id: psp, decision: 'write_off', note: 'PSP will not pay 9,000.00' });
    await project(db.sql, store);
    await approveDecision(deps, team.approver, { id: psp, note: 'checked at 9,000.00' });
    await project(db.sql, store);
    expect(await getException(db.sql, psp, NOW, deps.policy)).toMatchObject({ state: 'accepted' });
  });
});
