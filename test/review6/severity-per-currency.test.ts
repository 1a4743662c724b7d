import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePage, type QueueFilter } from '../../src/console/queue';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getException } from '../../src/exceptions/queries';
import { LEGS } from '../../src/reconciliation/discrepancies/registry';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs } from '../exceptions/support';

/**
 * Review 6: the severity thresholds by amount in doubt were one number of minor units for every currency
 * (1,000.00 for medium: about 23 EUR in hryvnias, 3,000 EUR in dinars), so the same money was urgent in one
 * currency and not in another, and its due date with it. `amountAtLeastByCurrency` gives a currency its own;
 * the console's queue filter (SQL) reads them as severity.ts does.
 */

let db: TestDatabase;
let store: EventStore;
let unpaid = ''; // order_not_at_psp: low by type, 10.00 UAH in doubt
const NOW = new Date('2024-03-15T12:00:00.000Z');

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  await addTeam(store);
  await project(db.sql, store);
  unpaid = await idOf(db.sql, 'order_not_at_psp');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const filter = (severity: QueueFilter['severity']): QueueFilter => ({
  legs: LEGS,
  type: null,
  status: null,
  assignee: null,
  severity,
  subMerchant: null,
  currency: null,
  minAmount: null,
  olderThanDays: null,
  order: 'asc',
  after: null,
});

describe('review6: severity thresholds per currency', () => {
  it('are read from RECON_CONFIG, out of order named by currency', () => {
    expect(
      exceptionsConfigFrom({ amountAtLeastByCurrency: { UAH: { medium: '500', high: 800, critical: '5000' } } }).issues,
    ).toEqual([]);
    expect(exceptionsConfigFrom({ amountAtLeastByCurrency: { uah: { medium: '500' } } }).issues).toEqual([
      expect.stringMatching(/^exceptions\.amountAtLeastByCurrency/),
    ]);
    const { config } = exceptionsConfigFrom({ amountAtLeastByCurrency: { UAH: { medium: '900', high: '800' } } });
    expect(exceptionPolicyOf(config).issues).toEqual([
      'exceptions.amountAtLeastByCurrency.UAH: expected medium ≤ high ≤ critical',
    ]);
  });

  it("10.00 UAH in doubt is high under UAH's own thresholds, low under the default; the queue's filter agrees", async () => {
    const plain = exceptionPolicyOf({}).policy;
    expect((await getException(db.sql, unpaid, NOW, plain))?.severity).toBe('low');
    const { config } = exceptionsConfigFrom({
      amountAtLeastByCurrency: { UAH: { medium: '500', high: '800', critical: '5000' } },
    });
    const policy = exceptionPolicyOf(config).policy;
    expect((await getException(db.sql, unpaid, NOW, policy))?.severity).toBe('high');
    const high = await queuePage(db.sql, filter('high'), NOW, 50, policy);
    expect(high.rows.map((r) => r.id)).toContain(unpaid);
    const low = await queuePage(db.sql, filter('low'), NOW, 50, policy);
    expect(low.rows.map((r) => r.id)).not.toContain(unpaid);
  });
});
