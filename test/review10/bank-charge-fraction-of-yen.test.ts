import { describe, expect, it } from 'vitest';
import type { BankAccount } from '../../src/config/bank';
import { bankAccountStream } from '../../src/events/bank-events';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { tempFile } from '../ingest/bank/support';
import { useTestStore } from '../support/db';

/**
 * Review 10: the bank door refused a line's amount of a fraction of a yen (review 9), but not the transfer's own
 * amount and charges the file states with it (MT940 `/OCMT/`, `/CHGS/`; camt `TxAmt`, `Chrgs`). A 1,000 JPY payout
 * debit stating `/OCMT/JPY999,50//CHGS/JPY0,50/` was imported; the folded charge (bank-charges.ts) then read the
 * payout as paid at 999.50 JPY, a rest of 0.50 JPY that no pain.001 can carry. The stated amounts are refused like
 * the line's, naming the line; nothing is stored. Whole yen stated are imported as before.
 */

const t = useTestStore();
const JPY: BankAccount = { id: 'JP00TESTACCOUNT0002', currency: 'JPY', role: 'payouts', name: null };

const statement = (codes: string, id: string) =>
  [
    `:20:${id}`,
    `:25:${JPY.id}`,
    ':28C:00001/001',
    ':60F:C250601JPY100000,',
    `:61:2506020602D1000,NTRFNONREF//${id}-OUT`,
    codes,
    ':86:PAYOUT RS-SM-J-2025-05-JPY',
    ':62F:C250602JPY99000,',
    '-',
    '',
  ].join('\n');

const importOne = (file: string) =>
  importBankFiles(t.store, knownEventsOf(t.store, t.db.sql), [file], { accounts: [JPY] });

describe('review10: a fraction of a yen stated as the transfer amount or a charge', () => {
  it('a charge of 0.50 JPY folded into a 1,000 JPY debit is refused naming the line; nothing is stored', async () => {
    const file = tempFile('jpy-charge.sta', statement('/OCMT/JPY999,50//CHGS/JPY0,50/', 'J-CHG'));
    await expect(importOne(file)).rejects.toMatchObject({
      name: 'BankImportRefused',
      message: expect.stringMatching(
        /jpy-charge\.sta: line 5: transaction amount 999\.50 JPY is not a whole number of JPY/,
      ),
    });
    expect(await t.store.readStream(bankAccountStream(JPY.id))).toEqual([]);
  });

  it('a charge of 0.50 JPY stated alone is refused naming the line', async () => {
    const file = tempFile('jpy-charge-alone.sta', statement('/CHGS/JPY0,50/', 'J-CHA'));
    await expect(importOne(file)).rejects.toMatchObject({
      message: expect.stringMatching(/jpy-charge-alone\.sta: line 5: charge 0\.50 JPY is not a whole number of JPY/),
    });
    expect(await t.store.readStream(bankAccountStream(JPY.id))).toEqual([]);
  });

  it('whole yen stated are imported, the charge folded as before', async () => {
    const out = await importOne(tempFile('jpy-charge-whole.sta', statement('/OCMT/JPY999,//CHGS/JPY1,/', 'J-CHW')));
    expect(out.reduce((n, f) => n + f.entries, 0)).toBe(1);
    const [e] = await t.store
      .readStream(bankAccountStream(JPY.id))
      .then((s) => s.filter((x) => x.type === 'BankEntryBooked'));
    expect(e?.data).toMatchObject({ transactionAmount: '99900', charges: [{ amount: '100', currency: 'JPY' }] });
  });
});
