import { describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { ledgerBalance } from '../../src/ledger/balances';
import { statementFigures } from '../../src/ledger/ledger-queries';
import { runProjections } from '../../src/projector/runner';
import type { Position } from '../../src/store/types';
import { importCsv, registerRows, TZ, useJournalStore } from './journal-support';
import { waitVisible } from './visible';

/**
 * Corrections and directory changes the journal and the ledgers must get right (each
 * fails on a journal that keys rows by their amounts): a corrected originalAmount, a renamed sub-merchant, a reserve held for 0 days.
 * Each test uses its own payments and receivers.
 */

const POS = 'pos-r';
const fx = useJournalStore();
const { splitRow } = registerRows(POS);

/** One register observation, built like the sync builds it (id from raw text + normalized record). */
async function observe(r: NormalizedRegisterRecord, reportId = 'rep'): Promise<Position | undefined> {
  const k = registerObserved(POS, JSON.stringify({ ...r, other: undefined }), r, {
    source: 'register',
    reportId,
    window: { from: '2025-01-01', to: '2025-01-31' },
    observedAt: '2025-03-01T00:00:00.000Z',
  });
  const res = await fx.store.append(k.stream, [k.event]);
  return res.position;
}

async function project(): Promise<void> {
  await waitVisible(fx.db.sql, fx.store);
  await runProjections(fx.deps, { batchSize: 1 });
}

describe('journal: a later observation of a row', () => {
  it('an amount correction that also corrects originalAmount replaces the row instead of adding a second sale', async () => {
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nSM-COR,Corr Shop,30\n');
    const first = splitRow('pay-cor', '2025-01-12T10:00:00.000Z', 'Corr Shop', 60_000n, 600n, 0n, {
      originalAmount: '100000',
    });
    await observe(first);
    await project();
    // a later report's observation of the same row (same payment, method, receiver, dateTime), amounts corrected
    await observe({ ...first, originalAmount: '90000', receiverAmount: '54000', receiverFee: '540' }, 'rep-later');
    await project();
    const [jan] = await statementFigures(fx.db.sql, { month: '2025-01', timezone: TZ, subMerchantId: 'SM-COR' });
    expect({ gross: jan!.gross, fees: jan!.fees, operations: jan!.operations }).toEqual({
      gross: 54_540n,
      fees: 540n,
      operations: 1,
    });
  });
});

describe('ledgers: a renamed sub-merchant', () => {
  it('a renamed sub-merchant keeps its balance and its reserve releases', async () => {
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nSM-REN,Old Name,30\n');
    await observe(splitRow('pay-ren', '2025-01-10T10:00:00.000Z', 'Old Name', 60_000n, 600n, 3_000n));
    await project();
    const jan = (await statementFigures(fx.db.sql, { month: '2025-01', timezone: TZ, subMerchantId: 'SM-REN' }))[0]!;
    expect(jan.closing).toBe(57_000n);
    // February: the sub-merchant is renamed in the directory (the PSP reports the new receiverName from now on)
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nSM-REN,New Name,30\n');
    await observe(splitRow('pay-ren2', '2025-02-15T10:00:00.000Z', 'New Name', 10_000n, 100n, 0n));
    await project();
    const feb = (await statementFigures(fx.db.sql, { month: '2025-02', timezone: TZ, subMerchantId: 'SM-REN' }))[0]!;
    const phantom = (await statementFigures(fx.db.sql, { month: '2025-02', timezone: TZ })).filter(
      (f) => f.subMerchantId === 'receiver:Old Name',
    );
    // SM-REN is still owed January's 57,000 and its reserve of 3,000 is released on 9 February
    expect({
      opening: feb.opening,
      reserveReleased: feb.reserveReleased,
      closing: feb.closing,
      phantomRows: phantom.length,
    }).toEqual({ opening: 57_000n, reserveReleased: 3_000n, closing: 57_000n + 10_000n + 3_000n, phantomRows: 0 });
  });
});

describe('reserve ledger', () => {
  it('a reserve with reserve_hold_days 0 is never released before it is held (balance never negative)', async () => {
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nSM-H0,Zero Hold,0\n');
    // 15 January 10:00 UTC = 12:00 in Kyiv
    await observe(splitRow('pay-h0', '2025-01-15T10:00:00.000Z', 'Zero Hold', 10_000n, 100n, 500n));
    await project();
    // 15 January 08:00 Kyiv, before the sale: nothing held, nothing released
    const before = await ledgerBalance(fx.db.sql, {
      subMerchantId: 'SM-H0',
      currency: 'EUR',
      account: 'reserve',
      at: new Date('2025-01-15T06:00:00.000Z'),
    });
    const [order] = await fx.db.sql<
      { kind: string }[]
    >`select kind from recon.journal_entries where payment_id = 'pay-h0' order by booked_at, entry_id limit 1`;
    expect({ reserveBalanceBeforeSale: before, firstEntry: order!.kind }).toEqual({
      reserveBalanceBeforeSale: 0n,
      firstEntry: 'settlement',
    });
  });
});
