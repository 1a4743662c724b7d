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
 * A reference the bank paid in part outside any standing run (by hand, or a run cancelled once the bank had paid
 * part of it and said it would execute nothing more) is drafted for the rest (docs/exceptions.md). Once that run
 * is sent (its debit not imported yet), a draft must ask nothing: hand 400.00 + run 600.00 is the 1,000.00 asked.
 * plan.ts counts max(what standing runs took, what the bank paid), as if the bank's 400.00 were the standing
 * run's own debit, so the next draft asks 400.00 again and the month is paid 1,400.00.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const REF = 'RS-SM-P-2026-08-EUR';

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

describe('a reference paid in part by hand, the rest by a run', () => {
  it('the run for the rest sent: a later draft asks nothing', async () => {
    await register(store, 'SM-P', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-08', [
      {
        subMerchantId: 'SM-P',
        currency: 'EUR',
        reference: REF,
        amountDue: '100000',
        held: '0',
        payable: '100000',
        holds: [],
      },
    ]);
    await bank(40000n, 'B-1', '2026-09-02');
    const rest = (await draft()).run!;
    expect(rest.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '60000']]);
    await approveRun(store, iryna, rest.id, { timezone: TZ, now: on });
    await paymentFile(store, ana, rest.id, { timezone: TZ, now: on });
    await sendRun(store, ana, rest.id, { timezone: TZ, now: on });
    const next = await draft();
    expect(next.run?.lines ?? []).toEqual([]);
  });
});
