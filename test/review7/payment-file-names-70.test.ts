import { describe, expect, it } from 'vitest';
import { debtorsFor } from '../../src/payout-runs/debtor';
import { planRun } from '../../src/payout-runs/plan';
import { BANK, NONE_PAID } from '../payout-runs/fixtures';

/**
 * The SEPA credit transfer rulebook and the banks' implementation guides of pain.001.001.09 (EPC, DK) take a
 * debtor's and a creditor's name of at most 70 characters, though the ISO schema allows 140: a legal name of
 * 71 to 140 characters was written whole, and a bank that checks its guide refuses the whole file, every
 * sub-merchant's payout with it. A run drafted now records the names cut at 70 (on a character, never half a
 * surrogate pair); a run drafted before keeps what it recorded, so its file keeps its bytes.
 */

const LONG = 'Товариство з обмеженою відповідальністю «Дуже Довга Назва Магазину Подарунків і Сувенірів» 🎁';

describe('names in the payment file are at most 70 characters', () => {
  it('the creditor: a legal name of more than 70 characters is cut at 70', () => {
    const plan = planRun({
      runs: [
        {
          id: '00000000-0000-4000-8000-000000000001',
          month: '2026-08',
          payouts: [
            { subMerchantId: 'SM-L', currency: 'EUR', reference: 'RS-SM-L-2026-08-EUR', payable: '1000', holds: [] },
          ],
        },
      ],
      before: null,
      payoutRuns: [],
      payees: new Map([
        ['SM-L', { name: 'Long shop', legalName: LONG, payoutAccount: 'FR1420041010050500013M02606', payoutBic: null }],
      ]),
      decisions: new Map(),
      paidByBank: NONE_PAID,
    });
    const name = plan.lines[0]!.creditorName;
    expect([...name].length).toBe(70);
    expect(LONG.startsWith(name)).toBe(true);
  });

  it('the debtor: the account holder named by RECON_PAYOUTS_DEBTOR_NAME is cut at 70', () => {
    const [d] = debtorsFor(['EUR'], BANK, { RECON_PAYOUTS_DEBTOR_NAME: LONG });
    expect([...d!.name].length).toBe(70);
  });
});
