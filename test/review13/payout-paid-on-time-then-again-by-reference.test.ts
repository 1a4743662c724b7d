import { describe, expect, it } from 'vitest';
import { judgePayouts } from '../../src/reconciliation/payouts/judge';
import { type ExpectedPayout, matchPayouts, type PayoutBankLine } from '../../src/reconciliation/payouts/match';

/**
 * A payout paid on time by a transfer that named no reference (matched by payee account and exact amount), then
 * paid a second time, by mistake, days after its due day, by a transfer that does name its reference. The debits
 * naming a reference are matched first whatever their day, so the late one "pays" the payout and the on-time
 * one is the duplicate: the payout reads paid late, a payout_missing from its due day to the second debit (the
 * bank paid it on time), and the money to recover is put on the first transfer instead of the second.
 *
 * Fixed: after both passes (reference first, which keeps a reference-named debit from being taken by an earlier
 * payee match of another payout of the same payee and amount), a payout's debits count in day order.
 */

const payout: ExpectedPayout = {
  reference: 'RS-SM1-2026-10-EUR',
  subMerchantId: 'SM1',
  currency: 'EUR',
  amount: 1_000_00n,
  issuedOn: '2026-11-02',
  payeeAccount: 'UA213223130000026007233566001',
  payeeName: 'Shop One',
  eventId: 'ev-payout',
};

const debit = (id: string, over: Partial<PayoutBankLine>): PayoutBankLine => ({
  id,
  accountId: 'PAYOUTS',
  currency: 'EUR',
  direction: 'debit',
  amount: 1_000_00n,
  bookingDate: '2026-11-03',
  endToEndId: null,
  remittance: null,
  counterpartyName: 'Shop One',
  counterpartyAccount: 'UA213223130000026007233566001',
  isReturn: false,
  ...over,
});

describe('a payout paid on time without its reference, then again late with it', () => {
  it('the on-time debit pays it; the late one is the duplicate; nothing was missing', () => {
    const lines = [
      debit('on-time', { bookingDate: '2026-11-03' }),
      debit('again', { bookingDate: '2026-11-12', endToEndId: 'RS-SM1-2026-10-EUR' }),
    ];
    const m = matchPayouts([payout], lines, { windowDays: 10 });
    const j = judgePayouts([payout], lines, m.lines, { today: '2026-11-13', dueDays: 5 });
    expect(m.lines.map((l) => [l.lineId, l.role])).toEqual([
      ['on-time', 'paid'],
      ['again', 'duplicate'],
    ]);
    expect(j.payouts[0]!.paidOn).toBe('2026-11-03');
    expect(j.discrepancies.map((d) => [d.type, d.key])).toEqual([['payout_duplicate', 'bank:again']]);
  });
});
