import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as bankProjection } from '../../projections/bank';
import { projection as payouts } from '../../projections/payouts';
import { silentLogger } from '../../src/log';
import { approveRun, cancelRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { bankPaidEveryLine, paidByBankOf } from '../../src/payout-runs/bank-paid';
import type { PayoutRun } from '../../src/payout-runs/runs';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register } from './fixtures';

/**
 * A run is planned from the statements and the runs still standing, and from what the bank already paid: a
 * reference whose run was cancelled after its file was executed (the bank's debit booked with the reference),
 * or paid by hand, is not asked for again; what came back, or was not paid, is. Found by a reviewer: the bank's
 * debits were not read, and the month's reference was drafted again in full, the same money asked twice.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const CREDITOR = 'FR1420041010050500013M02606';

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db.drop();
});

/** What the bank paid on each reference, the payouts read model caught up first (as `recon payout-runs draft`). */
async function paidNow() {
  await runProjections({
    sql: db.sql,
    store,
    log: silentLogger,
    timezone: TZ,
    graceHours: 48,
    bank: BANK,
    projections: [payouts, bankProjection],
  });
  return paidByBankOf(db.sql, store, BANK.payouts, TZ);
}

const draft = async (month: string, now?: Date) =>
  draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: await paidNow(), ...(now ? { now } : {}) });

async function debit(reference: string, amount: bigint, bankRef: string, o: { isReturn?: boolean } = {}) {
  const d = booked({
    account: PAYOUTS,
    currency: 'EUR',
    amount,
    bookingDate: '2026-09-02',
    bankRef,
    endToEndId: reference,
    remittance: reference,
    ...(o.isReturn ? { direction: 'credit' as const, isReturn: true } : {}),
  });
  await store.append(d.stream, [...d.events]);
}

async function monthOf(subMerchantId: string, month: string, payable: string) {
  await register(store, subMerchantId, { payoutAccount: CREDITOR });
  await issue(store, month, [
    {
      subMerchantId,
      currency: 'EUR',
      reference: `RS-${subMerchantId}-${month}-EUR`,
      amountDue: payable,
      held: '0',
      payable,
      holds: [],
    },
  ]);
}

/**
 * Cancels a run whose file was taken: alone once the bank's debits paid all of it, else on the person's word that
 * the bank will execute nothing more of it (`said`).
 */
async function cancelTaken(run: PayoutRun, reason: string, o: { said?: boolean } = {}) {
  return cancelRun(store, ana, run.id, reason, new Date('2026-09-03T09:00:00.000Z'), {
    bankPaidEveryLine: async (r) => bankPaidEveryLine(r, await paidNow()),
    ...(o.said ? { bankDidNotExecute: true } : {}),
  });
}

/** A run approved, its file taken and executed by the bank, then cancelled as its execution date passed. */
async function executedThenCancelled(month: string) {
  const approvedOn = new Date('2026-09-01T09:00:00.000Z');
  const first = (await draft(month, approvedOn)).run!;
  await approveRun(store, iryna, first.id, { timezone: TZ, now: approvedOn });
  await paymentFile(store, ana, first.id, { timezone: TZ, now: approvedOn });
  return first;
}

describe('a payout run and what the bank already paid', () => {
  it('a reference the bank paid under a run cancelled since is not drafted again', async () => {
    await monthOf('SM-A', '2026-08', '100000');
    const first = await executedThenCancelled('2026-08');
    await debit('RS-SM-A-2026-08-EUR', 100000n, 'B-1');
    expect((await cancelTaken(first, 'execution date passed')).bankDidNotExecute).toBe(false);
    const again = await draft('2026-08');
    expect(again.run).toBeNull();
    expect(again.plan.lines).toEqual([]);
  });

  it('a reference paid in part is drafted for the rest; one whose payment came back is drafted in full', async () => {
    await monthOf('SM-B', '2026-07', '100000');
    await monthOf('SM-C', '2026-06', '50000');
    const b = await executedThenCancelled('2026-07');
    await debit('RS-SM-B-2026-07-EUR', 60000n, 'B-2');
    // paid in part: the person says the rest will not be executed
    await expect(cancelTaken(b, 'execution date passed')).rejects.toThrow(/payment file was taken/);
    await cancelTaken(b, 'the bank executed 600.00 of it only', { said: true });
    const rest = await draft('2026-07');
    expect(rest.run?.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-B-2026-07-EUR', '40000']]);

    const c = await executedThenCancelled('2026-06');
    await debit('RS-SM-C-2026-06-EUR', 50000n, 'B-3');
    await debit('RS-SM-C-2026-06-EUR', 50000n, 'B-3R', { isReturn: true });
    await cancelTaken(c, 'the payment came back', { said: true });
    expect((await paidNow()).get('RS-SM-C-2026-06-EUR') ?? 0n).toBe(0n);
    const full = await draft('2026-06');
    expect(full.run?.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-C-2026-06-EUR', '50000']]);
  });

  it('a standing run and the debit it made are counted once: nothing more is asked', async () => {
    await monthOf('SM-D', '2026-05', '30000');
    const approvedOn = new Date('2026-09-01T09:00:00.000Z');
    const first = (await draft('2026-05', approvedOn)).run!;
    await approveRun(store, iryna, first.id, { timezone: TZ, now: approvedOn });
    await debit('RS-SM-D-2026-05-EUR', 30000n, 'B-4');
    // nothing more asked: the standing run took it and the bank paid it, one and the same money
    const again = await draft('2026-05');
    expect(again.plan.lines).toEqual([]);
    expect(again.run).toBeNull();
  });
});
