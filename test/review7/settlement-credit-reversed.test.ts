import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { newEvent } from '../../src/events/catalog';
import { judgeSettlements } from '../../src/reconciliation/settlement/match';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ACCOUNT, credit, projectCash, sale, statement } from '../settlement/support';

/**
 * The PSP's settlement credit, then the bank takes it back (MT940 `RC`, camt `RvslInd` on a debit: a credit
 * booked in error, a payment recalled). Before, the credit still paid its due day ("paid") and the reversal was
 * a debit no one looked at: the money the PSP owes, gone from the account, was reported as received.
 */

const reversal = (bankRef: string, day: string, amount: bigint) => ({
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
      statementId: 'S-2026-01',
    }),
  ],
});

describe('a settlement credit the bank reversed', () => {
  it('judged alone: the reversed credit pays nothing, its due day stays open', () => {
    const day = {
      currency: 'EUR',
      day: '2026-01-07',
      firstActivity: '2026-01-06',
      lastActivity: '2026-01-06',
      clearing: 49_500n,
      fees: 0n,
      amount: 49_500n,
    };
    const c = {
      id: 'c1',
      accountId: ACCOUNT,
      currency: 'EUR',
      bookingDate: '2026-01-07',
      amount: 49_500n,
      bankRef: 'B1',
    };
    const r = { ...c, id: 'r1', bookingDate: '2026-01-08', bankRef: 'R1' };
    const rules = { tolerance: 0n, lateBusinessDays: 2, holidays: new Set<string>() };
    const j = judgeSettlements([day], [c], '2026-01-14', rules, [r]);
    expect(j.matches).toEqual([]);
    expect(j.missing.map((d) => d.day)).toEqual(['2026-01-07']);
    expect(j.unexpected).toEqual([]);
  });

  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    for (const r of [
      sale('p2', '2026-01-06', 50_000n, 500n),
      credit('B1', '2026-01-07', 49_500n, 'S-2026-01'),
      reversal('R1', '2026-01-08', 49_500n),
      statement('S-2026-01', '2026-01-01', '2026-01-14', 1_000n, 1_000n, 2),
    ])
      await store.append(r.stream, r.events as NewEvent[]);
    await projectCash(db.sql, store);
  });
  afterAll(async () => db?.drop());

  it('through the projections: the due day is missing, nothing cleared into the bank', async () => {
    const expected = await db.sql<{ due_on: string; status: string }[]>`
      select due_on, status from recon.settlements_expected order by due_on`;
    expect(expected.map((e) => [e.due_on, e.status])).toEqual([['2026-01-07', 'missing']]);
    const open = await db.sql<{ type: string }[]>`
      select type from recon.settlement_discrepancies where status = 'open' order by type`;
    expect(open.map((d) => d.type)).toEqual(['settlement_missing']);
    const [bank] = await db.sql<{ balance: string | null }[]>`
      select sum(amount)::text as balance from recon.journal_lines where account = ${`bank:${ACCOUNT}`}`;
    expect(bank!.balance ?? '0').toBe('0');
  });
});

describe('a credit that gives back one of our own debits (a sweep reversed, MT940 RD)', () => {
  let db2: TestDatabase;
  beforeAll(async () => {
    db2 = await createTestDatabase();
    const store2 = createPostgresEventStore(db2.sql);
    const back = reversal('RD1', '2026-01-07', 49_500n);
    const e = back.events[0]!;
    const credited = {
      ...back,
      events: [newEvent(BankEntryBooked, { ...BankEntryBooked.schema.parse(e.data), direction: 'credit' })],
    };
    for (const r of [
      sale('p2', '2026-01-06', 50_000n, 500n),
      credited,
      statement('S-2026-01', '2026-01-01', '2026-01-14', 0n, 49_500n, 1),
    ])
      await store2.append(r.stream, r.events as NewEvent[]);
    await projectCash(db2.sql, store2);
  });
  afterAll(async () => db2?.drop());

  it('pays no settlement: the due day is missing', async () => {
    const expected = await db2.sql<{ due_on: string; status: string }[]>`
      select due_on, status from recon.settlements_expected order by due_on`;
    expect(expected.map((e) => [e.due_on, e.status])).toEqual([['2026-01-07', 'missing']]);
    const open = await db2.sql<{ type: string }[]>`
      select type from recon.settlement_discrepancies where status = 'open' order by type`;
    expect(open.map((d) => d.type)).toEqual(['settlement_missing']);
  });
});
