import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { newEvent } from '../../src/events/catalog';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { registerRows } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendEach, balances, rowOf, snapshot, writeOffLines } from './write-off-support';
import { ACCOUNT, credit, projectCash, rebuildCash, sale, statement } from './support';

/**
 * An unexpected credit written off as a gain, then explained (docs/bank.md, "Known limits", the sister of
 * "Written off, then paid"): 99,100 reaches the settlement account on Tue 01-06 while no register row owes
 * anything, so a `settlement_unexpected` opens; a person writes it off, the one gain (bank + / write-off −). Then
 * the PSP's register row for Fri 01-02 arrives (a sale of 100,000 less a fee of 900, due 01-06): the credit pays
 * the day and the match books it again (bank + / psp_clearing −). Before, the bank account read the credit
 * twice and nothing open said so. Now the journal takes the gain back by what is explained (write-off + / bank −)
 * and a `settlement_gain_taken_back` opens for a person to review the write-off. The register row corrected
 * (the sale failed), the credit is unexplained again and the take-back is reversed; the bank taking the credit
 * back leaves the gain taken back (the money is gone). A rebuild in batches of 1, 3 and 1000 gives the same.
 */

type Db = TestDatabase;

const creditEventOf = async (db: Db, bankRef: string) =>
  (
    await db.sql<{ event_id: string }[]>`
    select event_id::text from recon.settlement_bank_lines where bank_ref = ${bankRef}`
  )[0]!.event_id;

const BANK = `bank:${ACCOUNT}`;

/** The sale of 01-02 as the PSP first reports it, and corrected: the payment failed after all. */
const explained = () => sale('p1', '2026-01-02', 100_000n, 900n);
const failed = () =>
  registerRows({
    paymentId: 'p1',
    status: 'failure',
    dateTime: '2026-01-02T12:00:00.000Z',
    amount: 100_000n,
    currency: 'EUR',
    receivers: [{ name: 'Shop One', amount: 99_100n, fee: 900n }],
    reportId: 'report-2026-01-02-b',
    observedAt: '2026-01-08T23:00:00.000Z',
  });

/** The bank takes a credit back: a debit marked as a return (docs/bank.md, "Matching (many-to-one)"). */
const returned = (bankRef: string, day: string, amount: bigint): AppendRequest => ({
  stream: bankAccountStream(ACCOUNT),
  events: [
    newEvent(BankEntryBooked, {
      accountId: ACCOUNT,
      currency: 'EUR',
      direction: 'debit',
      amount: amount.toString(),
      bookingDate: day,
      valueDate: day,
      bankRef,
      batchRef: null,
      detail: 0,
      endToEndId: null,
      remittance: 'REVERSAL OF CREDIT',
      counterpartyName: 'PSP Ltd',
      counterpartyAccount: 'GB33BUKB20201555555555',
      isReturn: true,
      transactionCode: 'PMNT/RCDT/RRTN',
      statementId: 'S3',
    }),
  ],
});

/** An unexpected credit of 99,100 on 01-06 written off as a gain; returns the acceptance's event id. */
async function writtenOffGain(db: Db, store: EventStore): Promise<string> {
  await appendEach(store, [
    credit('B1', '2026-01-06', 99_100n),
    statement('S1', '2026-01-01', '2026-01-06', 0n, 99_100n, 1),
  ]);
  await projectCash(db.sql, store);
  const unexpected = (await rowOf(db, 'settlement_unexpected'))!;
  expect(unexpected).toMatchObject({ status: 'open', amount_in_doubt: 99_100n });
  const a = await acceptDiscrepancy(
    { sql: db.sql, store },
    {
      id: unexpected.id,
      note: 'no settlement explains it: kept',
      by: 'Finance',
      at: new Date('2026-01-06T15:00:00Z'),
      decision: 'write_off',
    },
  );
  expect(a.ok).toBe(true);
  await projectCash(db.sql, store);
  expect(await balances(db)).toMatchObject({ [BANK]: 99_100n, 'expense:write-offs': -99_100n });
  return a.ok ? a.eventId : '';
}

