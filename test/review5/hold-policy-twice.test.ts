import { describe, expect, it } from 'vitest';
import { holdPolicyFrom } from '../../src/config/hold-policy';

/**
 * Review 5: RECON_HOLD_POLICY and RECON_HOLD_MATERIALITY decide how much money is held. A type or a currency
 * named twice (`UAH=5000,UAH=1`), or an entry with a second `=` (`fee_mismatch=none=payment`), was taken
 * silently (the last value, or the part before the second `=`): which figure finance meant cannot be known,
 * so the variable is refused, naming it.
 */

const problems = (env: Record<string, string>) => holdPolicyFrom(env).issues;

describe('review5: the hold policy given twice is refused', () => {
  it('a currency twice in RECON_HOLD_MATERIALITY, or the amount for all twice', () => {
    expect(problems({ RECON_HOLD_MATERIALITY: '100,UAH=5000,UAH=1' })).toEqual([
      { variable: 'RECON_HOLD_MATERIALITY', problem: 'UAH given twice' },
    ]);
    expect(problems({ RECON_HOLD_MATERIALITY: '100,UAH=5000,1' })).toEqual([
      { variable: 'RECON_HOLD_MATERIALITY', problem: 'the amount for all currencies given twice' },
    ]);
  });

  it('a type twice in RECON_HOLD_POLICY', () => {
    expect(problems({ RECON_HOLD_POLICY: 'fee_mismatch=none,fee_mismatch=payment' })).toEqual([
      { variable: 'RECON_HOLD_POLICY', problem: 'fee_mismatch given twice' },
    ]);
  });

  it('an entry with a second = is refused, not cut at it', () => {
    expect(problems({ RECON_HOLD_POLICY: 'fee_mismatch=none=payment' })).toEqual([
      { variable: 'RECON_HOLD_POLICY', problem: 'expected TYPE=RULE, got "fee_mismatch=none=payment"' },
    ]);
    expect(problems({ RECON_HOLD_MATERIALITY: 'UAH=5000=1' })).toEqual([
      { variable: 'RECON_HOLD_MATERIALITY', problem: 'expected CUR=n, got "UAH=5000=1"' },
    ]);
  });

  it('each type and currency once: taken as given', () => {
    const r = holdPolicyFrom({ RECON_HOLD_POLICY: 'fee_mismatch=none', RECON_HOLD_MATERIALITY: '50,UAH=5000,EUR=1' });
    expect(r.issues).toEqual([]);
    expect(r.policy.rules.fee_mismatch).toBe('none');
    expect(r.policy.materiality).toEqual({ all: 50n, byCurrency: { UAH: 5000n, EUR: 1n } });
  });
});
