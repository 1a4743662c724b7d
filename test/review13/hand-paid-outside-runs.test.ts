import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payouts } from '../../projections/payouts';
import { silentLogger } from '../../src/log';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { paidByBankOf } from '../../src/payout-runs/bank-paid';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { BANK, ENV, issue, person, register } from '../payout-runs/fixtures';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Money the bank paid on a reference outside any standing run (by hand, or by a run cancelled once the bank had
 * paid it) is not a standing run's own debit. plan.ts counted max(what standing runs took, what the bank paid),
 * less returns, as if every debit were a standing run's:
 * - paid 400.00 of 1,000.00 by hand, a run for the other 600.00 sent (its debit not imported yet): the next draft
 *   asked the 400.00 again, and the month was paid 1,400.00;
 * - paid by hand and sent back by the creditor's bank, paid again by a run that was sent: the return was taken
 *   off that run's own amount, and a third draft asked the whole reference again.
 * Each run line now records what the bank had paid on its reference when drafted (`bankPaidBefore`).
 */

const TZ = 'Europe/Kyiv';
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const PAYOUTS = 'DE89370400440532013000';
const on = new Date('2026-09-01T09:00:00.000Z');

/** A database of its own with one sub-merchant whose August statement asks 1,000.00 under `ref`. */
function monthAsking(subMerchantId: string, ref: string) {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await register(store, subMerchantId, { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-08', [
      { subMerchantId, currency: 'EUR', reference: ref, amountDue: '100000', held: '0', payable: '100000', holds: [] },
    ]);
  });
  afterAll(async () => db?.drop());
  const paidNow = async () => {
    const deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, bank: BANK };
    await runProjections({ ...deps, projections: [payouts] });
    return paidByBankOf(db.sql, store, BANK.payouts, TZ);
  };
  return {
    draft: async () =>
      draftRun(store, ana, { month: '2026-08', bank: BANK, env: ENV, paidByBank: await paidNow(), now: on }),
    /** a debit of the payouts account naming the reference, or a return of one */
    async bank(amount: bigint, bankRef: string, day: string, o: { isReturn?: boolean } = {}) {
      const d = booked({
        account: PAYOUTS,
        currency: 'EUR',
        amount,
        bookingDate: day,
        bankRef,
        endToEndId: ref,
        remittance: ref,
        ...(o.isReturn ? { direction: 'credit' as const, isReturn: true } : {}),
      });
      await store.append(d.stream, [...d.events]);
    },
    /** approved by another person, its file taken and sent */
    async send(runId: string) {
      await approveRun(store, iryna, runId, { timezone: TZ, now: on });
      await paymentFile(store, ana, runId, { timezone: TZ, now: on });
      await sendRun(store, ana, runId, { timezone: TZ, now: on });
    },
  };
}

describe('a reference paid in part by hand, the rest by a run', () => {
  const REF = 'RS-SM-P-2026-08-EUR';
  const m = monthAsking('SM-P', REF);
  it('the run for the rest sent: a later draft asks nothing', async () => {
    await m.bank(40000n, 'B-1', '2026-09-02');
    const rest = (await m.draft()).run!;
    expect(rest.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '60000']]);
    await m.send(rest.id);
    expect((await m.draft()).run?.lines ?? []).toEqual([]);
  });
});

describe('a payout paid by hand and sent back is paid again once', () => {
  const REF = 'RS-SM-H-2026-08-EUR';
  const m = monthAsking('SM-H', REF);
  it('the run repaying it stands: a later draft asks nothing', async () => {
    await m.bank(100000n, 'B-1', '2026-09-02');
    expect((await m.draft()).run).toBeNull();
    await m.bank(100000n, 'B-1R', '2026-09-04', { isReturn: true });
    const again = (await m.draft()).run!;
    expect(again.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
    await m.send(again.id);
    // the repaying run is sent, its debit not imported yet: nothing is asked a third time
    expect((await m.draft()).run?.lines ?? []).toEqual([]);
    // the run's own transfer booked, then sent back as well: owed again, drafted once more, and only once
    await m.bank(100000n, 'B-2', '2026-09-05');
    expect((await m.draft()).run?.lines ?? []).toEqual([]);
    await m.bank(100000n, 'B-2R', '2026-09-07', { isReturn: true });
    const fourth = (await m.draft()).run!;
    expect(fourth.lines.map((l) => [l.reference, l.amount])).toEqual([[REF, '100000']]);
    await m.send(fourth.id);
    expect((await m.draft()).run?.lines ?? []).toEqual([]);
  });
});
