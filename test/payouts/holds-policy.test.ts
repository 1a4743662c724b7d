import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY, DEFAULT_HOLD_RULES, holdPolicyFrom, holdingTypesOf } from '../../src/config/hold-policy';
import { formatConfigIssues, loadConfig } from '../../src/config/env';
import { claimOf, type DiscRow, excessClaimOf, excessOf } from '../../src/export/payouts/holds';
import { ORDER_DISCREPANCY_TYPES, ORDER_HOLD_TYPES } from '../../src/reconciliation/discrepancies/order-types';
import { DISCREPANCY_TYPES, HOLDING_TYPES } from '../../src/reconciliation/discrepancy-types';
import { readFileSync } from 'node:fs';

/**
 * The hold policy (issue 25): a rule for every discrepancy type, the one table the docs show; what puts the
 * amount or owner in doubt holds the payment, a fee that differs holds the difference at most and nothing below
 * the materiality; both are configurable and a bad value is refused naming its variable.
 */

const row = (type: string, values: Record<string, unknown>, currency = 'USD'): DiscRow => ({
  id: '00000000-0000-5000-8000-000000000001',
  type,
  status: 'open',
  detected_by_event: null,
  resolved_by_event: null,
  pos_id: 'pos',
  payment_id: 'pay',
  method: 'purchase',
  receiver_name: 'Alpha Shop',
  order_id: 'order-1',
  currency,
  occurred_at: new Date('2026-10-05T10:00:00Z'),
  values,
});

describe('the hold policy', () => {
  it('names every discrepancy type, and the holding types follow it', () => {
    expect(Object.keys(DEFAULT_HOLD_RULES).sort()).toEqual([...DISCREPANCY_TYPES].sort());
    expect([...HOLDING_TYPES].sort()).toEqual(holdingTypesOf(DEFAULT_HOLD_POLICY));
    const orderHolding = ORDER_DISCREPANCY_TYPES.filter((t) => DEFAULT_HOLD_RULES[t] !== 'none');
    expect([...ORDER_HOLD_TYPES].sort()).toEqual([...orderHolding].sort());
    for (const t of [
      'currency_mismatch',
      'missing_in_period',
      'missing_in_report',
      'split_mismatch',
      'amount_mismatch',
      'unknown_sub_merchant',
    ])
      expect(DEFAULT_HOLD_RULES[t], t).toBe('payment');
    for (const t of ['fee_above_contract', 'fee_below_contract', 'fee_mismatch'])
      expect(DEFAULT_HOLD_RULES[t], t).toBe('difference');
  });

  it('is the table docs/discrepancies.md shows', () => {
    const doc = readFileSync('docs/discrepancies.md', 'utf8');
    // the one table of types (written from the registry): its holds column is the rule, or no
    for (const [type, rule] of Object.entries(DEFAULT_HOLD_RULES))
      expect(doc, type).toMatch(new RegExp(`\\| \`${type}\` \\|[^\\n]*\\| ${rule === 'none' ? 'no' : rule} \\|`));
  });

  it('holds a fee 0.01 under the contract not at all, a material one by the difference only', () => {
    const cent = row('fee_below_contract', { difference: '-1', charged_fee: '8699', expected_fee: '8700' });
    expect(claimOf(cent, DEFAULT_HOLD_POLICY)).toBeNull();
    const five = claimOf(row('fee_above_contract', { difference: '500' }), DEFAULT_HOLD_POLICY);
    expect(five).toMatchObject({ atMost: 500n, currency: 'USD', paymentId: 'pay', orderId: 'order-1' });
    const currency = claimOf(row('currency_mismatch', {}), DEFAULT_HOLD_POLICY);
    expect(currency).toMatchObject({ atMost: null, currency: null });
    expect(claimOf(row('missing_webhook', {}), DEFAULT_HOLD_POLICY)).toBeNull();
  });

  it('after a release holds only what is in doubt beyond the amount accepted, by the rule of its type', () => {
    const accepted = (type: string, then: bigint | null, now: bigint | null, values = {}) => ({
      ...row(type, values),
      status: 'accepted',
      amount_in_doubt: then,
      amount_in_doubt_now: now,
    });
    // the event's amount is what was accepted; without one, the amount frozen with the row
    expect(excessOf(accepted('fee_mismatch', 200n, 500n), 200n)).toBe(300n);
    expect(excessOf(accepted('fee_mismatch', 200n, 500n), null)).toBe(300n);
    expect(excessOf(accepted('fee_mismatch', 200n, 150n), 200n)).toBe(0n);
    expect(excessOf(accepted('fee_mismatch', 200n, null), 200n)).toBe(0n);
    // a difference: from the materiality up, in the discrepancy's currency
    expect(excessClaimOf(accepted('fee_mismatch', 200n, 250n), 200n, DEFAULT_HOLD_POLICY)).toBeNull();
    expect(excessClaimOf(accepted('fee_mismatch', 200n, 500n), 200n, DEFAULT_HOLD_POLICY)).toMatchObject({
      atMost: 300n,
      currency: 'USD',
      reason: expect.stringMatching(/\(reviewed: released as accepted; more in doubt since\)$/),
    });
    // a payment: at most the excess of it, not the whole payment; a type that holds nothing, nothing
    expect(excessClaimOf(accepted('amount_mismatch', 100_00n, 101_00n), 100_00n, DEFAULT_HOLD_POLICY)).toMatchObject({
      atMost: 1_00n,
    });
    expect(excessClaimOf(accepted('missing_webhook', 100n, 900n), 100n, DEFAULT_HOLD_POLICY)).toBeNull();
    // withheld: the frozen difference and the excess together
    const withheld = accepted('fee_above_contract', 500n, 800n, { difference: '500' });
    expect(claimOf(withheld, DEFAULT_HOLD_POLICY, excessOf(withheld, 500n))).toMatchObject({ atMost: 800n });
  });

  it('reads RECON_HOLD_POLICY and RECON_HOLD_MATERIALITY, and refuses bad values naming them', () => {
    const { policy, issues } = holdPolicyFrom({
      RECON_HOLD_POLICY: 'fee_below_contract=none, missing_webhook=payment',
      RECON_HOLD_MATERIALITY: '50, UAH=5000',
    });
    expect(issues).toEqual([]);
    expect(policy.rules.fee_below_contract).toBe('none');
    expect(policy.rules.missing_webhook).toBe('payment');
    expect(policy.materiality).toEqual({ all: 50n, byCurrency: { UAH: 5000n } });
    const cent = row('fee_above_contract', { difference: '60' });
    expect(claimOf(cent, policy)).toMatchObject({ atMost: 60n });
    expect(claimOf({ ...cent, currency: 'UAH' }, policy)).toBeNull();

    const bad = loadConfig({ RECON_HOLD_POLICY: 'fee_typo=none,duplicate=sometimes', RECON_HOLD_MATERIALITY: '1.5' });
    expect(bad.ok).toBe(false);
    const text = bad.ok ? '' : formatConfigIssues(bad.issues);
    expect(text).toContain('RECON_HOLD_POLICY');
    expect(text).toContain('unknown discrepancy type "fee_typo"');
    expect(text).toContain('duplicate: expected payment, difference or none');
    expect(text).toContain('RECON_HOLD_MATERIALITY');
  });
});
