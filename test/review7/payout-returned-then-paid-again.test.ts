import { describe, expect, it } from 'vitest';
import { judgePayouts } from '../../src/reconciliation/payouts/judge';
import { type ExpectedPayout, matchPayouts, type PayoutBankLine } from '../../src/reconciliation/payouts/match';

// A payout the beneficiary's bank sent back (a closed account), paid again once the sub-merchant gave a new
// account: the sub-merchant received the money once. Before, the second debit was read as a duplicate
// ("paid twice: money to recover") and the payout stayed "returned by the bank".

const payout: ExpectedPayout = {
  reference: 'RS-SM1-2026-10-EUR',
  subMerchantId: 'SM1',
  currency: 'EUR',
  amount: 100_00n,
  issuedOn: '2026-11-02',
  payeeAccount: 'DE89370400440532013000',
  payeeName: 'Shop One',
  eventId: 'ev-statement',
};

const line = (id: string, over: Partial<PayoutBankLine>): PayoutBankLine => ({
  id,
  accountId: 'PAYOUTS',
  currency: 'EUR',
  direction: 'debit',
  amount: 100_00n,
  bookingDate: '2026-11-03',
  endToEndId: 'RS-SM1-2026-10-EUR',
  remittance: null,
  counterpartyName: null,
  counterpartyAccount: 'DE89370400440532013000',
  isReturn: false,
  ...over,
});

const judge = (lines: PayoutBankLine[]) => {
  const m = matchPayouts([payout], lines, { windowDays: 10 });
  return { m, j: judgePayouts([payout], lines, m.lines, { today: '2026-11-12', dueDays: 5 }) };
};

const first = line('l1-debit', {});
const back = line('l2-return', { direction: 'credit', isReturn: true, bookingDate: '2026-11-05' });

describe('a payout returned by the bank and paid again', () => {
  it('by its reference: paid once, no duplicate to recover', () => {
    const again = line('l3-again', { bookingDate: '2026-11-06', counterpartyAccount: 'FR7630006000011234567890189' });
    const { m, j } = judge([first, back, again]);
    expect(m.lines.map((l) => [l.lineId, l.role])).toEqual([
      ['l1-debit', 'paid'],
      ['l2-return', 'returned'],
      ['l3-again', 'paid'],
    ]);
    expect(j.payouts[0]).toMatchObject({ status: 'paid', paidOut: 100_00n, returned: 100_00n, duplicated: 0n });
    expect(j.discrepancies.map((d) => d.type)).toEqual(['payout_returned']);
  });

  it('by payee and exact amount (no reference on the new transfer): paid once', () => {
    const again = line('l3-again', { bookingDate: '2026-11-06', endToEndId: null });
    const { j } = judge([first, back, again]);
    expect(j.payouts[0]).toMatchObject({ status: 'paid', paidOut: 100_00n, duplicated: 0n });
    expect(j.discrepancies.map((d) => d.type)).toEqual(['payout_returned']);
  });

  it('a second debit before the return came back is still a duplicate', () => {
    const twice = line('l0-twice', { bookingDate: '2026-11-04' });
    const { j } = judge([first, twice, back]);
    expect(j.payouts[0]!.duplicated).toBe(100_00n);
    expect(j.discrepancies.map((d) => d.type).sort()).toEqual(['payout_duplicate', 'payout_returned']);
  });
});

describe('a return the bank took back (MT940 RC, camt RvslInd on a debit)', () => {
  it('the return counts for nothing: the payout is paid, and not drafted again', () => {
    const undone = line('l3-undo', { bookingDate: '2026-11-06', isReturn: true, endToEndId: null });
    const { m, j } = judge([first, back, undone]);
    expect(m.lines.map((l) => [l.lineId, l.role])).toEqual([['l1-debit', 'paid']]);
    expect(j.payouts[0]).toMatchObject({ status: 'paid', paidOut: 100_00n, returned: 0n });
    expect(j.discrepancies).toEqual([]);
  });
});
