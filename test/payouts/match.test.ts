import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { judgePayouts } from '../../src/reconciliation/payouts/judge';
import {
  type ExpectedPayout,
  matchPayouts,
  type PayoutBankLine,
  referencesIn,
} from '../../src/reconciliation/payouts/match';

const payout = (over: Partial<ExpectedPayout> & { reference: string }): ExpectedPayout => ({
  subMerchantId: 'SM1',
  currency: 'EUR',
  amount: 100_00n,
  issuedOn: '2026-11-02',
  payeeAccount: 'UA213223130000026007233566001',
  payeeName: 'Shop One',
  eventId: `ev-${over.reference}`,
  ...over,
});

const debit = (id: string, over: Partial<PayoutBankLine> = {}): PayoutBankLine => ({
  id,
  accountId: 'PAYOUTS',
  currency: 'EUR',
  direction: 'debit',
  amount: 100_00n,
  bookingDate: '2026-11-03',
  endToEndId: null,
  remittance: null,
  counterpartyName: null,
  counterpartyAccount: null,
  isReturn: false,
  ...over,
});

const judge = (expected: ExpectedPayout[], lines: PayoutBankLine[], today = '2026-11-04') => {
  const m = matchPayouts(expected, lines, { windowDays: 10 });
  return { m, j: judgePayouts(expected, lines, m.lines, { today, dueDays: 5 }) };
};

describe('payout references in bank text', () => {
  it('finds a reference as a whole word only', () => {
    const refs = new Set(['RS-SM1-2026-10-EUR', 'RS-SM1-2026-10-EUR-2']);
    expect(referencesIn('Payout rs-sm1-2026-10-eur-2 thanks', refs)).toEqual(['RS-SM1-2026-10-EUR-2']);
    expect(referencesIn('RS-SM1-2026-10-EUR', refs)).toEqual(['RS-SM1-2026-10-EUR']);
    expect(referencesIn('XRS-SM1-2026-10-EUR', refs)).toEqual([]);
  });
});

describe('matching payout debits to statements', () => {
  const a = payout({ reference: 'RS-SM1-2026-10-EUR' });

  it('pays by reference in the remittance text, then by payee account and exact amount', () => {
    const b = payout({ reference: 'RS-SM2-2026-10-EUR', subMerchantId: 'SM2', payeeAccount: 'DE89370400440532013000' });
    const { j } = judge(
      [a, b],
      [
        debit('l1', { remittance: 'Statement RS-SM1-2026-10-EUR' }),
        debit('l2', { counterpartyAccount: 'DE89 3704 0044 0532 0130 00' }),
      ],
    );
    expect(j.payouts.map((p) => [p.payout.reference, p.status, p.paidOut])).toEqual([
      ['RS-SM1-2026-10-EUR', 'paid', 100_00n],
      ['RS-SM2-2026-10-EUR', 'paid', 100_00n],
    ]);
    expect(j.discrepancies).toEqual([]);
  });

  it('accepts payment in parts: partial before the due day, an amount mismatch after it', () => {
    const lines = [debit('l1', { amount: 40_00n, endToEndId: 'RS-SM1-2026-10-EUR' })];
    expect(judge([a], lines).j.payouts[0]!.status).toBe('partial');
    expect(judge([a], lines).j.discrepancies).toEqual([]);
    const late = judge([a], lines, '2026-11-08').j;
    expect(late.discrepancies.map((d) => d.type)).toEqual(['payout_amount_mismatch']);
    const whole = judge([a], [...lines, debit('l2', { amount: 60_00n, endToEndId: 'RS-SM1-2026-10-EUR' })]).j;
    expect(whole.payouts[0]).toMatchObject({ status: 'paid', paidOut: 100_00n, lineIds: ['l1', 'l2'] });
  });

  it('raises payout_missing after the due day, resolved when paid late', () => {
    expect(judge([a], [], '2026-11-07').j.payouts[0]!.status).toBe('expected');
    const missing = judge([a], [], '2026-11-08').j;
    expect(missing.payouts[0]!.status).toBe('missing');
    expect(missing.discrepancies).toMatchObject([{ type: 'payout_missing', status: 'open', occurredOn: '2026-11-07' }]);
    const late = judge([a], [debit('l1', { bookingDate: '2026-11-09', remittance: a.reference })], '2026-11-09').j;
    expect(late.discrepancies).toMatchObject([
      { type: 'payout_missing', status: 'resolved', resolvedOn: '2026-11-09' },
    ]);
  });

  it('calls a second debit for a paid statement a duplicate, and a debit that pays nothing unexpected', () => {
    const { j } = judge(
      [a],
      [
        debit('l1', { remittance: a.reference }),
        debit('l2', { remittance: a.reference, bookingDate: '2026-11-04' }),
        debit('l3', { counterpartyName: 'Somebody Else', amount: 12_34n }),
      ],
    );
    expect(j.payouts[0]).toMatchObject({ status: 'duplicated', paidOut: 100_00n, duplicated: 100_00n });
    expect(j.discrepancies.map((d) => [d.type, d.line?.id])).toEqual([
      ['payout_unexpected', 'l3'],
      ['payout_duplicate', 'l2'],
    ]);
  });

  it('pays more than stated: an amount mismatch', () => {
    const { j } = judge([a], [debit('l1', { amount: 101_00n, remittance: a.reference })]);
    expect(j.discrepancies.map((d) => d.type)).toEqual(['payout_amount_mismatch']);
  });

  it('a return gives the money back: status returned, payout_returned, found by payee and amount', () => {
    const { j } = judge(
      [a],
      [
        debit('l1', { counterpartyName: ' shop  one ' }),
        debit('r1', { direction: 'credit', isReturn: true, bookingDate: '2026-11-05', counterpartyName: 'Shop One' }),
      ],
    );
    expect(j.payouts[0]).toMatchObject({ status: 'returned', paidOut: 0n, returned: 100_00n });
    expect(j.discrepancies.map((d) => [d.type, d.values.reference])).toEqual([['payout_returned', a.reference]]);
  });

  it('does not match by payee outside the window or in another currency', () => {
    const { j } = judge(
      [a],
      [
        debit('l1', { counterpartyName: 'Shop One', bookingDate: '2026-11-13' }),
        debit('l2', { counterpartyName: 'Shop One', currency: 'USD' }),
      ],
    );
    expect(j.payouts[0]!.status).toBe('expected');
    expect(j.discrepancies.map((d) => d.type)).toEqual(['payout_unexpected', 'payout_unexpected']);
  });
});

