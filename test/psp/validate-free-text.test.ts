import { describe, expect, it } from 'vitest';
import { holdsCardNumber, validatePurchase } from '../../src/psp/validate';
import type { DirectPurchaseRequest } from '../../src/psp/schemas';

const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const SUB = '0b7f8c1e-1111-4222-8333-444455556666';
const now = { now: new Date('2024-06-15T12:00:00Z') };
const direct = (over: Record<string, unknown> = {}): DirectPurchaseRequest =>
  ({
    pos_id: POS,
    mode: 'direct',
    method: 'purchase',
    amount: '100.50',
    currency: 'UAH',
    description: 'Order 1',
    order_id: 'o-1',
    order_3ds_bypass: 'always',
    cc_token: 'tok_abc',
    customer_fname: 'I',
    customer_lname: 'P',
    customer_email: 'i@example.com',
    customer_phone: '+380501234567',
    customer_ip: '203.0.113.5',
    split: [{ amount: '100.50', sub_merchant_id: SUB }],
    ...over,
  }) as DirectPurchaseRequest;

describe('card numbers in free-text fields', () => {
  // The PSP stores description and payload and returns them in every period record (2.9), the register (2.10)
  // and webhooks; recon keeps their raw text in its events. A card number put there ends up persisted.
  for (const field of ['description', 'payload'] as const) {
    it(`a Luhn-valid card number inside ${field} is refused, naming ${field}`, () => {
      const v = validatePurchase(direct({ [field]: 'paid with 4111 1111 1111 1111 exp 12/26' }), now);
      expect(v.ok).toBe(false);
      expect(v.ok ? [] : v.violations.map((x) => x.field)).toContain(field);
    });
  }
  it('an order number or a phone number is not taken for a card', () => {
    expect(holdsCardNumber('Order 1234567890123, call +380501234567')).toBe(false);
    expect(holdsCardNumber('ref 4111111111111112')).toBe(false); // fails Luhn
    expect(holdsCardNumber('5500-0000-0000-0004')).toBe(true);
    expect(validatePurchase(direct({ description: 'Order 1234567890123' }), now).ok).toBe(true);
  });
});
