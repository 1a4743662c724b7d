import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { keyGivenTwice } from '../../src/config/project-file';
import { killAll, runRecon } from '../faults/support/processes';
import { tempFile } from '../ingest/bank/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 5: RECON_CONFIG and a bank CSV mapping (`recon bank import --mapping F`) were read by JSON.parse, which
 * keeps the last of a key given twice: an account configured `"currency": "EUR", …, "currency": "UAH"` was a
 * UAH account, a mapping's `amount` column silently the balance column. Refused now, naming the key and where
 * (never a value: the project file holds secrets); the same key twice with the same value is harmless.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('review5: a key given twice in a JSON file recon is configured by', () => {
  it('keyGivenTwice names the key and its place; equal values and nested objects apart are fine', () => {
    expect(keyGivenTwice('{"a":{"k":"secret-1","k":"secret-2"}}')).toBe(
      'the key "k" is given twice with different values (at character 22)',
    );
    expect(keyGivenTwice('{"a":{"k":"v","k":"v"}}')).toBeNull();
    expect(keyGivenTwice('{"a":{"k":1},"b":{"k":2}}')).toBeNull();
  });

  it('recon config and recon bank import --mapping refuse it (the real binary)', { timeout: 180_000 }, async () => {
    const dup = tempFile(
      'r5-dup-config.json',
      '{"bank":{"accounts":[{"id":"DE89370400440532013000","currency":"EUR","role":"payouts","currency":"UAH"}]}}',
    );
    const config = await runRecon(['config'], reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: dup } }));
    expect(config.code).toBe(78);
    expect(config.stderr).toContain('the key "currency" is given twice with different values');
    const good = tempFile('r5-good-config.json', '');
    writeFileSync(
      good,
      JSON.stringify({ bank: { accounts: [{ id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' }] } }),
    );
    const mapping = tempFile(
      'r5-dup-mapping.json',
      '{"account":"DE89370400440532013000","currency":"EUR","delimiter":";","decimal":",","dateFormat":"dd.MM.yyyy",' +
        '"columns":{"bookingDate":"Buchungstag","amount":"Betrag","balance":"Saldo","amount":"Saldo"}}',
    );
    const csv = tempFile('r5-dup.csv', 'Buchungstag;Betrag;Saldo\n01.06.2025;5,00;105,00\n');
    const env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: good } });
    const r = await runRecon(['bank', 'import', csv, '--mapping', mapping], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the key "amount" is given twice with different values');
  });
});
