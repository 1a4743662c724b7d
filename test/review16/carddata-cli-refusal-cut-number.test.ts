import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { minorUnits } from '../../src/ingest/bank/amount';
import { quoteForMessage } from '../../src/input-rules';
import { methodOf } from '../../src/psp/field-readers';
import { killAll, runRecon } from '../faults/support/processes';
import { csv, csvMapping, EUR } from '../bad-input/bank-files.cases';
import { tempFile } from '../ingest/bank/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A refusal quotes the value it refused, cut to 60 characters (quoteForMessage), and the command line masks card
 * numbers in what it prints. A value whose card number starts late (a long text in a date's column) was cut
 * first, inside the number: 48 characters of text and the first 12 digits, too short a run to look like a card
 * number, so printed as they came, twice as many digits as a masked number shows. Now the value is masked before
 * it is cut, there and where a refusal cuts a value itself (a PSP record's method or status, which a stored
 * rejection keeps; a bank file's amount, balance, :61: line or charge indicator).
 */

const RUN_MS = 180_000;
const PAN = '4111111111111111';
// 48 characters before the card number: a cut at 60 keeps 12 of its digits
const TEXT = `${'see receipt '.repeat(4)}${PAN} of the customer`;
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = tempFile('carddata-cli-config.json', '');
  writeFileSync(config, JSON.stringify({ bank: { accounts: [{ id: EUR.id, currency: 'EUR', role: 'payouts' }] } }));
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: config } });
}, 120_000);
afterAll(async () => {
  await killAll();
  await db?.drop();
});

/** The longest run of the card number's leading digits the text shows. */
const leadingDigitsShown = (text: string) => {
  let n = 0;
  for (let k = 7; k <= PAN.length; k++) if (text.replace(/[ -]/g, '').includes(PAN.slice(0, k))) n = k;
  return n;
};

describe('a refusal quoting a value cut inside a card number', () => {
  it('quoteForMessage masks before it cuts', () => {
    expect(TEXT.indexOf(PAN)).toBe(48);
    const quoted = quoteForMessage(TEXT);
    expect(quoted.length).toBeLessThanOrEqual(63);
    expect(leadingDigitsShown(quoted)).toBeLessThanOrEqual(6);
    expect(quoted).toContain('411111*');
  });

  it('the refusals that cut at 40 characters mask before they cut too (a stored rejection, a bank amount)', () => {
    const late = `${'see receipt '.repeat(2)}card ${PAN}`;
    const method = methodOf(late);
    expect(method.ok).toBe(false);
    if (!method.ok) {
      expect(method.reason).toMatch(/^unknown method "/);
      expect(leadingDigitsShown(method.reason)).toBeLessThanOrEqual(6);
    }
    const amount = minorUnits(late, ',');
    expect(amount).toMatch(/^not an amount: /);
    expect(leadingDigitsShown(String(amount))).toBeLessThanOrEqual(6);
  });

  it('recon orders import and recon bank import print at most six leading digits', { timeout: 600_000 }, async () => {
    expect((await runRecon(['migrate'], env, RUN_MS)).code).toBe(0);
    const orders = tempFile(
      'carddata-orders.csv',
      `order_id,amount,currency,created_at\nord-1,10.00,EUR,${JSON.stringify(TEXT)}\n`,
    );
    const refusedOrders = await runRecon(['orders', 'import', orders], env, RUN_MS);
    expect(refusedOrders.code, refusedOrders.stderr).toBe(65);
    expect(refusedOrders.stderr).toContain('created_at');
    expect(leadingDigitsShown(refusedOrders.stderr + refusedOrders.stdout)).toBeLessThanOrEqual(6);

    const mapping = tempFile('carddata.mapping.json', JSON.stringify(csvMapping('CARD-CSV')));
    const statement = tempFile('carddata.csv', csv('CARD-CSV', { Buchungstag: TEXT }));
    const refusedBank = await runRecon(['bank', 'import', '--mapping', mapping, statement], env, RUN_MS);
    expect(refusedBank.code, refusedBank.stderr).toBe(65);
    expect(refusedBank.stderr).toContain('Buchungstag');
    expect(leadingDigitsShown(refusedBank.stderr + refusedBank.stdout)).toBeLessThanOrEqual(6);
    const [n] = await db.sql<{ n: string }[]>`select count(*)::text as n from es_events`;
    expect(n!.n).toBe('0');
  });
});
