import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, draftRun } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID } from '../payout-runs/fixtures';

/**
 * Review 5: `recon payout-runs approve RUN --execution-date 2062-11-30` (a year mistyped) was approved, and the
 * file asked the bank to pay in 2062; the run never expired (EXECUTION_DATE_PASSED needs the date behind). Now
 * an execution date more than a year after the day of approval is refused naming the option (banks take
 * transfers dated within about a year); the payout-runs tests approve for a weekday two weeks ahead.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  await issue(store, '2026-07', [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: 'RS-SM-A-2026-07-EUR',
      amountDue: '1000',
      held: '0',
      payable: '1000',
      holds: [],
    },
  ]);
});
afterAll(async () => {
  await db.drop();
});

const now = new Date('2026-11-26T09:00:00.000Z'); // a Thursday
const at = { timezone: 'Europe/Kyiv', now };

describe('review5: an execution date years ahead', () => {
  it('is refused naming the option; a weekday within the range is approved', async () => {
    const id = (
      await draftRun(store, person('ana', 'analyst'), {
        month: '2026-07',
        bank: BANK,
        env: ENV,
        paidByBank: NONE_PAID,
        now,
      })
    ).run!.id;
    const iryna = person('iryna', 'approver');
    for (const day of ['2062-11-30', '9999-12-31'])
      await expect(approveRun(store, iryna, id, { ...at, executionDate: day })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(
          /^--execution-date \(executionDate\): .* is more than a year ahead \(at most 2027-11-26\)/,
        ),
      });
    expect((await approveRun(store, iryna, id, { ...at, executionDate: '2026-12-01' })).executionDate).toBe(
      '2026-12-01',
    );
  });
});
