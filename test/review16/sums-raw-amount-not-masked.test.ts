import { describe, expect, it } from 'vitest';
import { maskedObservation } from '../../src/ingest/card-numbers';
import { parseAmount } from '../../src/money';
import { luhnValid } from '../../src/psp/validate';

/**
 * The PSP's register gives amounts as strings with two decimals (psp-interface.md, "amount (String, two
 * decimals)"), and the doors take up to 10^15 minor units: 4,222,222,222,222.22 is an amount they accept. Its
 * whole part is 13 digits that pass the card check digit, and the card-number masking of the recorded text
 * (`raw`, kept for audit as received) masked it inside the JSON string: the stored text read
 * "422222***2222.22". An amount is never a card number (no card is written with a decimal point); a card number
 * in a description is still masked.
 */

describe('review16: a large amount in the recorded text', () => {
  it('is kept as received; a card number beside it is masked', () => {
    const amount = '4222222222222.22';
    expect(parseAmount(amount)).toMatchObject({ ok: true, minor: 422_222_222_222_222n });
    expect(luhnValid('4222222222222')).toBe(true);
    const record = { amount, description: 'card 4111111111111111', other: {} };
    const raw = JSON.stringify({ amount, originalAmount: '9876543210128.50', description: record.description });
    const { raw: kept } = maskedObservation(raw, record);
    const parsed = JSON.parse(kept) as Record<string, string>;
    expect(parsed['amount']).toBe(amount);
    expect(parsed['originalAmount']).toBe('9876543210128.50');
    expect(parsed['description']).toBe('card 411111******1111');
  });
});