describe('matching is a function of the events, not of their order (property)', () => {
  const arbPayouts = fc.uniqueArray(
    fc.record({
      sm: fc.constantFrom('SM1', 'SM2', 'SM3'),
      month: fc.constantFrom('2026-09', '2026-10'),
      amount: fc.bigInt({ min: 1n, max: 500n }),
      issuedOn: fc.constantFrom('2026-10-02', '2026-11-02'),
    }),
    { selector: (p) => `${p.sm}/${p.month}`, maxLength: 6 },
  );
  const arbLines = fc.array(
    fc.record({
      kind: fc.constantFrom('ref', 'payee', 'noise', 'return'),
      sm: fc.constantFrom('SM1', 'SM2', 'SM3'),
      month: fc.constantFrom('2026-09', '2026-10'),
      amount: fc.bigInt({ min: 1n, max: 500n }),
      day: fc.integer({ min: 1, max: 20 }),
    }),
    { maxLength: 14 },
  );

  it('any permutation gives the same matches; no bank line claimed twice; sums exact', () => {
    fc.assert(
      fc.property(arbPayouts, arbLines, fc.integer({ min: 0, max: 1000 }), (ps, ls, seed) => {
        const expected = ps.map((p) =>
          payout({
            reference: `RS-${p.sm}-${p.month}-EUR`,
            subMerchantId: p.sm,
            amount: p.amount,
            issuedOn: p.issuedOn,
            payeeAccount: null,
            payeeName: `Shop ${p.sm}`,
          }),
        );
        const lines = ls.map((l, i) =>
          debit(`line-${String(i).padStart(2, '0')}`, {
            amount: l.amount,
            bookingDate: `2026-11-${String(l.day).padStart(2, '0')}`,
            remittance: l.kind === 'ref' ? `RS-${l.sm}-${l.month}-EUR` : null,
            counterpartyName: l.kind === 'noise' ? 'Nobody' : `Shop ${l.sm}`,
            ...(l.kind === 'return' ? { direction: 'credit' as const, isReturn: true } : {}),
          }),
        );
        const shuffle = <T>(xs: T[]) => {
          const out = [...xs];
          let s = seed;
          for (let i = out.length - 1; i > 0; i--) {
            s = (s * 1103515245 + 12345) % 2147483648;
            const j = s % (i + 1);
            [out[i], out[j]] = [out[j]!, out[i]!];
          }
          return out;
        };
        const one = matchPayouts(expected, lines, { windowDays: 10 });
        const two = matchPayouts(shuffle(expected), shuffle(lines), { windowDays: 10 });
        expect(two).toEqual(one);
        const ids = one.lines.map((m) => m.lineId);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBe(lines.length);
        const j = judgePayouts(expected, lines, one.lines, { today: '2026-11-30', dueDays: 5 });
        for (const s of j.payouts) {
          const own = one.lines.filter((m) => m.reference === s.payout.reference);
          const sum = (role: string) =>
            own.filter((m) => m.role === role).reduce((t, m) => t + lines.find((l) => l.id === m.lineId)!.amount, 0n);
          expect(s.paidOut).toBe(sum('paid') - sum('returned'));
        }
      }),
      { numRuns: 300 },
    );
  });
});
