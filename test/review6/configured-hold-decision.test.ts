import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import { proposeDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, periodRow, registerRows, resendRequested, syncCompleted } from '../discrepancies/fixtures';
import { addTeam, idOf, project, type Team } from '../exceptions/support';

/**
 * Review 6: RECON_HOLD_POLICY may make a type hold money that holds none by default (the README's own example,
 * `missing_webhook=payment`): the statements then hold the payment. The exception's actions still went by the
 * default table: an acceptance without a decision was taken (and read by the holds as `pay`, releasing the
 * money on the next statement, though nobody said pay), and `withhold` was refused as "holds no money". Now
 * the decision is asked for, and withhold taken, by the hold policy in force.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let missing = ''; // missing_webhook, held whole under the configured policy

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const t = at('2024-03-10T10:00:00Z');
  const observedAt = at('2024-03-11T00:00:00Z');
  await appendAll(store, [
    registerRows({
      paymentId: 'pay-quiet',
      dateTime: t,
      amount: 500_00n,
      receivers: [{ name: 'Alpha Shop', amount: 495_00n, fee: 5_00n }],
      reportId: 'rep-1',
      observedAt,
    }),
    periodRow({
      paymentId: 'pay-quiet',
      dateTime: t,
      amount: 500_00n,
      merchantFee: 5_00n,
      reportId: 'rep-1',
      observedAt,
    }),
    resendRequested({ paymentId: 'pay-quiet', requestedAt: at('2024-03-12T12:00:00Z') }),
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: at('2024-03-14T00:00:00Z'),
      reportId: 'rep-1',
      announced: 1,
    }),
  ]);
  team = await addTeam(store);
  await project(db.sql, store);
  missing = await idOf(db.sql, 'missing_webhook');
  const holdPolicy = holdPolicyFrom({ RECON_HOLD_POLICY: 'missing_webhook=payment' }).policy;
  deps = {
    sql: db.sql,
    store,
    policy: exceptionPolicyOf({}).policy,
    holdPolicy,
    now: () => new Date('2024-03-15T12:00:00Z'),
  };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const written = async () =>
  (await store.readStream(exceptionStream(missing))).length +
  (await store.readStream(discrepancyStream(missing))).length;

describe('review6: a type the configured hold policy holds', () => {
  it('an acceptance without a decision is refused (it would release the money unsaid), nothing written', async () => {
    await expect(proposeDecision(deps, team.analyst, { id: missing, note: 'webhook lost' })).rejects.toThrow(
      /^decision: a missing_webhook holds money on the statements; say pay, withhold or write_off/,
    );
    expect(await written()).toBe(0);
  });

  it('withhold is taken', async () => {
    const r = await proposeDecision(deps, team.analyst, { id: missing, decision: 'withhold', note: 'wait for it' });
    expect(r.summary).toBe('accept: withhold');
    expect(await written()).toBeGreaterThan(0);
  });
});
