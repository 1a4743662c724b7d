import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID } from '../payout-runs/fixtures';

/**
 * Review 5: a run records each creditor's account when it is drafted. The directory gives a sub-merchant another
 * payout account since (the old one closed, or wrong): the waiting run was still approved, filed and sent to the
 * old account. Now refused (PAYEE_CHANGED) until it is cancelled and the month drafted again, to the account in
 * force; an unchanged directory (registered again with the same account) changes nothing.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db.drop();
});

const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const NOW = new Date('2026-11-26T09:00:00.000Z'); // a Thursday
const AT = { timezone: 'Europe/Kyiv', now: NOW };
const OLD = 'FR1420041010050500013M02606';
const NEW = 'DE89370400440532013000';

async function drafted(sub: string, month: string) {
  await register(store, sub, { payoutAccount: OLD });
  await issue(store, month, [
    {
      subMerchantId: sub,
      currency: 'EUR',
      reference: `RS-${sub}-${month}-EUR`,
      amountDue: '5000',
      held: '0',
      payable: '5000',
      holds: [],
    },
  ]);
  return (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW })).run!;
}

describe('review5: the payout account changed after the draft', () => {
  it('the draft is not approved to the old account', async () => {
    const run = await drafted('SM-A', '2026-05');
    expect(run.lines.map((l) => l.creditorAccount)).toEqual([OLD]);
    await register(store, 'SM-A', { payoutAccount: NEW });
    await expect(approveRun(store, iryna, run.id, AT)).rejects.toMatchObject({
      code: 'PAYEE_CHANGED',
      message: expect.stringContaining('RS-SM-A-2026-05-EUR'),
    });
  });

  it('approved, then changed: neither filed nor sent', async () => {
    const run = await drafted('SM-B', '2026-06');
    await approveRun(store, iryna, run.id, AT);
    await register(store, 'SM-B', { payoutAccount: NEW, payoutBic: 'COBADEFFXXX' });
    await expect(paymentFile(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'PAYEE_CHANGED' });
    await expect(sendRun(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'PAYEE_CHANGED' });
  });

  it('registered again with the same account: approved', async () => {
    const run = await drafted('SM-C', '2026-04');
    await register(store, 'SM-C', { payoutAccount: OLD, legalName: 'C & Co' });
    expect((await approveRun(store, iryna, run.id, AT)).status).toBe('approved');
  });
});
