import { describe, expect, it } from 'vitest';
import type { BankAccount } from '../../src/config/bank';
import { bankAccountStream } from '../../src/events/bank-events';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { tempFile } from '../ingest/bank/support';
import { useTestStore } from '../support/db';

/**
 * Review 9: a bank statement in yen with an amount of a fraction of a yen (a file mangled on the way, or a CSV
 * mapping reading the wrong column) was imported: a 1,000.50 JPY debit, which no transfer can be, booked against
 * a payout and reported as a payout paid beyond what is asked. A currency without minor units has none in a bank
 * file either: the file is refused naming its line, nothing stored; whole yen are imported as before.
 */

const t = useTestStore();
const JPY: BankAccount = { id: 'JP00TESTACCOUNT0001', currency: 'JPY', role: 'payouts', name: null };

const statement = (amount: string, closing: string, id: string) =>
  [
    `:20:${id}`,
    `:25:${JPY.id}`,
    ':28C:00001/001',
    ':60F:C250601JPY100000,',
    `:61:2506020602D${amount}NTRFNONREF//${id}-OUT`,
    ':86:PAYOUT RS-SM-J-2025-05-JPY',
    `:62F:C250602JPY${closing}`,
    '-',
    '',
  ].join('\n');

const importOne = (file: string) =>
  importBankFiles(t.store, knownEventsOf(t.store, t.db.sql), [file], { accounts: [JPY] });

describe('review9: a fraction of a yen in a bank statement', () => {
  it('is refused naming the file and the line; nothing is stored', async () => {
    const file = tempFile('jpy-fraction.sta', statement('1000,50', '98999,50', 'J-FRAC'));
    await expect(importOne(file)).rejects.toMatchObject({
      name: 'BankImportRefused',
      message: expect.stringMatching(/jpy-fraction\.sta: line 5: .*1000\.50 JPY is not a whole number of JPY/),
    });
    expect(await t.store.readStream(bankAccountStream(JPY.id))).toEqual([]);
  });

  it('whole yen are imported', async () => {
    const out = await importOne(tempFile('jpy-whole.sta', statement('1000,', '99000,', 'J-WHOLE')));
    expect(out.reduce((n, f) => n + f.entries, 0)).toBe(1);
  });
});
