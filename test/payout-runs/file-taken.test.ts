import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as bankProjection } from '../../projections/bank';
import { newEvent } from '../../src/events/catalog';
import { BankStatementImported, bankAccountStream } from '../../src/events/bank-events';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { silentLogger } from '../../src/log';
import { approveRun, cancelRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { bankStatementsCover } from '../../src/payout-runs/bank-paid';
import { PayoutRunRefused } from '../../src/payout-runs/errors';
import { type PayoutRun, readRuns } from '../../src/payout-runs/runs';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person, register, weekdayAhead } from './fixtures';

/**
 * Taking an approved run's payment file is recorded: from then on the bank may execute it, marked sent or not.
 * Cancelling such a run and drafting its month again would pay the same payouts twice if the bank executed the
 * first file before its statement was imported (a draft leaves out only what imported statements show paid).
 * So it is cancelled once the bank's statements imported cover its execution date, or when the person
 * cancelling says the bank did not execute it, which is recorded with their name. Found by a reviewer: a file
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

/** What the bank's statements imported cover, the bank's read model caught up first (as the command line does). */
async function covers(run: PayoutRun): Promise<boolean> {
  await runProjections({
    sql: db.sql,
    store,
    log: silentLogger,
    timezone: TZ,
    graceHours: 48,
    bank: BANK,
    projections: [bankProjection],
  });
  return bankStatementsCover(db.sql, run);
}

async function statementThrough(closingDate: string, id: string) {
  const e = newEvent(BankStatementImported, {
    accountId: PAYOUTS,
    currency: 'EUR',
    statementId: id,
    format: 'camt.053',
    openingDate: closingDate,
    closingDate,
    openingBalance: '0',
    closingBalance: '0',
    entries: 0,
    fileSha256: 'a'.repeat(64),
  });
  await store.append(bankAccountStream(PAYOUTS), [e]);
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
      bankStatementsCover: covers,
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PayoutRunRefused);
    expect((refused as PayoutRunRefused).code).toBe('FILE_TAKEN');
    expect((refused as Error).message).toContain(`${run.id}'s payment file was taken by ana at`);
    expect(await revision()).toBe(before);
    // a statement of the payouts account that ends before the execution date covers nothing of it
    await statementThrough('2026-01-05', 'STMT-EARLY');
    await expect(
      cancelRun(store, ana, run.id, 'wrong month', new Date(), { bankStatementsCover: covers }),
    ).rejects.toThrow(/payment file was taken/);
    const again = await draftRun(store, ana, { month: '2026-02', bank: BANK, env: ENV, paidByBank: NONE_PAID });
    expect(again.run).toBeNull();
  });

  it("is cancelled once the bank's statements cover its execution date, or on a named person's word", async () => {
    const covered = await approvedRunOf('SM-C', '2026-03');
    await paymentFile(store, ana, covered.id, { timezone: TZ });
    await statementThrough(covered.executionDate!, 'STMT-THROUGH');
    const c = await cancelRun(store, oleh, covered.id, 'execution date passed', new Date(), {
      bankStatementsCover: covers,
    });
    expect(c).toMatchObject({ status: 'cancelled', cancelledBy: 'oleh', bankDidNotExecute: false });

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
