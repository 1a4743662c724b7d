import { describe, expect, it } from 'vitest';
import { acceptDiscrepancy, listDiscrepancies } from '../../src/reconciliation/discrepancy-queries';
import { useTestStore } from '../support/db';
import {
  appendAll,
  booked,
  issued,
  PAYOUTS_ACCOUNT,
  payee,
  project,
  rebuild,
  SETTLEMENT_ACCOUNT,
  TZ,
  views,
} from './support';

const SM1_IBAN = 'DE89370400440532013000';

describe('payouts projection: expected payouts, bank lines, statuses and payout discrepancies', () => {
  const fx = useTestStore();

  it('matches by reference and by payee, pays in parts, and reports every payout discrepancy', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One', SM1_IBAN),
      payee('SM2', 'Shop Two'),
      payee('SM3', 'Shop Three'),
      payee('SM4', 'Shop Four'),
      issued('2026-10', '2026-11-02T08:00:00Z', [
        { subMerchantId: 'SM1', reference: 'RS-SM1-2026-10-EUR', payable: 1000_00n },
        { subMerchantId: 'SM2', reference: 'RS-SM2-2026-10-EUR', payable: 250_00n },
        { subMerchantId: 'SM3', reference: 'RS-SM3-2026-10-EUR', payable: 75_00n },
        { subMerchantId: 'SM4', reference: 'RS-SM4-2026-10-EUR', payable: 40_00n },
        // an unregistered receiver is never expected to be paid
        { subMerchantId: 'receiver:Nobody', reference: 'RS-H0000000000-2026-10-EUR', payable: 10_00n },
      ]),
      // SM1 in two parts, the second by payee account and... the reference again
      booked({
        bankRef: 'b1',
        amount: 600_00n,
        bookingDate: '2026-11-03',
        remittance: 'Payout RS-SM1-2026-10-EUR part 1',
      }),
      booked({ bankRef: 'b2', amount: 400_00n, bookingDate: '2026-11-04', endToEndId: 'RS-SM1-2026-10-EUR' }),
      // SM2 by name and exact amount, then paid again: a duplicate
      booked({ bankRef: 'b3', amount: 250_00n, bookingDate: '2026-11-03', counterpartyName: 'SHOP TWO' }),
      booked({ bankRef: 'b4', amount: 250_00n, bookingDate: '2026-11-05', remittance: 'RS-SM2-2026-10-EUR' }),
      // SM3 paid and returned
      booked({ bankRef: 'b5', amount: 75_00n, bookingDate: '2026-11-03', remittance: 'RS-SM3-2026-10-EUR' }),
      booked({
        bankRef: 'b6',
        amount: 75_00n,
        bookingDate: '2026-11-06',
        direction: 'credit',
        isReturn: true,
        remittance: 'RETURN RS-SM3-2026-10-EUR AC04 account closed',
      }),
      // a debit that pays no statement; a debit on the settlement account is not a payout
      booked({ bankRef: 'b7', amount: 12_34n, bookingDate: '2026-11-04', counterpartyName: 'Unknown Ltd' }),
      booked({ bankRef: 'b8', amount: 99_00n, bookingDate: '2026-11-04', account: SETTLEMENT_ACCOUNT }),
      // SM4 is never paid: the clock passes its due day (issue + 5 days) with a later booking
      booked({ bankRef: 'b9', amount: 1_00n, bookingDate: '2026-11-12', counterpartyName: 'Bank fee' }),
    ]);
    await project(fx.db.sql, fx.store);
    const v = await views(fx.db.sql);
    expect(v.payouts.map((p) => [p.reference, p.status, p.amount, p.paid_out, p.returned])).toEqual([
      ['RS-SM1-2026-10-EUR', 'paid', 1000_00n, 1000_00n, 0n],
      ['RS-SM2-2026-10-EUR', 'duplicated', 250_00n, 250_00n, 0n],
      ['RS-SM3-2026-10-EUR', 'returned', 75_00n, 0n, 75_00n],
      ['RS-SM4-2026-10-EUR', 'missing', 40_00n, 0n, 0n],
    ]);
    expect(v.lines).toHaveLength(8); // the settlement account's debit is not a payout line
    const types = v.discrepancies.map((d) => [d.type, d.sub_merchant_id, d.status]).sort();
    expect(types).toEqual([
      ['payout_duplicate', 'SM2', 'open'],
      ['payout_missing', 'SM4', 'open'],
      ['payout_returned', 'SM3', 'open'],
      ['payout_unexpected', null, 'open'],
      ['payout_unexpected', null, 'open'],
    ]);

    // the auditors' list (CLI, API, nightly report) reads them beside the reconciliation's
    const listed = await listDiscrepancies(fx.db.sql, { timezone: TZ, type: 'payout_missing' });
    expect(listed.ok && listed.value.map((d) => [d.type, d.sub_merchant_id, d.currency])).toEqual([
      ['payout_missing', 'SM4', 'EUR'],
    ]);

    // an acceptance of a payout discrepancy needs no decision and is kept by the projection
    const missing = v.discrepancies.find((d) => d.type === 'payout_missing')!;
    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: missing.id, note: 'paid by cheque', by: 'Olena', at: new Date('2026-11-13T10:00:00Z') },
    );
    expect(accepted.ok).toBe(true);
    await project(fx.db.sql, fx.store);
    const [after] = await fx.db
      .sql`select status, accepted_by from recon.payout_discrepancies where id = ${missing.id}`;
    expect(after).toEqual({ status: 'accepted', accepted_by: 'Olena' });
  });

  it('resolves payout_missing when the payment comes late, and amount differences', async () => {
    await appendAll(fx.store, [
      booked({ bankRef: 'c1', amount: 30_00n, bookingDate: '2026-11-13', remittance: 'RS-SM4-2026-10-EUR' }),
    ]);
    await project(fx.db.sql, fx.store);
    const v = await views(fx.db.sql);
    expect(v.payouts.find((p) => p.reference === 'RS-SM4-2026-10-EUR')).toMatchObject({
      status: 'partial',
      paid_out: 30_00n,
    });
    const sm4 = v.discrepancies.filter((d) => d.sub_merchant_id === 'SM4').map((d) => [d.type, d.status]);
    // accepted before it was paid: the acceptance stands; a part only after the due day is a difference
    expect(sm4.sort()).toEqual([
      ['payout_amount_mismatch', 'open'],
      ['payout_missing', 'accepted'],
    ]);
  });

  it('replay equals live: rebuilt from zero in one batch and in batches of one event', async () => {
    const live = await views(fx.db.sql);
    await rebuild(fx.db.sql, fx.store, 1000);
    expect(await views(fx.db.sql)).toEqual(live);
    await rebuild(fx.db.sql, fx.store, 1);
    expect(await views(fx.db.sql)).toEqual(live);
    expect(live.lines.every((l) => l.account_id === PAYOUTS_ACCOUNT)).toBe(true);
  });
});
