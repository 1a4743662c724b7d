import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { pain001 } from '../../src/payout-runs/pain001';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person, register } from '../payout-runs/fixtures';
import { wasmErrors } from '../payout-runs/validate';

/**
 * A payment file that says nothing of batch booking leaves it to the bank, and most book a payment information
 * block as one debit of its control sum ("Sammler"): an MT940 then shows one line with no statement reference,
 * the payouts leg finds every payout missing and one unexpected debit, and a run cancelled on that reading and
 * drafted again asks the bank for the same money twice. A run drafted now asks for one debit per transfer
 * (`BtchBookg` false), each carrying its reference; a run drafted before keeps the bytes its sha-256 names.
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => db?.drop());

describe('the payment file asks the bank to book each transfer on its own', () => {
  it('a run drafted now: BtchBookg false in each payment information block, the file valid otherwise', async () => {
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
    await register(store, 'SM-B', { payoutAccount: 'DE89370400440532013000' });
    await issue(store, '2026-08', [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-08-EUR',
        amountDue: '100000',
        held: '0',
        payable: '100000',
        holds: [],
      },
      {
        subMerchantId: 'SM-B',
        currency: 'EUR',
        reference: 'RS-SM-B-2026-08-EUR',
        amountDue: '2500',
        held: '0',
        payable: '2500',
        holds: [],
      },
    ]);
    const approvedOn = new Date('2026-09-01T09:00:00.000Z');
    const run = (
      await draftRun(store, ana, { month: '2026-08', bank: BANK, env: ENV, paidByBank: NONE_PAID, now: approvedOn })
    ).run!;
    expect(run.individualBooking).toBe(true);
    await approveRun(store, iryna, run.id, { timezone: TZ, now: approvedOn });
    const { xml } = await paymentFile(store, ana, run.id, { timezone: TZ, now: approvedOn });
    expect(xml).toContain('      <PmtMtd>TRF</PmtMtd>\n      <BtchBookg>false</BtchBookg>\n      <NbOfTxs>2</NbOfTxs>');
    expect(await wasmErrors(xml)).toEqual([]);
  });

  it('a run drafted before (no such field in its event) gives the same bytes as when it was sent', () => {
    const order = {
      messageId: 'PR-2026-07-1',
      createdAt: '2026-08-01T09:00:00.000Z',
      executionDate: '2026-08-03',
      debtors: [{ currency: 'EUR', account: 'DE89370400440532013000', name: 'Marketplace', bic: null }],
      lines: [
        {
          currency: 'EUR',
          amount: 100n,
          reference: 'RS-SM-A-2026-07-EUR',
          creditorName: 'Shop A',
          creditorAccount: 'FR1420041010050500013M02606',
        },
      ],
    };
    expect(pain001(order)).not.toContain('BtchBookg');
  });
});
