import { describe, expect, it } from 'vitest';
import { registerObserved, webhookReceived } from '../../src/ingest/observations';
import { parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A, payload } from '../bad-input/webhooks.cases';

/**
 * A whole card number the PSP sends in a field recon does not map (kept in the record's `other`) reached the
 * event store: the recorded text was masked, but `other.recipientCardMask` (a register row's receiver card,
 * psp-interface.md 2.10) or a webhook's `customer_id` kept the number whole, as only `cc_mask`, `cardMask`,
 * `description`, `status_description` and `payload` were masked. Every text of `other` is masked now, but the
 * transaction id a projection reads there.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const WINDOW = { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' };

function registerEvent(text: string) {
  const parsed = parseRegisterRecord(text);
  if (!parsed.ok) throw new Error(`refused: ${parsed.field} ${parsed.reason}`);
  const meta = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2025-03-02T01:00:00Z' };
  return registerObserved(POS_A, text, parsed.value, meta).event;
}

function webhookEvent(text: string) {
  const parsed = parseWebhookPayload(text);
  if (!parsed.ok) throw new Error(`refused: ${parsed.field} ${parsed.reason}`);
  return webhookReceived(POS_A, text, parsed.value, { receivedAt: '2025-03-01T10:00:03.000Z', remoteAddress: null })
    .event;
}

const otherOf = (data: unknown, key: 'record' | 'webhook') =>
  (data as Record<string, { other: Record<string, unknown> }>)[key]!.other;

describe('a card number in a field recon keeps unmapped', () => {
  it.each([
    ['recipientCardMask', `"${PAN}"`, MASKED],
    ['paymentSystem', `"card ${PAN}"`, `card ${MASKED}`],
    ['extraInfo', `{"note":"4111 1111 1111 1111"}`, { note: MASKED }],
  ])('a register row: %s is stored masked', (field, json, stored) => {
    const event = registerEvent(recordText('register', { [field]: json }));
    expect(JSON.stringify(event.data)).not.toContain(PAN);
    expect(JSON.stringify(event.data).replace(/[ -]/g, '')).not.toContain(PAN);
    expect(otherOf(event.data, 'record')[field]).toEqual(stored);
  });

  it.each(['customer_id', 'customer_phone', 'receipt_url', 'payway'])('a webhook: %s is stored masked', (field) => {
    const event = webhookEvent(payload({ [field]: `"x ${PAN}"` }).text);
    expect(JSON.stringify(event.data)).not.toContain(PAN);
    expect(otherOf(event.data, 'webhook')[field]).toBe(`x ${MASKED}`);
  });

  it('a card number and a card token nested as deep as the door lets in are stored masked', () => {
    const nested = (inner: string) => '{"a":'.repeat(20) + inner + '}'.repeat(20);
    const text = recordText('register', { extraInfo: nested(`{"note":"${PAN}","cc_token":"tok_abcdefghijklmnop"}`) });
    const stored = JSON.stringify(registerEvent(text).data);
    expect(stored).not.toContain(PAN);
    expect(stored).not.toContain('tok_abcdefghijklmnop');
  });

  it('the transaction id a projection reads stays as sent, and a row with nothing to mask is the same event', () => {
    const id = '4111111111111111';
    const text = recordText('register', { transactionId: `"${id}"` });
    const event = registerEvent(text);
    expect(otherOf(event.data, 'record')['transactionId']).toBe(id);
    const plain = recordText('register', { recipientCardMask: '"411111******1111"' });
    const parsed = parseRegisterRecord(plain);
    if (!parsed.ok) throw new Error('refused');
    expect((registerEvent(plain).data as { record: unknown }).record).toEqual(parsed.value);
  });
});
