import { describe, expect, it } from 'vitest';
import { debtorsFor } from '../../src/payout-runs/debtor';
import { planRun } from '../../src/payout-runs/plan';
import { BANK, NONE_PAID } from '../payout-runs/fixtures';

/**
 * A shop named with an emoji ("Flowers 🌸"): no bank's character set for credit transfers has pictographs or
 * characters beyond the Basic Multilingual Plane (the SEPA set is Latin; Cyrillic and the rest of the plane are
 * taken by the banks that take them), and a bank refuses the whole file for one of them, every sub-merchant's
 * payout with it. A run drafted now records the name without them (spaces collapsed); a name of nothing else is
 * left out as `no_name`, listed, never sent.
 */

const planFor = (name: string, legalName: string | null) =>
  planRun({
    runs: [
      {
        id: '00000000-0000-4000-8000-000000000002',
        month: '2026-08',
        payouts: [
          { subMerchantId: 'SM-E', currency: 'EUR', reference: 'RS-SM-E-2026-08-EUR', payable: '1000', holds: [] },
        ],
      },
    ],
    before: null,
    payoutRuns: [],
    payees: new Map([['SM-E', { name, legalName, payoutAccount: 'FR1420041010050500013M02606', payoutBic: null }]]),
    decisions: new Map(),
    paidByBank: NONE_PAID,
  });

describe('pictographs are not written into the payment file', () => {
  it('a shop name with emoji is recorded without them', () => {
    expect(planFor('Flowers 🌸 & Co ☀️ 𝔉ancy', null).lines[0]!.creditorName).toBe('Flowers & Co ancy');
  });

  it('Cyrillic and Latin accents stay', () => {
    expect(planFor('x', 'ТОВ «Квіти» Müller').lines[0]!.creditorName).toBe('ТОВ «Квіти» Müller');
  });

  it('a name of emoji alone: the legal name is used, else the line is left out as no_name', () => {
    expect(planFor('🌸🌸', 'Flowers Ltd').lines[0]!.creditorName).toBe('Flowers Ltd');
    const p = planFor('🌸🌸', null);
    expect(p.lines).toEqual([]);
    expect(p.leftOut.map((l) => l.reason)).toEqual(['no_name']);
  });

  it('a debtor name of emoji alone is refused naming the variable', () => {
    expect(() => debtorsFor(['EUR'], BANK, { RECON_PAYOUTS_DEBTOR_NAME: '🏦' })).toThrow(/RECON_PAYOUTS_DEBTOR_NAME/);
  });
});
