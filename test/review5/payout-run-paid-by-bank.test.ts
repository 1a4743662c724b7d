import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, cancelRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register } from '../payout-runs/fixtures';

/**
 * Review 5 (DEFECT, not fixed): a run is planned from the statements and the other runs only, never from what
 * the bank already paid. A reference the bank's debits show paid (its file uploaded, then the run cancelled
 * because its execution date passed, as EXECUTION_DATE_PASSED tells the operator to do; or paid by hand) is
 * drafted again at its full amount: the same money asked of the bank twice. `recon payouts --month` shows it
 * `paid` at the same time. Reproduced on the demo too (docs of the report).
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
const MONTH = '2026-08';
const REF = 'RS-SM-A-2026-08-EUR';

describe('review5: a reference the bank already paid', () => {
  it.fails('is not drafted again after its run was cancelled', async () => {
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, MONTH, [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: REF,
        amountDue: '100000',
        held: '0',
        payable: '100000',
        holds: [],
      },
    ]);
    const approvedOn = new Date('2026-09-01T09:00:00.000Z'); // a Tuesday
    const first = (await draftRun(store, ana, { month: MONTH, bank: BANK, env: ENV, now: approvedOn })).run!;
    await approveRun(store, iryna, first.id, { timezone: 'Europe/Kyiv', now: approvedOn });
    // the file is taken and uploaded to the bank; `send` is not recorded that day
    await paymentFile(store, ana, first.id, { timezone: 'Europe/Kyiv', now: approvedOn });
    // the bank executes it (a day later than asked) and books the debit with the reference
    const debit = booked({
      account: 'DE89370400440532013000',
      currency: 'EUR',
      amount: 100000n,
      bookingDate: '2026-09-02',
      bankRef: 'B-1',
      endToEndId: REF,
      remittance: REF,
    });
    await store.append(debit.stream, [...debit.events]);
    // the date passed: the operator follows the message, cancels and drafts again
    await cancelRun(store, ana, first.id, 'execution date passed', new Date('2026-09-03T09:00:00.000Z'));
    const again = await draftRun(store, ana, { month: MONTH, bank: BANK, env: ENV });
    // what happens: PR-2026-08-2 pays RS-SM-A-2026-08-EUR 1,000.00 again
    expect(again.run?.lines.map((l) => l.reference) ?? []).not.toContain(REF);
  });
});
