import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { renderCamt053, type BankFileEntry } from '../../src/sandbox/bank-files';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ACCOUNT, BANK, projectCash, rebuildCash, sale } from './support';

/**
 * A settlement credit from which the bank deducted its charge (docs/bank.md, "A charge deducted from a
 * settlement credit"), the mirror of a charge folded into a payout's debit: a camt.053 CRDT entry of `Amt` =
 * `TxAmt` − `Chrgs`, one transaction detail (or an MT940 credit with `/OCMT/` and `/CHGS/`). The PSP paid the
 * day in full (`TxAmt`); the bank kept 1.50. Before, the credit was matched at `Amt`, so the day read 1.50 short
 * (`settlement_short`, beyond the tolerance of 0.05). Now the credit pays the day at `TxAmt` and the charge is a
 * bank fee; a charge in another currency, or charges that do not add up, leave the credit whole for a person.
 */

type Db = TestDatabase;

async function appendEach(store: EventStore, requests: readonly AppendRequest[]) {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

const dir = mkdtempSync(path.join(tmpdir(), 'recon-deducted-charge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};

async function importFile(db: Db, store: EventStore, name: string, text: string) {
  const known = knownEventsOf(store, db.sql);
  const [outcome] = await importBankFiles(store, known, [file(name, text)], { accounts: BANK.accounts });
  return outcome;
}

/** A credit of `transfer` less the charges, as the bank states it (the entry's amount given when it does not add up). */
function settlement(
  bankRef: string,
  day: string,
  transfer: bigint,
  charges: { amount: bigint; currency?: string; included?: boolean }[],
  amount = transfer - charges.reduce((t, c) => t + c.amount, 0n),
): BankFileEntry {
  return {
    direction: 'credit',
    amount,
    bookingDate: day,
    bankRef,
    details: [{ amount: transfer, remittance: `PSP settlement ${day}`, counterpartyName: 'PSP Ltd', charges }],
  };
}

const journalOf = (db: Db, bankRef: string) =>
  db.sql<{ kind: string; account: string; amount: string }[]>`
    select e.kind, l.account, l.amount::text from recon.journal_lines l join recon.journal_entries e using (entry_id)
    where e.payment_id = (select event_id::text from recon.settlement_bank_lines where bank_ref = ${bankRef})
      and e.kind in ('bank_settlement', 'bank_charge') order by e.kind, l.line_no`;

const readModels = async (db: Db) => ({
  matches: await db.sql`select * from recon.settlement_matches order by credit_event_id`,
  lines: await db.sql`select * from recon.settlement_bank_lines order by event_id`,
  discrepancies: await db.sql`select id, type, status, "values" from recon.settlement_discrepancies order by id`,
  journal: await db.sql`select * from recon.journal_lines order by entry_id, line_no`,
});

describe('a settlement credit with the bank charge deducted (camt.053 TxAmt − Chrgs = Amt)', () => {
  let db: Db;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    // due Tue 01-06 (Mon 01-05 a holiday): 99,100; due Tue 01-13: 49,500; due Thu 01-15: 19,800
    await appendEach(store, [
      sale('p1', '2026-01-02', 100_000n, 900n),
      sale('p2', '2026-01-12', 50_000n, 500n),
      sale('p3', '2026-01-14', 20_000n, 200n),
    ]);
    const text = renderCamt053({
      accountId: ACCOUNT,
      currency: 'EUR',
      statementId: 'SET-2026-01',
      openingDate: '2026-01-01',
      closingDate: '2026-01-15',
      openingBalance: 0n,
      entries: [
        // 991.00 paid, 1.50 kept by the bank: 989.50 credited
        settlement('C1', '2026-01-06', 99_100n, [{ amount: 150n, included: true }]),
        // the charge in another currency: not split
        settlement('C2', '2026-01-13', 49_500n, [{ amount: 150n, currency: 'USD', included: true }]),
        // 198.00 less 1.00 is not the 196.50 credited: not split
        settlement('C3', '2026-01-15', 19_800n, [{ amount: 100n, included: true }], 19_650n),
      ],
    });
    expect(await importFile(db, store, 'settlement.xml', text)).toMatchObject({ statements: 1, entries: 3 });
    await projectCash(db.sql, store);
  });
  afterAll(async () => db?.drop());

  it('pays the day in full at TxAmt; the charge is a bank fee; the bank account reads what the bank credited', async () => {
    const [c1] =
      await db.sql`select received, expected::int8 as expected, bank_fee, shortfall::int8 as shortfall, due_on from recon.settlement_matches
      where bank_ref = 'C1'`;
    expect(c1).toEqual({ received: 99_100n, expected: 99_100n, bank_fee: 0n, shortfall: 0n, due_on: ['2026-01-06'] });
    const [day] = await db.sql`select status from recon.settlements_expected where due_on = '2026-01-06'`;
    expect(day).toEqual({ status: 'paid' });
    expect(await journalOf(db, 'C1')).toEqual([
      { kind: 'bank_charge', account: 'bank_fees', amount: '150' },
      { kind: 'bank_charge', account: `bank:${ACCOUNT}`, amount: '-150' },
      { kind: 'bank_settlement', account: `bank:${ACCOUNT}`, amount: '99100' },
      { kind: 'bank_settlement', account: 'psp_fees', amount: '900' },
      { kind: 'bank_settlement', account: 'psp_clearing', amount: '-100000' },
    ]);
  });

  it('leaves a charge it cannot prove in the credit, for a person: the day reads short', async () => {
    const shorts = await db.sql<{ values: Record<string, unknown> }[]>`
      select "values" from recon.settlement_discrepancies where type = 'settlement_short' order by "values"->>'booked_on'`;
    expect(shorts.map((s) => [s.values.bank_ref, s.values.received, s.values.shortfall])).toEqual([
      ['C2', '49350', '150'],
      ['C3', '19650', '150'],
    ]);
    expect(await db.sql`select type from recon.settlement_discrepancies where type <> 'settlement_short'`).toEqual([]);
    expect((await journalOf(db, 'C2')).filter((l) => l.kind === 'bank_charge')).toEqual([]);
    expect((await journalOf(db, 'C3')).filter((l) => l.kind === 'bank_charge')).toEqual([]);
  });

  it('the journal balances and its bank account is the statement: 989.50 + 493.50 + 196.50', async () => {
    const [bank] = await db.sql<{ amount: string }[]>`
      select sum(amount)::text as amount from recon.journal_lines where account = ${`bank:${ACCOUNT}`}`;
    expect(bank!.amount).toBe(`${98_950n + 49_350n + 19_650n}`);
    const [fees] = await db.sql<{ amount: string }[]>`
      select sum(amount)::text as amount from recon.journal_lines where account = 'bank_fees'`;
    expect(fees!.amount).toBe('150');
    const [trial] = await db.sql<{ total: string }[]>`select sum(amount)::text as total from recon.journal_lines`;
    expect(trial!.total).toBe('0');
  });

  it('a rebuild in batches of 1 gives the same rows and entries', async () => {
    const live = await readModels(db);
    await rebuildCash(db.sql, store, 1);
    expect(await readModels(db)).toEqual(live);
  });
});

describe("a settlement credit with the bank charge deducted, from an MT940's /OCMT/ and /CHGS/", () => {
  let db: Db;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await appendEach(store, [sale('p1', '2026-01-02', 100_000n, 900n)]);
  });
  afterAll(async () => db?.drop());

  it('pays the day in full and books the charge as a bank fee', async () => {
    const sta = [
      ':20:STMT',
      `:25:${ACCOUNT}`,
      ':28C:1/1',
      ':60F:C260101EUR0,00',
      ':61:2601060106C989,50NTRFNONREF//M1',
      '/OCMT/EUR991,00//CHGS/EUR1,50/',
      ':86:/REMI/PSP settlement/NAME/PSP Ltd',
      ':62F:C260106EUR989,50',
      '-',
    ].join('\r\n');
    expect(await importFile(db, store, 'settlement.sta', sta)).toMatchObject({ statements: 1, entries: 1 });
    await projectCash(db.sql, store);
    const [m] =
      await db.sql`select received, shortfall::int8 as shortfall from recon.settlement_matches where bank_ref = 'M1'`;
    expect(m).toEqual({ received: 99_100n, shortfall: 0n });
    expect(await db.sql`select type from recon.settlement_discrepancies`).toEqual([]);
    expect((await journalOf(db, 'M1')).filter((l) => l.kind === 'bank_charge')).toEqual([
      { kind: 'bank_charge', account: 'bank_fees', amount: '150' },
      { kind: 'bank_charge', account: `bank:${ACCOUNT}`, amount: '-150' },
    ]);
  });
});

