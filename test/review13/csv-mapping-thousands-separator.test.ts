import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvMappingSchema, parseCsv } from '../../src/ingest/bank/csv';
import type { BankFileItem } from '../../src/ingest/bank/types';

/**
 * A bank CSV mapping (`recon bank import --mapping FILE`) whose `thousands` separator is its `decimal` one, a
 * digit or a sign was accepted. With `decimal: "."` and `thousands: "."` every amount lost its decimal point:
 * 10.50 was read as 1,050.00, each balance the same way, so the running balances still followed and the file
 * footed; the statement was imported at a hundred times its amounts, with no word.
 */

const mapping = {
  account: 'DE89370400440532013000',
  currency: 'EUR',
  columns: { bookingDate: 'date', amount: 'amount', balance: 'balance' },
};

describe('a CSV mapping whose thousands separator cannot be one', () => {
  it.each([
    ['the decimal separator', { decimal: '.', thousands: '.' }],
    ['the decimal comma', { decimal: ',', thousands: ',' }],
    ['a digit', { thousands: '0' }],
    ['a minus sign', { thousands: '-' }],
    ['a plus sign', { thousands: '+' }],
  ])('is refused naming thousands when it is %s', (_what, options) => {
    const r = csvMappingSchema.safeParse({ ...mapping, ...options });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain('thousands');
  });

  it('a usual one is still accepted, and an amount is read as written', async () => {
    const m = csvMappingSchema.parse({ ...mapping, decimal: ',', thousands: '.' });
    const text = 'date,amount,balance\n2025-01-02,"1.010,50","1.110,50"\n';
    const items: BankFileItem[] = [];
    for await (const batch of parseCsv(Readable.from([text]), 'f.csv', m)) items.push(...batch);
    const entry = items.find((i) => i.kind === 'entry');
    expect(entry?.kind === 'entry' ? entry.entry.amount : null).toBe(101_050n);
  });
});
