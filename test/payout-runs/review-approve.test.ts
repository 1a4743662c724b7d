import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, draftRun } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID } from './fixtures';

/**
 * A hostile review of the execution date: a bank executes credit transfers on business days, so a Saturday or
 * Sunday asked for is refused naming the option, and the default (the day of approval in RECON_TIMEZONE) moves
 * to the Monday when the approval falls on a weekend there.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
});
afterAll(async () => {
  await db.drop();
});

const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const tz = 'Europe/Kyiv';

async function drafted(month: string): Promise<string> {
  const n = month.slice(5);
  await issue(store, month, [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: `RS-SM-A-2026-${n}-EUR`,
      amountDue: '1000',
      held: '0',
      payable: '1000',
      holds: [],
    },
  ]);
  return (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID })).run!.id;
}

describe('review: the execution date is a business day', () => {
  it('a Saturday or a Sunday asked for is refused, naming the option', async () => {
    const id = await drafted('2026-01');
    const now = new Date('2026-11-27T09:00:00.000Z'); // a Friday
    for (const day of ['2026-11-28', '2026-11-29'])
      await expect(approveRun(store, iryna, id, { timezone: tz, executionDate: day, now })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/--execution-date.*(Saturday|Sunday)/),
      });
    expect((await approveRun(store, iryna, id, { timezone: tz, executionDate: '2026-11-30', now })).executionDate).toBe(
      '2026-11-30',
    );
  });

  it('approved on a Saturday in the business time zone (Friday in UTC): the default is the Monday', async () => {
    const id = await drafted('2026-02');
    const now = new Date('2026-11-27T22:30:00.000Z'); // 00:30 on Saturday 28 November in Kyiv
    expect((await approveRun(store, iryna, id, { timezone: tz, now })).executionDate).toBe('2026-11-30');
  });

  it('approved on a weekday: the default is that day', async () => {
    const id = await drafted('2026-03');
    const now = new Date('2026-11-26T09:00:00.000Z'); // Thursday
    expect((await approveRun(store, iryna, id, { timezone: tz, now })).executionDate).toBe('2026-11-26');
  });
});
