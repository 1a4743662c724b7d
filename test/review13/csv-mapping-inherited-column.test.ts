import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvMappingSchema, parseCsv } from '../../src/ingest/bank/csv';

/**
 * A bank CSV mapping naming a column the header does not have is refused naming it ("no such column in the
 * header"), except when the name is one every JavaScript object inherits (`constructor`, `toString`,
 * `__proto__`): the row's cell was then the inherited function, and the import failed with
 * `CSV: v.trim is not a function`, naming neither the line nor the column.
 */

const text = 'date,amount,balance\n2025-01-02,10.50,110.50\n';

async function read(column: string): Promise<string> {
  const m = csvMappingSchema.parse({
    account: 'DE89370400440532013000',
    currency: 'EUR',
    columns: { bookingDate: 'date', amount: 'amount', balance: 'balance', bankRef: column },
  });
  try {
    for await (const _ of parseCsv(Readable.from([text]), 'f.csv', m));
    return 'accepted';
  } catch (e) {
    return (e as Error).message;
  }
}

describe('a CSV mapping naming a column the header does not have', () => {
  it.each(['reference', 'constructor', 'toString', '__proto__'])(
    '%s: refused naming the line and the column',
    async (column) => {
      expect(await read(column)).toBe(`f.csv: line 2, column ${JSON.stringify(column)}: no such column in the header`);
    },
  );
});
