import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payouts } from '../../projections/payouts';
import { silentLogger } from '../../src/log';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { paidByBankOf } from '../../src/payout-runs/bank-paid';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register } from '../payout-runs/fixtures';

/**
 * A payout sent in a run, executed, and sent back by the creditor's bank (an account closed): the sub-merchant
 * is owed the money again. The sent run still held the reference, so every later draft said "nothing new to
 * pay" and the money could only be paid by hand, outside the four eyes of a run. Now what came back is drafted
 * again under the same reference, approved, and never more than once.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const REF = 'RS-SM-R-2026-08-EUR';

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => db?.drop());

async function paidNow() {
  const deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, bank: BANK };
  await runProjections({ ...deps, projections: [payouts] });
  return paidByBankOf(db.sql, store, BANK.payouts, TZ);
}

const on = new Date('2026-09-01T09:00:00.000Z');
const draft = async () =>
  draftRun(store, ana, { month: '2026-08', bank: BANK, env: ENV, paidByBank: await paidNow(), now: on });

async function bank(amount: bigint, bankRef: string, day: string, o: { isReturn?: boolean } = {}) {
  const d = booked({
    account: PAYOUTS,
    currency: 'EUR',
    amount,
    bookingDate: day,
    bankRef,
    endToEndId: REF,
    remittance: REF,
    ...(o.isReturn ? { direction: 'credit' as const, isReturn: true } : {}),
  });
  await store.append(d.stream, [...d.events]);
}

async function approveAndSend(id: string) {
  await approveRun(store, iryna, id, { timezone: TZ, now: on });
  await paymentFile(store, ana, id, { timezone: TZ, now: on });
  return sendRun(store, ana, id, { timezone: TZ, now: on });
}

describe('a payout the bank sent back is paid again by a run, once', () => {
  it('drafted again after the return, approved, and not again once paid', async () => {
    await register(store, 'SM-R', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-08', [
      {
        subMerchantId: 'SM-R',
        currency: 'EUR',
        reference: REF,
        amountDue: '100000',
        held: '0',
        payable: '100000',
        holds: [],
      },
    ]);
    const first = (await draft()).run!;
    await approveAndSend(first.id);
    await bank(100000n, 'B-1', '2026-09-02');
    // executed and not returned: nothing more to pay
    expect((await draft()).run).toBeNull();

    await bank(100000n, 'B-1R', '2026-09-04', { isReturn: true });
    const again = (await draft()).run!;
    expect(again.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
    // a second draft gives the waiting one, nothing more
    expect((await draft()).run!.id).toBe(again.id);
    await approveAndSend(again.id);
    // the new transfer not booked yet, or booked: nothing is asked a third time
    const before = await draft();
    expect(before.run).toBeNull();
    await bank(100000n, 'B-2', '2026-09-08');
    expect((await draft()).run).toBeNull();
  });
});
