import { describe, expect, it } from 'vitest';
import type { BankAccount } from '../../../src/config/bank';
import { BankEntryBooked, BankEntryForUnknownAccount, BankStatementImported } from '../../../src/events/bank-events';
import { BankImportRefused, importBankFiles, importInBatches } from '../../../src/ingest/bank/import';
import { createPostgresEventStore } from '../../../src/store/postgres';
import type { RecordedEvent } from '../../../src/store/types';
import { knownEventsOf } from '../../../src/ingest/bank/known-events';
import {
  renderCamt053,
  renderMt940,
  type BankFileEntry,
  type BankFileStatement,
} from '../../../src/sandbox/bank-files';
import { createTestDatabase, useTestStore } from '../../support/db';
import { fixture, tempFile } from './support';

const SEK: BankAccount = { id: 'SE5230000000000312345678', currency: 'SEK', role: 'settlement', name: null };
const EUR: BankAccount = { id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts', name: null };
const UAH: BankAccount = { id: 'UA213223130000026007233566001', currency: 'UAH', role: 'settlement', name: null };
const accounts = [SEK, EUR, UAH];

const t = useTestStore();
const run = (files: string[], opts: { accounts?: BankAccount[]; batchSize?: number } = {}) =>
  importBankFiles(t.store, knownEventsOf(t.store, t.db.sql), files, {
    accounts: opts.accounts ?? accounts,
    batchSize: opts.batchSize,
  });

async function streamEvents(stream: string) {
  return t.store.readStream(stream);
}

const credit = (amount: bigint, day: string, extra: Partial<BankFileEntry> = {}): BankFileEntry => ({
  direction: 'credit',
  amount,
  bookingDate: day,
  details: [{ remittance: 'settlement', counterpartyName: 'PSP' }],
  ...extra,
});

function statement(id: string, opening: bigint, from: string, to: string, entries: BankFileEntry[]): BankFileStatement {
  return {
    accountId: UAH.id,
    currency: 'UAH',
    statementId: id,
    openingDate: from,
    closingDate: to,
    openingBalance: opening,
    entries,
  };
}

describe('bank import', () => {
  it('books each detail of a batch once; a re-import adds nothing', async () => {
    const file = fixture('camt053-v02-batch.xml');
    const [first] = await run([file]);
    expect(first).toMatchObject({ statements: 1, statementsKnown: 0, entries: 3, entriesKnown: 0, unknown: [] });
    const events = await streamEvents(`bank-${SEK.id}`);
    expect(events.map((e) => e.type)).toEqual([
      'BankEntryBooked',
      'BankEntryBooked',
      'BankEntryBooked',
      'BankStatementImported',
    ]);
    // the data the import builds without validating it is exactly the events' schema
    for (const e of events.slice(0, 3)) expect(() => BankEntryBooked.schema.parse(e.data)).not.toThrow();
    expect(BankStatementImported.schema.parse(events[3]!.data)).toMatchObject({
      statementId: 'AAAASESS-FP-STAT001-0131',
      openingBalance: '1000000',
      closingBalance: '1025000',
      entries: 2,
      format: 'camt.053',
    });
    expect(
      events.slice(0, 3).map((e) => e.data as { amount: string; detail: number; batchRef: string | null }),
    ).toEqual([
      expect.objectContaining({ amount: '10000', detail: 0, batchRef: 'AAAASESS-FP-ACCR001' }),
      expect.objectContaining({ amount: '20000', detail: 1, batchRef: 'AAAASESS-FP-ACCR001' }),
      expect.objectContaining({ amount: '5000', detail: 0, batchRef: null, direction: 'debit' }),
    ]);

    const [again] = await run([file]);
    expect(again).toMatchObject({ statements: 0, statementsKnown: 1, entries: 0, entriesKnown: 3 });
    expect(await streamEvents(`bank-${SEK.id}`)).toHaveLength(4);
  });

  it('does not book pending entries and reports a return', async () => {
    const [o] = await run([fixture('camt053-v08-prefixed.xml')]);
    expect(o).toMatchObject({ entries: 2, pending: 1 });
    const data = (await streamEvents(`bank-${EUR.id}`)).map((e) => e.data as { amount: string; isReturn: boolean });
    expect(data.filter((d) => 'isReturn' in d).map((d) => [d.amount, d.isReturn])).toEqual([
      ['250000', false],
      ['12000', true],
    ]);
  });

  it('overlapping statements, in either order, book the union once (equal entries of a day stay two)', async () => {
    const day1 = [credit(100n, '2025-03-01', { bankRef: 'R1' })];
    // two equal payments on one day, no bank reference: two entries, not one
    const day2 = [credit(250n, '2025-03-02'), credit(250n, '2025-03-02'), credit(7n, '2025-03-02', { bankRef: 'R2' })];
    const day3 = [credit(5n, '2025-03-03')];
    const a = statement('S-A', 0n, '2025-03-01', '2025-03-02', [...day1, ...day2]);
    const b = statement('S-B', 100n, '2025-03-02', '2025-03-03', [...day2, ...day3]);
    const fa = tempFile('overlap-a.xml', renderCamt053(a));
    const fb = tempFile('overlap-b.sta', renderMt940(b));
    const results: string[][] = [];
    for (const order of [
      [fa, fb],
      [fb, fa],
    ]) {
      const store = t.store;
      const before = new Set((await store.readStream(`bank-${UAH.id}`)).map((e) => e.id));
      const outcomes = [];
      for (const f of order) outcomes.push(...(await run([f])));
      const ids = (await store.readStream(`bank-${UAH.id}`))
        .filter((e) => !before.has(e.id) && e.type === 'BankEntryBooked')
        .map((e) => e.id);
      results.push(ids.sort());
      if (results.length === 1) {
        expect(outcomes.map((o) => [o.entries, o.entriesKnown])).toEqual([
          [4, 0],
          [1, 3],
        ]);
      }
    }
    // the second order added nothing: every id was already there from the first
    expect(results[0]).toHaveLength(5);
    expect(results[1]).toEqual([]);
  });

  it('refuses a statement that does not foot, naming account, statement and difference, and applies nothing', async () => {
    const good = tempFile(
      'good.xml',
      renderCamt053(
        statement('S-GOOD', 0n, '2025-04-01', '2025-04-01', [credit(10n, '2025-04-01', { bankRef: 'G1' })]),
      ),
    );
    const bad = tempFile(
      'bad.xml',
      renderCamt053({
        ...statement('S-BAD', 0n, '2025-04-02', '2025-04-02', [credit(1000n, '2025-04-02', { bankRef: 'X1' })]),
        closingOverride: 900n,
      }),
    );
    const before = (await streamEvents(`bank-${UAH.id}`)).length;
    const err = await run([good, bad]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankImportRefused);
    const message = (err as Error).message;
    expect(message).toContain('nothing imported');
    expect(message).toContain(`statement S-BAD of account ${UAH.id}`);
    expect(message).toContain('does not foot');
    expect(message).toContain('difference -1.00 UAH');
    expect(await streamEvents(`bank-${UAH.id}`)).toHaveLength(before);
  });

  it('refuses a statement in another currency than its account', async () => {
    const file = tempFile(
      'usd.xml',
      renderCamt053({
        ...statement('S-USD', 0n, '2025-04-03', '2025-04-03', [credit(1n, '2025-04-03')]),
        currency: 'USD',
      }),
    );
    await expect(run([file])).rejects.toThrow(/the statement is in USD, the account is configured in UAH/);
  });

  it('reports a statement of an unconfigured account, not lost, and books none of its entries', async () => {
    const file = tempFile(
      'unknown.xml',
      renderCamt053({
        ...statement('S-UNK', 0n, '2025-05-01', '2025-05-01', [credit(3n, '2025-05-01'), credit(4n, '2025-05-01')]),
        accountId: 'GB33BUKB20201555555555',
      }),
    );
    const [o] = await run([file]);
    expect(o!.unknown).toEqual([{ account: 'GB33BUKB20201555555555', statementId: 'S-UNK', entries: 2 }]);
    expect(o!.entries).toBe(0);
    const reported = await streamEvents('bank-unknown-accounts');
    expect(reported.map((e) => BankEntryForUnknownAccount.schema.parse(e.data))).toEqual([
      expect.objectContaining({ account: 'GB33BUKB20201555555555', statementId: 'S-UNK', entries: 2, currency: 'UAH' }),
    ]);
    expect(await streamEvents('bank-GB33BUKB20201555555555')).toEqual([]);
    await run([file]);
    expect(await streamEvents('bank-unknown-accounts')).toHaveLength(1);
  });

  it('an overlap met in a batch of entries alone (appended without a lookup) is left out, counted known', async () => {
    const entries = (day: string, n: number) =>
      Array.from({ length: n }, (_, i) => credit(BigInt(10 + i), day, { bankRef: `OV-${day}-${i}` }));
    const a = statement('S-OV-A', 0n, '2025-06-01', '2025-06-02', [
      ...entries('2025-06-01', 3),
      ...entries('2025-06-02', 4),
    ]);
    // B repeats day 2 (stored from A with A's statement id: same ids, other content), then a new day, a re-import
    const b = statement('S-OV-B', 33n, '2025-06-02', '2025-06-03', [
      ...entries('2025-06-02', 4),
      ...entries('2025-06-03', 5),
    ]);
    const fa = tempFile('ov-a.xml', renderCamt053(a));
    const fb = tempFile('ov-b.xml', renderCamt053(b));
    const [oa] = await run([fa], { batchSize: 2 });
    expect(oa).toMatchObject({ entries: 7, entriesKnown: 0, statements: 1 });
    const [ob] = await run([fb], { batchSize: 2 });
    expect(ob).toMatchObject({ entries: 5, entriesKnown: 4, statements: 1, statementsKnown: 0 });
    const [again] = await run([fb], { batchSize: 2 });
    expect(again).toMatchObject({ entries: 0, entriesKnown: 9, statements: 0, statementsKnown: 1 });
    const booked = (await streamEvents(`bank-${UAH.id}`)).filter((e) => e.type === 'BankEntryBooked');
    const ours = booked.filter((e) => (e.data as { bankRef: string }).bankRef?.startsWith('OV-'));
    expect(ours).toHaveLength(12);
    // day 2 keeps the statement that booked it first
    expect(
      ours
        .filter((e) => (e.data as { bookingDate: string }).bookingDate === '2025-06-02')
        .map((e) => (e.data as { statementId: string }).statementId),
    ).toEqual(['S-OV-A', 'S-OV-A', 'S-OV-A', 'S-OV-A']);
  });

  it('on PostgreSQL one import is one append, and the bulk and the batched import book the same events', async () => {
    // days in order (the bulk) and a statement whose first day comes back after the second (the batched import)
    const ordered = statement('S-BULK-1', 0n, '2025-04-01', '2025-04-02', [
      credit(11n, '2025-04-01', { bankRef: 'Q1' }),
      credit(12n, '2025-04-01'),
      credit(12n, '2025-04-01'),
      credit(13n, '2025-04-02'),
    ]);
    const unordered = statement('S-BULK-2', 48n, '2025-04-03', '2025-04-04', [
      credit(21n, '2025-04-03'),
      credit(22n, '2025-04-04', { bankRef: 'Q2' }),
      credit(21n, '2025-04-03'),
    ]);
    const files = [tempFile('bulk-1.xml', renderCamt053(ordered)), tempFile('bulk-2.xml', renderCamt053(unordered))];
    const before = (await streamEvents(`bank-${UAH.id}`)).length;
    // batches of one event, where the batched import is taken
    const [one] = await run([files[0]!], { batchSize: 1 });
    expect(one).toMatchObject({ statements: 1, entries: 4, entriesKnown: 0 });
    const [two] = await run([files[1]!], { batchSize: 1 });
    expect(two).toMatchObject({ statements: 1, entries: 3, entriesKnown: 0 });
    const stored = (await streamEvents(`bank-${UAH.id}`)).slice(before);
    expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => before + i));
    // the first file went in as one append, the second (days out of order) in batches
    expect(new Set(stored.slice(0, 5).map((e) => e.appendId)).size).toBe(1);
    expect(new Set(stored.slice(5).map((e) => e.appendId)).size).toBeGreaterThan(1);
    const other = await createTestDatabase();
    try {
      const store = createPostgresEventStore(other.sql);
      await importInBatches(store, knownEventsOf(store, other.sql), files, { accounts });
      const batched = await store.readStream(`bank-${UAH.id}`);
      const strip = (e: RecordedEvent) => [e.id, e.type, e.data];
      expect(stored.map(strip)).toEqual(batched.map(strip));
    } finally {
      await other.drop();
    }
  });

  it('names a missing file', async () => {
    await expect(run(['/nonexistent/statement.xml'])).rejects.toThrow(/\/nonexistent\/statement.xml: no such file/);
  });
});