describe('a settlement credit with the bank charge deducted, then taken back by the bank', () => {
  let db: Db;
  let store: EventStore;
  let owed: bigint;
  const sumOf = async (account: string) => {
    const [r] = await db.sql<{ amount: string }[]>`
      select coalesce(sum(amount), 0)::text as amount from recon.journal_lines where account = ${account}`;
    return BigInt(r!.amount);
  };
  const statementOf = (statementId: string, day: string, openingBalance: bigint, entries: BankFileEntry[]) =>
    renderCamt053({
      accountId: ACCOUNT,
      currency: 'EUR',
      statementId,
      openingDate: day,
      closingDate: day,
      openingBalance,
      entries,
    });
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await appendEach(store, [sale('p1', '2026-01-02', 100_000n, 900n)]);
    await projectCash(db.sql, store);
    owed = await sumOf('psp_clearing');
  });
  afterAll(async () => db?.drop());

  it('the credit of 989.50 (991.00 sent) pays its day at 991.00; the bank account reads 989.50', async () => {
    const text = statementOf('SET-2026-01-06', '2026-01-06', 0n, [
      settlement('C1', '2026-01-06', 99_100n, [{ amount: 150n, included: true }]),
    ]);
    expect(await importFile(db, store, 'credited.xml', text)).toMatchObject({ statements: 1, entries: 1 });
    await projectCash(db.sql, store);
    expect(await db.sql`select bank_ref, received from recon.settlement_matches`).toEqual([
      { bank_ref: 'C1', received: 99_100n },
    ]);
    expect(await sumOf(`bank:${ACCOUNT}`)).toBe(98_950n);
    expect(await sumOf('bank_fees')).toBe(150n);
  });

  it('a return of what was credited (989.50) cancels the credit and its charge: the bank account reads 0', async () => {
    const text = statementOf('SET-2026-01-07', '2026-01-07', 98_950n, [
      {
        direction: 'debit',
        amount: 98_950n,
        bookingDate: '2026-01-07',
        bankRef: 'R1',
        transactionCode: 'PMNT/RCDT/RRTN',
        details: [{ remittance: 'REVERSAL OF CREDIT C1', counterpartyName: 'PSP Ltd', isReturn: true }],
      },
    ]);
    expect(await importFile(db, store, 'returned.xml', text)).toMatchObject({ statements: 1, entries: 1 });
    await projectCash(db.sql, store);
    expect(await db.sql`select bank_ref from recon.settlement_matches`).toEqual([]);
    const [day] = await db.sql`select status from recon.settlements_expected where due_on = '2026-01-06'`;
    expect(day).toEqual({ status: 'in_transit' });
    expect(await db.sql`select type from recon.settlement_discrepancies`).toEqual([]);
    // as the bank: nothing of the credit in the account, no charge paid; the PSP owes the day again
    expect(await sumOf(`bank:${ACCOUNT}`)).toBe(0n);
    expect(await sumOf('bank_fees')).toBe(0n);
    expect(await sumOf('psp_clearing')).toBe(owed);
    const charges = await db.sql<{ entry_id: string; kind: string; reverses: string | null }[]>`
      select entry_id, kind, reverses from recon.journal_entries where row_key like 'charge:%' order by kind`;
    expect(charges).toEqual([
      { entry_id: expect.stringMatching(/:c0$/), kind: 'bank_charge', reverses: null },
      { entry_id: expect.any(String), kind: 'reversal', reverses: charges[0]!.entry_id },
    ]);
    // the bridge: the credit (as credited, its charge given back) and its return not in the journal, 0 at the bank
    const [lines] = await db.sql<{ amount: string }[]>`
      select sum(case when direction = 'credit' then amount else -amount end)::text as amount
      from recon.settlement_bank_lines where not matched`;
    expect(BigInt(lines!.amount)).toBe(0n);
  });

  it('rebuilt in batches of 1, 3 and 1000: the same rows and entries', async () => {
    const live = await readModels(db);
    for (const size of [1, 3, 1000]) {
      await rebuildCash(db.sql, store, size);
      expect(await readModels(db)).toEqual(live);
    }
  });

  it('the return cancels a later credit of 989.50 once known: the first pays again, its charge booked again', async () => {
    const text = statementOf('SET-2026-01-07-B', '2026-01-07', 0n, [
      { direction: 'credit', amount: 98_950n, bookingDate: '2026-01-07', bankRef: 'C2', details: [{}] },
    ]);
    expect(await importFile(db, store, 'later.xml', text)).toMatchObject({ entries: 1 });
    await projectCash(db.sql, store);
    expect(await db.sql`select bank_ref, received from recon.settlement_matches`).toEqual([
      { bank_ref: 'C1', received: 99_100n },
    ]);
    expect(await sumOf(`bank:${ACCOUNT}`)).toBe(98_950n);
    expect(await sumOf('bank_fees')).toBe(150n);
    const live = await readModels(db);
    for (const size of [1, 3, 1000]) {
      await rebuildCash(db.sql, store, size);
      expect(await readModels(db)).toEqual(live);
    }
  });
});
