import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payouts } from '../../projections/payouts';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { silentLogger } from '../../src/log';
import { approveRun, cancelRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { bankPaidEveryLine, paidByBankOf } from '../../src/payout-runs/bank-paid';
import { PayoutRunRefused } from '../../src/payout-runs/errors';
import { type PayoutRun, readRuns } from '../../src/payout-runs/runs';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person, register, weekdayAhead } from './fixtures';

/**
 * Taking an approved run's payment file is recorded: from then on the bank may execute it, marked sent or not.
 * Cancelling such a run and drafting its month again would pay the same payouts twice if the bank executed the
 * first file before its statement was imported (a draft leaves out only what imported statements show paid).
 * So it is cancelled once the bank's imported debits paid all of it (a statement covering the execution date is
 * no proof: one may be missing before it, and a file uploaded late is executed after it), or when the person
 * cancelling says the bank will execute nothing of it, which is recorded with their name. Found by a reviewer: a file
 * downloaded and never marked sent left no trace, and its run could be cancelled and drafted again.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const oleh = person('oleh', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
}, 120_000);
afterAll(async () => {
  await db.drop();
});

async function approvedRunOf(subMerchantId: string, month: string): Promise<PayoutRun> {
  await register(store, subMerchantId, { payoutAccount: 'FR1420041010050500013M02606' });
  await issue(store, month, [
    {
      subMerchantId,
      currency: 'EUR',
      reference: `RS-${subMerchantId}-${month}-EUR`,
      amountDue: '25000',
      held: '0',
      payable: '25000',
      holds: [],
    },
  ]);
  const run = (await draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID })).run!;
  return approveRun(store, iryna, run.id, { timezone: TZ, executionDate: weekdayAhead(2) });
}

const revision = async () => (await readRuns(store)).revision;

/** Whether the bank's debits paid the whole run, the payouts read model caught up first (as the command line). */
async function paidInFull(run: PayoutRun): Promise<boolean> {
  await runProjections({
    sql: db.sql,
    store,
    log: silentLogger,
    timezone: TZ,
    graceHours: 48,
    bank: BANK,
    projections: [payouts],
  });
  return bankPaidEveryLine(run, await paidByBankOf(db.sql, store, BANK.payouts, TZ));
}

/** The bank's debit of `amount` on a run's reference, booked on `day` (its statement imported). */
async function debit(reference: string, amount: bigint, day: string, bankRef: string) {
  const d = booked({
    account: PAYOUTS,
    currency: 'EUR',
    amount,
    bookingDate: day,
    bankRef,
    endToEndId: reference,
    remittance: reference,
  });
  await store.append(d.stream, [...d.events]);
}

describe('a payout run whose payment file was taken', () => {
  it('records each person who took the file, once each', async () => {
    const run = await approvedRunOf('SM-A', '2026-01');
    await paymentFile(store, ana, run.id, { timezone: TZ });
    const once = await revision();
    await paymentFile(store, ana, run.id, { timezone: TZ });
    expect(await revision()).toBe(once);
    await paymentFile(store, oleh, run.id, { timezone: TZ });
    const taken = (await readRuns(store)).runs.get(run.id)!.fileTaken;
    expect(taken.map((t) => t.by)).toEqual(['ana', 'oleh']);
    // two events in the stream, one per person
    expect((await store.readStream(PAYOUT_RUNS_STREAM)).filter((e) => e.type === 'PayoutRunFileTaken')).toHaveLength(2);
  });

  it('is not cancelled while the bank may execute it; its month is not drafted again', async () => {
    const run = await approvedRunOf('SM-B', '2026-02');
    await paymentFile(store, ana, run.id, { timezone: TZ });
    const before = await revision();
    const refused = await cancelRun(store, ana, run.id, 'wrong month', new Date(), {
      bankPaidEveryLine: paidInFull,
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PayoutRunRefused);
    expect((refused as PayoutRunRefused).code).toBe('FILE_TAKEN');
    expect((refused as Error).message).toContain(`${run.id}'s payment file was taken by ana at`);
    expect(await revision()).toBe(before);
    // the bank's statement shows part of it paid: the rest may still be executed
    await debit('RS-SM-B-2026-02-EUR', 10000n, '2026-02-03', 'B-PART');
    await expect(
      cancelRun(store, ana, run.id, 'wrong month', new Date(), { bankPaidEveryLine: paidInFull }),
    ).rejects.toThrow(/payment file was taken/);
    const again = await draftRun(store, ana, { month: '2026-02', bank: BANK, env: ENV, paidByBank: NONE_PAID });
    expect(again.run).toBeNull();
  });

  it("is cancelled once the bank's debits paid all of it, or on a named person's word", async () => {
    const paid = await approvedRunOf('SM-C', '2026-03');
    await paymentFile(store, ana, paid.id, { timezone: TZ });
    await debit('RS-SM-C-2026-03-EUR', 25000n, '2026-03-02', 'B-FULL');
    const c = await cancelRun(store, oleh, paid.id, 'execution date passed', new Date(), {
      bankPaidEveryLine: paidInFull,
    });
    expect(c).toMatchObject({ status: 'cancelled', cancelledBy: 'oleh', bankDidNotExecute: false });
    // what the bank paid is not asked again
    const none = await draftRun(store, ana, {
      month: '2026-03',
      bank: BANK,
      env: ENV,
      paidByBank: await paidByBankOf(db.sql, store, BANK.payouts, TZ),
    });
    expect(none.run).toBeNull();

    const rejected = await approvedRunOf('SM-D', '2026-04');
    await paymentFile(store, ana, rejected.id, { timezone: TZ });
    const r = await cancelRun(store, oleh, rejected.id, 'the bank rejected the file', new Date(), {
      bankDidNotExecute: true,
    });
    expect(r).toMatchObject({ status: 'cancelled', cancelledBy: 'oleh', bankDidNotExecute: true });
    const again = await draftRun(store, ana, { month: '2026-04', bank: BANK, env: ENV, paidByBank: NONE_PAID });
    expect(again.run?.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-D-2026-04-EUR', '25000']]);
  });

  it('a run whose file was never taken is cancelled as before', async () => {
    const run = await approvedRunOf('SM-E', '2026-05');
    const c = await cancelRun(store, ana, run.id, 'wrong execution date');
    expect(c).toMatchObject({ status: 'cancelled', bankDidNotExecute: false, fileTaken: [] });
  });
});
