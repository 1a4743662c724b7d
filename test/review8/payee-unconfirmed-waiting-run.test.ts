import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importSubMerchants } from '../../src/ingest/sub-merchants';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { payeeOf } from '../../src/payout-runs/inputs';
import { confirmPayeeAccount } from '../../src/payout-runs/payees';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person } from '../payout-runs/fixtures';

/**
 * Review 8: a new payout account is paid nothing until an approver confirms it (c6fc8b5), but only a draft
 * looked at the confirmation. A run waiting to be approved, filed or sent checked only that the directory still
 * names the account it was drafted with (PAYEE_CHANGED), not that the account is still trusted. So a run drafted
 * to account X, the directory then changed to Y (confirmed) and back to X (never confirmed as Y's replacement:
 * a draft made now leaves it out, payee_account_unconfirmed), was still approved, filed and sent to X; as was
 * any run drafted before confirmations existed to an account that had replaced another. Now refused
 * (PAYEE_CHANGED, naming confirm-payee) until an approver confirms the account or the run is cancelled.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
}, 120_000);
afterAll(async () => {
  await db.drop();
});

const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const petro = person('petro', 'approver');
const NOW = new Date('2026-11-26T09:00:00.000Z'); // a Thursday
const AT = { timezone: 'Europe/Kyiv', now: NOW };
const X = 'FR1420041010050500013M02606';
const Y = 'DE89370400440532013000';

/** the directory file as imported (each change appended, supersedes the last) */
const directory = (sub: string, payoutAccount: string) =>
  importSubMerchants(store, [
    { subMerchantId: sub, name: `${sub} shop`, reserveHoldDays: 0, payoutAccount, file: 'sub-merchants.csv', line: 2 },
  ]);

async function drafted(sub: string, month: string) {
  await directory(sub, X);
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

/** the directory to Y, Y confirmed, the directory back to X: X replaced a trusted account, unconfirmed */
async function awayAndBack(sub: string) {
  await directory(sub, Y);
  await confirmPayeeAccount(store, petro, { subMerchantId: sub, account: Y, note: 'called back', now: NOW });
  await directory(sub, X);
  expect(await payeeOf(store, sub)).toMatchObject({ payoutAccount: X, accountConfirmed: false });
}

describe('review8: a waiting run to a payout account no longer trusted', () => {
  it('a draft is not approved to it; once an approver confirms the account, it is', async () => {
    const run = await drafted('SM-A', '2026-05');
    expect(run.lines.map((l) => l.creditorAccount)).toEqual([X]);
    await awayAndBack('SM-A');
    await expect(approveRun(store, iryna, run.id, AT)).rejects.toMatchObject({
      code: 'PAYEE_CHANGED',
      message: expect.stringContaining('RS-SM-A-2026-05-EUR (SM-A) to a payout account that replaced another'),
    });
    await confirmPayeeAccount(store, petro, { subMerchantId: 'SM-A', account: X, note: 'signed letter', now: NOW });
    expect((await approveRun(store, iryna, run.id, AT)).status).toBe('approved');
  });

  it('approved while trusted, then no longer: neither filed nor sent', async () => {
    const run = await drafted('SM-B', '2026-06');
    await approveRun(store, iryna, run.id, AT);
    await awayAndBack('SM-B');
    await expect(paymentFile(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'PAYEE_CHANGED' });
    await expect(sendRun(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'PAYEE_CHANGED' });
  });
});
