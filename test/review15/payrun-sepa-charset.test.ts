import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { approveRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { sepaText } from '../../src/payout-runs/charset';
import { debtorsFor } from '../../src/payout-runs/debtor';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { issue, NONE_PAID, person, register } from '../payout-runs/fixtures';
import { texts, wasmErrors } from '../payout-runs/validate';

/**
 * A sub-merchant named in Cyrillic ("ТОВ «Квіти»", as the directory's legal names are) was written into the
 * payment file as it stands, whatever the bank: a SEPA bank holds a whole file to the EPC Latin set
 * (a-z A-Z 0-9 / - ? : ( ) . , ' + space) and refused it, every payout of the run with it, and there was no way
 * to ask for another. `bank.payouts.charset: "sepa"` now writes names in that set (Ukrainian by the national
 * transliteration, accents dropped, & as +) and leaves out, listed as `name_not_in_charset`, a sub-merchant
 * whose name it cannot write, never another name; the debtor's name likewise, refused naming its variable.
 */

const SEPA_SET = /^[A-Za-z0-9/\-?:().,'+ ]*$/;

const sepaBank = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [{ id: 'DE89 3704 0044 0532 0130 00', currency: 'EUR', role: 'payouts' }],
    payouts: { charset: 'sepa' },
  }),
);

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db.drop();
});

const MONTH = '2026-10';
const NOW = new Date('2026-11-27T09:00:00.000Z');
const payout = (subMerchantId: string, payable: string) => ({
  subMerchantId,
  currency: 'EUR',
  reference: `RS-${subMerchantId}-2026-10-EUR`,
  amountDue: payable,
  held: '0',
  payable,
  holds: [] as [string, string][],
});

describe('payment file names in the SEPA character set', () => {
  it('Cyrillic and accented names are transliterated; a name it cannot write is left out, listed', async () => {
    await register(store, 'SM-K', {
      payoutAccount: 'FR1420041010050500013M02606',
      legalName: 'ТОВ «Квіти Зграя» & Щука',
    });
    await register(store, 'SM-M', { payoutAccount: 'DE02120300000000202051', legalName: 'Müller Straße GmbH' });
    await register(store, 'SM-J', { payoutAccount: 'NL91ABNA0417164300', legalName: '株式会社さくら' });
    await issue(store, MONTH, [payout('SM-K', '120000'), payout('SM-M', '50000'), payout('SM-J', '70000')]);
    const env = { RECON_PAYOUTS_DEBTOR_NAME: 'ТОВ "Маркетплейс Київ"' };
    const r = await draftRun(store, person('ana', 'analyst'), {
      month: MONTH,
      bank: sepaBank,
      env,
      paidByBank: NONE_PAID,
      now: NOW,
    });
    expect(r.run!.lines.map((l) => [l.subMerchantId, l.creditorName])).toEqual([
      ['SM-K', "TOV 'Kvity Zghraia' + Shchuka"],
      ['SM-M', 'Muller Strasse GmbH'],
    ]);
    expect(r.run!.leftOut.map((l) => [l.subMerchantId, l.reason])).toEqual([['SM-J', 'name_not_in_charset']]);
    expect(r.run!.debtors.map((d) => d.name)).toEqual(["TOV 'Marketpleis Kyiv'"]);

    await approveRun(store, person('iryna', 'approver'), r.run!.id, {
      timezone: 'Europe/Kyiv',
      executionDate: '2026-11-30',
      now: NOW,
    });
    const f = await paymentFile(store, person('ana', 'analyst'), r.run!.id, { timezone: 'Europe/Kyiv', now: NOW });
    expect(await wasmErrors(f.xml)).toEqual([]);
    const names = texts(f.xml).filter((x) => x.path.endsWith('/Nm'));
    expect(names.length).toBe(4);
    for (const n of names) expect(n.text).toMatch(SEPA_SET);
  });

  it('Ukrainian as the national table writes it (its own examples)', () => {
    const examples: [string, string][] = [
      ['Згорани', 'Zghorany'],
      ['Розгон', 'Rozghon'],
      ['Єнакієве', 'Yenakiieve'],
      ['Їжакевич', 'Yizhakevych'],
      ['Кадиївка', 'Kadyivka'],
      ['Йосипівка', 'Yosypivka'],
      ['Стрий', 'Stryi'],
      ['Юрій', 'Yurii'],
      ["Знам'янка", 'Znamianka'],
      ['Гаращенко', 'Harashchenko'],
      ['ЩЕРБУХИ', 'SHCHERBUKHY'],
    ];
    expect(examples.map(([uk]) => sepaText(uk))).toEqual(examples.map(([, latin]) => latin));
  });

  it('a debtor name the set cannot write is refused naming the variable', () => {
    expect(() => debtorsFor(['EUR'], sepaBank, { RECON_PAYOUTS_DEBTOR_NAME: '株式会社' })).toThrow(
      /RECON_PAYOUTS_DEBTOR_NAME.*bank\.payouts\.charset "sepa"/,
    );
  });

  it('without the setting, names are written as the directory gives them (utf8)', () => {
    const utf8 = bankConfigFrom(
      bankConfigSchema.parse({ accounts: [{ id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' }] }),
    );
    expect(debtorsFor(['EUR'], utf8, { RECON_PAYOUTS_DEBTOR_NAME: 'ТОВ Маркетплейс' })[0]!.name).toBe(
      'ТОВ Маркетплейс',
    );
  });
});
