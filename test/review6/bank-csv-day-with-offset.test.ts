import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvMappingSchema, parseCsv } from '../../src/ingest/bank/csv';
import { collect } from '../ingest/bank/support';

/**
 * Review 6: a CSV whose booking dates carry the bank's offset (`2026-10-01T01:30:00+03:00`, a credit at half
 * past one on the 1st of October in Kyiv) was read in UTC and booked on 30 September: neither the day the
 * bank wrote nor the day in RECON_TIMEZONE, a month early for a settlement paid just after midnight. camt.053
 * takes a DtTm's day as the bank wrote it; the CSV now does the same.
 */

const mapping = csvMappingSchema.parse({
  account: 'UA213223130000026007233566001',
  currency: 'UAH',
  dateFormat: "yyyy-MM-dd'T'HH:mm:ssZZ",
  columns: { bookingDate: 'booked', amount: 'amount', balance: 'balance' },
});

const read = (text: string) => collect(parseCsv(Readable.from([text]), 'statement.csv', mapping));

describe('review6: a CSV booking date with an offset', () => {
  it('is booked on the day the bank wrote, not the day in UTC', async () => {
    const { entries, statements } = await read(
      'booked,amount,balance\n2026-09-30T23:10:00+03:00,100.00,100.00\n2026-10-01T01:30:00+03:00,250.00,350.00\n',
    );
    expect(entries.map((e) => e.bookingDate)).toEqual(['2026-09-30', '2026-10-01']);
    expect(statements[0]).toMatchObject({ opening: { date: '2026-09-30' }, closing: { date: '2026-10-01' } });
  });

  it('a date at +00:00 stays as written', async () => {
    const { entries } = await read('booked,amount,balance\n2026-10-01T01:30:00+00:00,5.00,5.00\n');
    expect(entries.map((e) => e.bookingDate)).toEqual(['2026-10-01']);
  });
});
