import { describe, expect, it } from 'vitest';
import { stateOf } from '../../src/exceptions/state';

/**
 * Review 10: an accepted discrepancy with more in doubt since says why it needs a person again, and what the
 * statements hold. For a settlement or payout discrepancy (a `settlement_short` written off, whose day's due grew
 * since: 1.00 written off, 2.00 short now) it said "the statements hold the 1.00 EUR above it": no statement holds
 * anything for the bank's side (holds.ts reads discrepancies of a payment; their hold rule is none), so the person
 * was told money of a sub-merchant's was held that was not. A PSP one still says what is held.
 */

const accepted = (type: string, decision: 'write_off' | 'pay' | 'withhold') =>
  stateOf(
    {
      type,
      status: 'accepted',
      updated_by_event: null,
      currency: 'EUR',
      since_accepted: { amount_in_doubt: '100', amount_in_doubt_now: '200' },
    },
    { work: 'open', acceptance: '00000000-0000-5000-8000-0000000000b1', evidence: null, decision },
  );

describe('review10: more in doubt since a decision on the bank side', () => {
  it('a settlement_short written off, 2.00 short now: nothing is said held', () => {
    const { state, why } = accepted('settlement_short', 'write_off');
    expect(state).toBe('accepted');
    expect(why).toBe(
      'more in doubt than when it was accepted (2.00 EUR now, 1.00 EUR then): no statement holds money for it (the bank side); reopen it to decide again',
    );
  });

  it('a payout_amount_mismatch withheld: nothing is said held either', () => {
    expect(accepted('payout_amount_mismatch', 'withhold').why).toMatch(/: no statement holds money for it/);
  });

  it('a fee_mismatch paid: the statements hold the excess, as before', () => {
    expect(accepted('fee_mismatch', 'pay').why).toMatch(/: the statements hold the 1\.00 EUR above it;/);
  });
});
