import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvMappingSchema, parseCsv } from '../../../src/ingest/bank/csv';
import { entryEvents, occurrenceCounter } from '../../../src/ingest/bank/entry-events';
import type { ParsedEntry } from '../../../src/ingest/bank/types';
import { collect } from './support';

const entry = (day: string, amount: bigint, bankRef: string | null = null): ParsedEntry => ({
  amount,
  direction: 'credit',
  currency: 'UAH',
  status: 'booked',
  bookingDate: day,
  valueDate: day,
  bankRef,
  isReversal: false,
  transactionCode: null,
  details: [],
  info: 'card batch',
  where: 'test',
});
const statement = { statementId: 'S', currency: 'UAH' };
const ids = (entries: ParsedEntry[], dayOrdered: boolean) => {
  const occ = occurrenceCounter(dayOrdered);
  return entries.flatMap((e) => entryEvents('ACC', statement, e, occ).map((x) => x.id));
};

describe('entry ids', () => {
  it('equal entries of a day are told apart by occurrence, whatever the order of the days', () => {
    const a = entry('2025-01-01', 100n);
    const b = entry('2025-01-02', 100n);
    const ordered = ids([a, a, b, b], true);
    expect(new Set(ordered).size).toBe(4);
    // the same entries with the days interleaved (a statement not in day order) give the same ids
    expect(new Set(ids([a, b, a, b], false))).toEqual(new Set(ordered));
  });
  it('depend on the account and the entry, not on the statement', () => {
    const e = entry('2025-01-01', 5n, 'REF1');
    const one = entryEvents('ACC', { statementId: 'S1', currency: 'UAH' }, e, occurrenceCounter(true));
    const two = entryEvents('ACC', { statementId: 'S2', currency: 'UAH' }, e, occurrenceCounter(true));
    const other = entryEvents('ACC2', { statementId: 'S1', currency: 'UAH' }, e, occurrenceCounter(true));
    expect(one[0]!.id).toBe(two[0]!.id);
    expect(other[0]!.id).not.toBe(one[0]!.id);
    // the same bank reference on a credit and a debit (as some banks write) stays two entries
    const debit = entryEvents('ACC', statement, { ...e, direction: 'debit' }, occurrenceCounter(true));
    expect(debit[0]!.id).not.toBe(one[0]!.id);
  });
});

describe('CSV mapping variants', () => {
  const base = {
    account: 'UA213223130000026007233566001',
    currency: 'UAH',
    columns: { bookingDate: 'date', amount: 'amount', direction: 'dc', balance: 'balance' },
  };
  const read = (text: string, extra: object = {}) =>
    collect(parseCsv(Readable.from([text]), 'x.csv', csvMappingSchema.parse({ ...base, ...extra })));

  it('a direction column, rows newest first', async () => {
    const { statements, entries } = await read(
      'date,amount,dc,balance\n2025-01-02,5.00,D,10.00\n2025-01-01,15.00,C,15.00\n',
      { newestFirst: true },
    );
    expect(entries.map((e) => [e.direction, e.amount])).toEqual([
      ['debit', 500n],
      ['credit', 1500n],
    ]);
    expect(statements[0]).toMatchObject({
      opening: { amount: 0n, date: '2025-01-01' },
      closing: { amount: 1000n, date: '2025-01-02' },
    });
  });
  it('a running balance that does not follow names the line', async () => {
    await expect(read('date,amount,dc,balance\n2025-01-01,1.00,C,1.00\n2025-01-02,1.00,C,3.00\n')).rejects.toThrow(
      /x.csv: line 3, column "balance": the running balance does not follow from line 2/,
    );
  });
  it('an unknown direction value and a missing column', async () => {
    await expect(read('date,amount,dc,balance\n2025-01-01,1.00,X,1.00\n')).rejects.toThrow(
      /line 2, column "dc": expected one of/,
    );
    await expect(read('date,amount,balance\n2025-01-01,1.00,1.00\n')).rejects.toThrow(/column "dc": no such column/);
  });
});
