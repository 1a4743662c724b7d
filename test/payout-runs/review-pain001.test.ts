import { describe, expect, it } from 'vitest';
import { type PaymentOrder, pain001 } from '../../src/payout-runs/pain001';
import { planRun } from '../../src/payout-runs/plan';
import { texts, wasmErrors } from './validate';

/**
 * A hostile review of the payment file: names that would display otherwise than they read (bidirectional
 * overrides, C1 controls), an astral character at the 140th place, amounts past 2^53 and past the 18 digits the
 * schema allows, an IBAN with wrong check digits.
 */

const order = (lines: PaymentOrder['lines']): PaymentOrder => ({
  messageId: 'PR-2026-10-1',
  createdAt: '2026-11-27T10:15:30.123Z',
  executionDate: '2026-11-30',
  debtors: [
    { currency: 'EUR', account: 'DE89370400440532013000', name: 'Marketplace GmbH', bic: 'COBADEFFXXX' },
    { currency: 'KWD', account: 'KW81CBKU0000000000001234560101', name: 'Marketplace GmbH', bic: null },
  ],
  lines,
});
const line = (o: Partial<PaymentOrder['lines'][number]>): PaymentOrder['lines'][number] => ({
  currency: 'EUR',
  amount: 100n,
  reference: 'RS-SM-A-2026-10-EUR',
  creditorName: 'A shop',
  creditorAccount: 'FR1420041010050500013M02606',
  ...o,
});
const names = (xml: string) =>
  texts(xml)
    .filter((t) => t.path.endsWith('Cdtr/Nm'))
    .map((t) => t.text);

describe('review: names as the bank displays them', () => {
  it('a right-to-left override, isolates, marks and C1 controls become spaces (the name reads as it shows)', () => {
    // "Evil\u202Egnp.exe" shows as "Evilexe.png" in a bank's portal
    const xml = pain001(order([line({ creditorName: 'Evil\u202Egnp.exe \u2066x\u2069 \u200Fy \u0085z\u009B' })]));
    expect(names(xml)).toEqual(['Evil gnp.exe x y z']);
    expect(xml).not.toMatch(/[\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });

  it('an astral character at the 140th place is kept whole, never half a surrogate pair; the file is valid', async () => {
    const xml = pain001(order([line({ creditorName: `${'A'.repeat(139)}😀😀 tail &` })]));
    expect(names(xml)).toEqual([`${'A'.repeat(139)}😀`]);
    expect(await wasmErrors(xml)).toEqual([]);
  });
});

describe('review: amounts', () => {
  it('past 2^53: exact in the file and in the control sum (2 and 3 decimals)', async () => {
    const xml = pain001(
      order([
        line({ amount: 9007199254740993n }),
        line({ amount: 9007199254740993n, currency: 'KWD', reference: 'RS-SM-A-2026-10-KWD' }),
      ]),
    );
    const t = texts(xml);
    expect(t.filter((x) => x.path.endsWith('InstdAmt')).map((x) => x.text)).toEqual([
      '90071992547409.93',
      '90071992547409.930',
    ]);
    expect(t.filter((x) => x.path.endsWith('GrpHdr/CtrlSum')).map((x) => x.text)).toEqual(['180143985094819.860']);
    expect(await wasmErrors(xml)).toEqual([]);
  });

  it('more than the 18 digits an amount or a control sum may have: refused, never a file the bank rejects', async () => {
    // 10000000000000000.00 has 17 digits as a decimal value (trailing zeros do not count): valid
    expect(await wasmErrors(pain001(order([line({ amount: 10n ** 18n })])))).toEqual([]);
    expect(() => pain001(order([line({ amount: 10n ** 18n + 1n })]))).toThrow(/RS-SM-A-2026-10-EUR.*18 digits/);
    const many = Array.from({ length: 2 }, (_, i) => line({ amount: 6n * 10n ** 17n + 1n, reference: `RS-${i}` }));
    expect(() => pain001(order(many))).toThrow(/control sum.*18 digits/);
  });

  it('a run leaves such an amount out, listed, rather than draft what cannot be filed', () => {
    const plan = planRun({
      runs: [
        {
          id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
          month: '2026-10',
          payouts: [
            {
              subMerchantId: 'SM-A',
              currency: 'EUR',
              reference: 'RS-1',
              payable: (10n ** 18n + 1n).toString(),
              holds: [],
            },
          ],
        },
      ],
      before: null,
      payoutRuns: [],
      payees: new Map([['SM-A', { name: 'A', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]),
      decisions: new Map(),
      paidByBank: new Map(),
    });
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => l.reason)).toEqual(['not_fileable']);
  });
});

describe('review: accounts', () => {
  it('an IBAN with wrong check digits (a typo) is left out, listed, never sent as another kind of account', () => {
    const plan = planRun({
      runs: [
        {
          id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
          month: '2026-10',
          payouts: [{ subMerchantId: 'SM-A', currency: 'EUR', reference: 'RS-1', payable: '100', holds: [] }],
        },
      ],
      before: null,
      payoutRuns: [],
      payees: new Map([['SM-A', { name: 'A', legalName: null, payoutAccount: 'DE88370400440532013000' }]]),
      decisions: new Map(),
      paidByBank: new Map(),
    });
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => l.reason)).toEqual(['bad_iban']);
  });
});
