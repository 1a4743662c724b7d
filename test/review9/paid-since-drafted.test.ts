import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payouts } from '../../projections/payouts';
import { silentLogger } from '../../src/log';
import { approveRun, cancelRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { paidByBankOf } from '../../src/payout-runs/bank-paid';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { BANK, ENV, issue, person, register } from '../payout-runs/fixtures';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 9: a waiting run whose references the bank's debits paid after it was drafted. A draft leaves out what
 * the bank paid (a transfer made by hand, a run cancelled after its file was executed), but a run drafted before
 * the debit was imported was still approved, filed and sent: the bank paid the reference twice. So was a run
 * drafted to pay again money the bank sent back, once the bank took the return back (the payee kept the money).
 * Now refused (PAID_SINCE) while nobody has taken its file (after that, a debit may be its own).
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const on = new Date('2026-09-01T09:00:00.000Z'); // a Tuesday

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
const draft = async (month: string) =>
  draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: await paidNow(), now: on });

async function bank(
  reference: string,
  amount: bigint,
  bankRef: string,
  day: string,
  o: { direction?: 'credit' | 'debit'; isReturn?: boolean } = {},
) {
  const d = booked({
    account: PAYOUTS,
    currency: 'EUR',
    amount,
    bookingDate: day,
    bankRef,
    endToEndId: reference,
    remittance: reference,
    ...o,
  });
  await store.append(d.stream, [...d.events]);
}

async function month(id: string, month: string, amount: string) {
  await register(store, id, { payoutAccount: 'FR1420041010050500013M02606' });
  const reference = `RS-${id}-${month}-EUR`;
  await issue(store, month, [
    { subMerchantId: id, currency: 'EUR', reference, amountDue: amount, held: '0', payable: amount, holds: [] },
  ]);
  return reference;
}

describe('review9: a waiting run the bank paid since it was drafted', () => {
  it('paid by hand after the draft: the draft is not approved; cancelled, the month asks nothing', async () => {
    const ref = await month('SM-H', '2026-07', '100000');
    const run = (await draft('2026-07')).run!;
    expect(run.lines.map((l) => [l.reference, l.amount])).toEqual([[ref, '100000']]);
    // finance paid it by hand meanwhile; the bank's statement is imported
    await bank(ref, 100000n, 'B-HAND', '2026-08-31');
    await expect(
      approveRun(store, iryna, run.id, { timezone: TZ, now: on, paidByBank: await paidNow() }),
    ).rejects.toMatchObject({ code: 'PAID_SINCE', message: expect.stringContaining(ref) });
    await cancelRun(store, ana, run.id, 'paid by hand', on);
    expect((await draft('2026-07')).run).toBeNull();
  });

  it('approved, then paid in part by hand: neither filed nor sent; drafted again for the rest', async () => {
    const ref = await month('SM-P', '2026-06', '50000');
    const run = (await draft('2026-06')).run!;
    await approveRun(store, iryna, run.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    await bank(ref, 20000n, 'B-PART', '2026-08-31');
    const paidByBank = await paidNow();
    await expect(paymentFile(store, ana, run.id, { timezone: TZ, now: on, paidByBank })).rejects.toMatchObject({
      code: 'PAID_SINCE',
    });
    await expect(sendRun(store, ana, run.id, { timezone: TZ, now: on, paidByBank })).rejects.toMatchObject({
      code: 'PAID_SINCE',
    });
    await cancelRun(store, ana, run.id, 'paid in part by hand', on);
    expect((await draft('2026-06')).run!.lines.map((l) => [l.reference, l.amount])).toEqual([[ref, '30000']]);
  });

  it('drafted to pay a return again, the return then taken back by the bank: not approved', async () => {
    const ref = await month('SM-R', '2026-08', '100000');
    const first = (await draft('2026-08')).run!;
    await approveRun(store, iryna, first.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    await paymentFile(store, ana, first.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    await sendRun(store, ana, first.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    await bank(ref, 100000n, 'B-1', '2026-09-02');
    await bank(ref, 100000n, 'B-1R', '2026-09-04', { direction: 'credit', isReturn: true });
    const again = (await draft('2026-08')).run!;
    expect(again.lines.map((l) => [l.reference, l.amount, l.repaysReturned])).toEqual([[ref, '100000', '100000']]);
    // the bank takes its return back (a debit marked as a return): the payee kept the money
    await bank(ref, 100000n, 'B-1RR', '2026-09-05', { isReturn: true });
    await expect(
      approveRun(store, iryna, again.id, { timezone: TZ, now: on, paidByBank: await paidNow() }),
    ).rejects.toMatchObject({ code: 'PAID_SINCE' });
  });

  it('a run whose file was taken is filed and sent as before: the debit may be its own', async () => {
    const ref = await month('SM-T', '2026-05', '70000');
    const run = (await draft('2026-05')).run!;
    await approveRun(store, iryna, run.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    await paymentFile(store, ana, run.id, { timezone: TZ, now: on, paidByBank: await paidNow() });
    // the bank executed the file before anyone marked it sent
    await bank(ref, 70000n, 'B-RUN', '2026-09-01');
    const paidByBank = await paidNow();
    await paymentFile(store, iryna, run.id, { timezone: TZ, now: on, paidByBank });
    expect((await sendRun(store, ana, run.id, { timezone: TZ, now: on, paidByBank })).status).toBe('sent');
  });
});
