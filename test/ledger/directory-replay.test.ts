import { describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { rebuildProjection, runProjections } from '../../src/projector/runner';
import { importCsv, useJournalStore } from './journal-support';
import { waitVisible } from './visible';

/**
 * The journal's in-batch directory (`register()` in projections/journal.ts) once forgot that another
 * sub-merchant also held a name when the name's holder was renamed, so the hold days of a reserve depended
 * on where batch boundaries fell: the live build (one append per batch) and a rebuild from zero
 * (everything in one batch) disagreed.
 */

const POS = 'pos-b';
const fx = useJournalStore();

async function releases(): Promise<Array<{ release_on: string; hold_days: number }>> {
  return fx.db.sql<{ release_on: string; hold_days: number }[]>`
    select to_char(release_on, 'YYYY-MM-DD') as release_on, hold_days from recon.journal_entries where payment_id = 'pay-b' and kind = 'settlement'`;
}

describe('journal: replay from zero with directory changes', () => {
  it('gives the same reserve release dates as the live build when a name passes from one sub-merchant to another', async () => {
    // two imports (each valid on its own): "Shop" is first A-1's, later also B-2's (a re-registration under a new id)
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nA-1,Shop,10\n');
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nB-2,Shop,30\n');
    // A-1 takes another name: "Shop" is now only B-2's
    await importCsv(fx.store, 'sub_merchant_id,name,reserve_hold_days\nA-1,Shop Old,10\n');
    const r: NormalizedRegisterRecord = {
      projectId: POS,
      orderId: 'o-b',
      paymentId: 'pay-b',
      method: 'purchase',
      status: 'success',
      dateTime: '2025-01-10T10:00:00.000Z',
      currency: 'EUR',
      amount: null,
      originalAmount: '10000',
      customerFee: '0',
      merchantFee: '0',
      receiverName: 'Shop',
      receiverAmount: '10000',
      receiverFee: '0',
      reserveAmount: '500',
      cardMask: null,
      payway: 'card',
      other: {},
    };
    const k = registerObserved(POS, JSON.stringify(r), r, {
      source: 'register',
      reportId: 'rep',
      window: { from: '2025-01-01', to: '2025-01-31' },
      observedAt: '2025-02-01T00:00:00.000Z',
    });
    await fx.store.append(k.stream, [k.event]);
    await waitVisible(fx.db.sql, fx.store);

    // live: one append per batch
    await runProjections(fx.deps, { batchSize: 1 });
    const live = await releases();
    // replay from zero: a rebuild reads everything in one batch
    await rebuildProjection(fx.deps, 'journal', { batchSize: 1000 });
    const rebuilt = await releases();
    expect(live).toEqual([{ release_on: '2025-02-09', hold_days: 30 }]); // B-2's 30 days
    expect(rebuilt).toEqual(live);
  });
});
