import { describe, expect, it } from 'vitest';
import { recordRejected, registerObserved, webhookReceived } from '../../src/ingest/observations';
import { parseJsonExact } from '../../src/psp/json';
import { parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A, payload } from '../bad-input/webhooks.cases';

/**
 * The recorded text of a PSP record (`raw`) is masked where a string holds a card number's shape, but a JSON text
 * may write any character as an escape: `"cc_mask":"\u0034111111111111111"` is the card number 4111111111111111,
 * and its text showed no run of 13 digits, so `raw` kept it whole (the record's fields, decoded, were masked).
 * Now a string with such escapes is decoded, and written again masked when it holds a card number (in a refused
 * payload's kept text too).
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const WINDOW = { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' };

/** Every string of the stored data, decoded from `raw` too: what a reader of the store can get back. */
function decodedStrings(data: { raw: string }): string {
  const raw = parseJsonExact(data.raw);
  expect(raw.ok).toBe(true);
  return JSON.stringify(raw.ok ? raw.value : null) + JSON.stringify(data);
}

describe('a card number written with JSON escapes', () => {
  it.each([
    ['cc_mask', '"\\u0034111111111111111"'],
    ['description', '"card 4111\\u00201111\\u00201111\\u00201111"'],
    ['description', '"\\u0034\\u0031\\u0031\\u0031-1111-1111-1111"'],
  ])('in a webhook (%s) is masked in the recorded text', (field, json) => {
    const p = payload({ [field]: json });
    const parsed = parseWebhookPayload(p.text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const { event } = webhookReceived(POS_A, p.text, parsed.value, {
      receivedAt: '2025-03-01T10:00:03.000Z',
      remoteAddress: null,
    });
    const all = decodedStrings(event.data as { raw: string }).replace(/[ -]/g, '');
    expect(all).not.toContain(PAN);
    expect(all).toContain(MASKED);
  });

  it('in a register row is masked in the recorded text, which stays the JSON it was', () => {
    const text = recordText('register', { recipientCardMask: '"\\u0034111111111111111"' });
    const parsed = parseRegisterRecord(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const meta = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2025-03-02T01:00:00Z' };
    const { event } = registerObserved(POS_A, text, parsed.value, meta);
    const data = event.data as { raw: string };
    expect(decodedStrings(data)).not.toContain(PAN);
    expect(data.raw).toBe(text.replace('\\u0034111111111111111', MASKED));
  });

  it('in a refused webhook is masked in the rejection kept', () => {
    const p = payload({ cc_mask: '"\\u0034111111111111111"', amount: '"10.005"' });
    expect(parseWebhookPayload(p.text).ok).toBe(false);
    const { event } = recordRejected(POS_A, 'webhook', 'amount', 'more than two decimals', p.text, {});
    const data = event.data as { raw: string };
    expect(decodedStrings(data)).not.toContain(PAN);
    expect(data.raw).toContain(MASKED);
  });

  it('an escape that hides no card number leaves the text as it was', () => {
    const text = recordText('register', { description: '"caf\\u00e9 \\u0031\\u0032"' });
    const parsed = parseRegisterRecord(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const meta = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2025-03-02T01:00:00Z' };
    expect((registerObserved(POS_A, text, parsed.value, meta).event.data as { raw: string }).raw).toBe(text);
  });
});
