import { describe, expect, it } from 'vitest';
import { paymentMethodWords } from '../../src/export/i18n/payment-methods';
import { registerObserved } from '../../src/ingest/observations';
import { parseRegisterRecord } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A } from '../bad-input/webhooks.cases';

/**
 * A register row's `payway` (card, apple_pay, ...) is free text the PSP fills in, read by recon only to print the
 * "Paid with" column of a sub-merchant's statement, word for word when it is no payway recon knows. A whole card
 * number there (a PSP putting the card where the way of paying goes) was masked in the row's recorded text but
 * kept whole in its record, which the statements read: stored for good and printed on a statement mailed to the
 * sub-merchant. Now masked in the record as the other card and free-text fields are (the ids stay whole).
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const WINDOW = { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' };
const META = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2025-03-02T01:00:00Z' };

function observed(payway: string) {
  const text = recordText('register', { payway: JSON.stringify(payway) });
  const parsed = parseRegisterRecord(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return registerObserved(POS_A, text, parsed.value, META).event.data as { raw: string; record: { payway: string } };
}

describe("a card number in a register row's payway", () => {
  it.each([PAN, 'card 4111 1111 1111 1111'])('%s is stored masked, and the statement prints it masked', (payway) => {
    const data = observed(payway);
    expect(JSON.stringify(data).replace(/[ -]/g, '')).not.toContain(PAN);
    expect(data.record.payway).toContain(MASKED);
    // what the statement's "Paid with" column prints of it
    expect(paymentMethodWords({ payway: data.record.payway, scheme: null }, 'en')).not.toContain(PAN);
  });

  it('a payway recon knows is kept as it came', () => {
    expect(observed('apple_pay').record.payway).toBe('apple_pay');
  });
});