describe('an unexpected credit written off as a gain, then explained by the register', () => {
  let db: Db;
  let store: EventStore;
  let acceptance = '';
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    acceptance = await writtenOffGain(db, store);
  });
  afterAll(async () => db?.drop());

  it('explained: the gain is taken back, so the bank account reads the credit once', async () => {
    await appendEach(store, [explained()]);
    await projectCash(db.sql, store);
    expect(await balances(db)).toMatchObject({
      [BANK]: 99_100n,
      psp_clearing: 0n,
      psp_fees: 0n,
      'expense:write-offs': 0n,
    });
    const taken = (await writeOffLines(db)).filter((l) => l.kind === 'write_off_gain_taken_back');
    expect(taken.map((l) => [l.account, l.amount])).toEqual([
      ['expense:write-offs', 99_100n],
      [BANK, -99_100n],
    ]);
    // traceable: the entry names the register row that explained the credit, the acceptance and the credit
    const [entry] = await db.sql<{ event_ids: string[]; share: bigint; booked_at: Date }[]>`
      select event_ids::text[], share, booked_at from recon.journal_entries where kind = 'write_off_gain_taken_back'`;
    const row = explained().events[0]!.id;
    expect(entry!.event_ids).toEqual(expect.arrayContaining([acceptance, await creditEventOf(db, 'B1'), row]));
    expect(entry!.share).toBe(-99_100n);
    // never before the gain it takes back
    expect(entry!.booked_at.toISOString()).toBe('2026-01-06T15:00:00.000Z');
  });

  it('a person is told: the unexpected credit stays accepted, a settlement_gain_taken_back opens', async () => {
    const unexpected = (await rowOf(db, 'settlement_unexpected'))!;
    expect(unexpected).toMatchObject({ status: 'accepted', accepted_by_event: acceptance });
    const taken = (await rowOf(db, 'settlement_gain_taken_back'))!;
    expect(taken).toMatchObject({
      status: 'open',
      amount_in_doubt: null,
      values: {
        written_off_id: unexpected.id,
        written_off: '99100',
        taken_back: '99100',
        still_unexplained: '0',
        acceptance,
        due_on: ['2026-01-06'],
        booked_on: '2026-01-06',
        bank_ref: 'B1',
      },
    });
    expect(taken.evidence).toEqual(expect.arrayContaining([acceptance, await creditEventOf(db, 'B1')]));
  });

  it('the register row corrected (the sale failed): unexplained again, the take-back reversed', async () => {
    await appendEach(store, [failed()]);
    await projectCash(db.sql, store);
    expect(await rowOf(db, 'settlement_gain_taken_back')).toMatchObject({ status: 'resolved' });
    expect(await rowOf(db, 'settlement_unexpected')).toMatchObject({ status: 'accepted' });
    expect(await balances(db)).toMatchObject({ [BANK]: 99_100n, psp_clearing: 0n, 'expense:write-offs': -99_100n });
    expect((await writeOffLines(db)).map((l) => [l.kind, l.account, l.amount])).toEqual([
      ['write_off', 'expense:write-offs', -99_100n],
      ['write_off', BANK, 99_100n],
      ['write_off_gain_taken_back', 'expense:write-offs', 99_100n],
      ['write_off_gain_taken_back', BANK, -99_100n],
      ['reversal', 'expense:write-offs', -99_100n],
      ['reversal', BANK, 99_100n],
    ]);
  });

  it('a rebuild in batches of 1, 3 and 1000 gives the same rows and entries', async () => {
    const live = await snapshot(db);
    for (const size of [1, 3, 1000]) {
      await rebuildCash(db.sql, store, size);
      expect(await snapshot(db), `batches of ${size}`).toEqual(live);
    }
  });
});

describe('an unexpected credit written off as a gain, explained, then taken back by the bank', () => {
  let db: Db;
  let store: EventStore;
  let acceptance = '';
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    acceptance = await writtenOffGain(db, store);
    await appendEach(store, [explained()]);
    await projectCash(db.sql, store);
  });
  afterAll(async () => db?.drop());

  it('the match is reversed, the gain stays taken back: the bank account reads nothing, as the bank does', async () => {
    await appendEach(store, [returned('R1', '2026-01-07', 99_100n)]);
    await projectCash(db.sql, store);
    expect(await balances(db)).toMatchObject({ [BANK]: 0n, 'expense:write-offs': 0n, psp_clearing: 100_000n });
    expect(await rowOf(db, 'settlement_gain_taken_back')).toMatchObject({
      status: 'open',
      values: { acceptance, taken_back: '99100', due_on: [] },
    });
  });

  it('the write-off revoked: the gain and its take-back reversed, the credit judged again (no longer unexplained)', async () => {
    const unexpected = (await rowOf(db, 'settlement_unexpected'))!;
    const r = await revokeDecision(store, {
      id: unexpected.id,
      reason: 'the PSP explained it',
      by: 'Finance',
      at: new Date('2026-01-09T09:00:00Z'),
    });
    expect(r.ok).toBe(true);
    const revocation = r.ok ? r.eventId : '';
    await projectCash(db.sql, store);
    expect(await rowOf(db, 'settlement_unexpected')).toMatchObject({ status: 'resolved' });
    expect(await rowOf(db, 'settlement_gain_taken_back')).toMatchObject({
      status: 'resolved',
      resolved_by_event: revocation,
    });
    expect(await balances(db)).toMatchObject({ [BANK]: 0n, 'expense:write-offs': 0n });
  });

  it('a rebuild in batches of 1, 3 and 1000 gives the same rows and entries', async () => {
    const live = await snapshot(db);
    for (const size of [1, 3, 1000]) {
      await rebuildCash(db.sql, store, size);
      expect(await snapshot(db), `batches of ${size}`).toEqual(live);
    }
  });
});
