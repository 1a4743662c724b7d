import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payouts } from '../../projections/payouts';
import { silentLogger } from '../../src/log';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { paidByBankOf } from '../../src/payout-runs/bank-paid';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { BANK, ENV, issue, person, register } from '../payout-runs/fixtures';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A payout paid outside any standing run (by hand, or by a run cancelled once the bank had paid it) and sent back
 * by the creditor's bank is owed again: a draft pays it again under the same reference. Once that run is approved
 * and sent, the next draft must ask nothing: the return was already paid again by the waiting run. plan.ts took
 * the return off what standing runs took even when no standing run had paid it, so the repaying run's own
 * amount was cancelled out by the return and a third draft asked the whole reference again: paid twice.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const REF = 'RS-SM-H-2026-08-EUR';

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

describe('a payout paid by hand and sent back is paid again once', () => {
  it('the run repaying it stands: a later draft asks nothing', async () => {
    await register(store, 'SM-H', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-08', [
      {
        subMerchantId: 'SM-H',
        currency: 'EUR',
        reference: REF,
        amountDue: '100000',
        held: '0',
        payable: '100000',
        holds: [],
      },
    ]);
    // paid by hand, then sent back by the creditor's bank
    await bank(100000n, 'B-1', '2026-09-02');
    expect((await draft()).run).toBeNull();
    await bank(100000n, 'B-1R', '2026-09-04', { isReturn: true });
    const again = (await draft()).run!;
    expect(again.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
    await approveRun(store, iryna, again.id, { timezone: TZ, now: on });
    await paymentFile(store, ana, again.id, { timezone: TZ, now: on });
    await sendRun(store, ana, again.id, { timezone: TZ, now: on });
    // the repaying run is sent, its debit not imported yet: nothing is asked a third time
    const third = await draft();
    expect(third.run?.lines ?? []).toEqual([]);
    // the run's own transfer booked, then sent back as well: owed again, drafted once more, and only once
    await bank(100000n, 'B-2', '2026-09-05');
    expect((await draft()).run?.lines ?? []).toEqual([]);
    await bank(100000n, 'B-2R', '2026-09-07', { isReturn: true });
    const fourth = (await draft()).run!;
    expect(fourth.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
    await approveRun(store, iryna, fourth.id, { timezone: TZ, now: on });
    await paymentFile(store, ana, fourth.id, { timezone: TZ, now: on });
    await sendRun(store, ana, fourth.id, { timezone: TZ, now: on });
    expect((await draft()).run?.lines ?? []).toEqual([]);
  });
});
