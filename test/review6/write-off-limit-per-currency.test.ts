import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { proposeDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getException } from '../../src/exceptions/queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: the write-off approval limit was one number of minor units for every currency: 100000 is 1,000.00
 * UAH (about 23 EUR), 1,000.00 EUR, 1,000.000 KWD (about 3,000 EUR), so one person alone wrote off in one
 * currency forty times what finance allows in another. `writeOff.approvalAboveByCurrency` sets the limit of a
 * currency; the others keep `approvalAbove`.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: 100.00 UAH in doubt
const NOW = new Date('2024-03-15T12:00:00.000Z');

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('review6: the write-off approval limit per currency', () => {
  it('is read from RECON_CONFIG, a currency code and whole minor units, a bad one named', () => {
    const ok = exceptionsConfigFrom({
      writeOff: { approvalAbove: '100000', approvalAboveByCurrency: { UAH: '5000', EUR: 2500 } },
    });
    expect(ok.issues).toEqual([]);
    expect(exceptionsConfigFrom({ writeOff: { approvalAboveByCurrency: { uah: '5000' } } }).issues).toEqual([
      expect.stringMatching(/^exceptions\.writeOff\.approvalAboveByCurrency/),
    ]);
    expect(exceptionsConfigFrom({ writeOff: { approvalAboveByCurrency: { UAH: '50.00' } } }).issues).toEqual([
      'exceptions.writeOff.approvalAboveByCurrency.UAH: expected whole minor units',
    ]);
  });

  it('a UAH write-off above the UAH limit waits for a second person, though under the default', async () => {
    const { config } = exceptionsConfigFrom({
      writeOff: { approvalAbove: '100000', approvalAboveByCurrency: { UAH: '5000' } },
    });
    const policy = exceptionPolicyOf(config).policy;
    const deps: ExceptionDeps = { sql: db.sql, store, policy, now: () => NOW };
    const p = await proposeDecision(deps, team.analyst, { id: psp, decision: 'write_off', note: 'PSP will not pay' });
    expect(p.summary).toMatch(/needs a second person's approval/);
    await project(db.sql, store);
    const x = await getException(db.sql, psp, NOW, policy);
    expect(x).toMatchObject({ state: 'pending_approval', currency: 'UAH', amountInDoubt: '10000' });
  });
});
