import { describe, expect, it } from 'vitest';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { useTestStore } from '../support/db';
import { tempFile } from '../ingest/bank/support';
import { camt, csv, csvMapping, EUR, mt940 } from '../bad-input/bank-files.cases';
import { bankDoors } from '../bad-input/bank-harness';

/**
 * A whole card number in a bank statement's text (a remittance "refund card 4111 1111 1111 1111", a
 * counterparty name) was stored as the file had it in the `BankEntryBooked` event and from there in
 * `recon.bank_entries`: the bank doors masked nothing, although card numbers are never stored (README, "Secrets
 * and card data"). Now masked to the first six and last four digits, as the PSP's texts are; a payout's statement
 * number (`RS-<id>-<month>-<currency>`, read in the remittance by the payout matching) stays whole.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const t = useTestStore();
const { importFiles } = bankDoors(t);

async function firstEntry(): Promise<Record<string, unknown>> {
  const events = await t.store.readStream(bankAccountStream(EUR.id));
  const booked = events.filter((e) => e.type === BankEntryBooked.type);
  return booked.at(-2)!.data as Record<string, unknown>;
}

async function storedText(): Promise<string> {
  const rows = await t.db.sql<{ d: string }[]>`select data::text as d from es_events`;
  return rows.map((r) => r.d).join('\n');
}

describe('a card number in a bank statement', () => {
  it.each([
    ['camt.053', 'xml', camt('P-CAMT', { remittance: `refund card ${PAN}`, name: `N ${PAN}` })],
    ['MT940', 'sta', mt940('P-MT940', { remittance: `refund card ${PAN}`, name: `N ${PAN}` })],
  ])('%s: remittance and name are stored masked', async (_door, ext, text) => {
    const file = tempFile(`pan-${ext}.${ext}`, text);
    await importFiles([file]);
    const entry = await firstEntry();
    expect(entry['remittance']).toBe(`refund card ${MASKED}`);
    expect(entry['counterpartyName']).toBe(`N ${MASKED}`);
    expect(await storedText()).not.toContain(PAN);
    // the same file again is known: nothing added
    const before = (await storedText()).length;
    await importFiles([file]);
    expect((await storedText()).length).toBe(before);
  });

  it('CSV: a spaced card number in the remittance is stored masked', async () => {
    const file = tempFile('pan.csv', csv('P-CSV', { Verwendungszweck: 'card 4111 1111 1111 1111' }));
    await importFiles([file], { mapping: csvMapping('P-CSV') });
    expect((await firstEntry())['remittance']).toBe(`card ${MASKED}`);
    expect((await storedText()).replace(/ /g, '')).not.toContain(PAN);
  });

  it('a payout statement number made of a card-shaped sub-merchant id stays whole', async () => {
    const ref = `RS-${PAN}-2025-06-EUR`;
    const file = tempFile('ref.xml', camt('P-REF', { remittance: ref }));
    await importFiles([file]);
    expect((await firstEntry())['remittance']).toBe(ref);
  });
});
