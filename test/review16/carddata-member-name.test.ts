import { describe, expect, it } from 'vitest';
import { recordRejected, registerObserved, webhookReceived } from '../../src/ingest/observations';
import { parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A, payload } from '../bad-input/webhooks.cases';

/**
 * A card number may come as a member name rather than a value: a PSP that lists a payer's cards keyed by number
 * (`"cards": {"4111111111111111": {...}}`). The recorded text masked it (every string of it, names too), but the
 * record's unmapped fields (`other`) kept the name whole, its values alone masked, and a record refused for a
 * value under that name (a NUL) stored the field's path, which names it, whole in SourceRecordRejected. Now a
 * member name of `other` is masked as its values are, and a rejection's field as its reason.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const WINDOW = { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' };
const stored = (data: unknown) => JSON.stringify(data).replace(/[ -]/g, '');

describe('a card number as a member name', () => {
  it('in an accepted webhook is masked in the record as in the recorded text', () => {
    const p = payload({ cards: `{"${PAN}": {"brand": "visa"}, "5500 0000 0000 0004": {"brand": "mc"}}` });
    const parsed = parseWebhookPayload(p.text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const { event } = webhookReceived(POS_A, p.text, parsed.value, {
      receivedAt: '2025-03-01T10:00:03.000Z',
      remoteAddress: null,
    });
    expect(stored(event.data)).not.toContain(PAN);
    expect(stored(event.data)).not.toContain('5500000000000004');
    const other = (event.data as { webhook: { other: Record<string, unknown> } }).webhook.other;
    // the values under the names are kept
    expect(other.cards).toEqual({ [MASKED]: { brand: 'visa' }, '550000******0004': { brand: 'mc' } });
  });

  it('in an accepted register row is masked in the record', () => {
    const text = recordText('register', { wallets: `[{"${PAN}": "default"}]` });
    const parsed = parseRegisterRecord(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const meta = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2025-03-02T01:00:00Z' };
    const { event } = registerObserved(POS_A, text, parsed.value, meta);
    expect(stored(event.data)).not.toContain(PAN);
    expect(stored(event.data)).toContain(MASKED);
  });

  it("in a refused webhook's field path is masked in the stored rejection", () => {
    const p = payload({ cards: `{"${PAN}": "visa\\u0000"}` });
    const parsed = parseWebhookPayload(p.text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    // the refusal names where: the path through the card number
    expect(parsed.field).toBe(`cards.${PAN}`);
    const { event } = recordRejected(POS_A, 'webhook', parsed.field, parsed.reason, p.text, {});
    expect(stored(event.data)).not.toContain(PAN);
    expect((event.data as { field: string }).field).toBe(`cards.${MASKED}`);
  });

  it('a name that only looks like one (no check digit) is kept', () => {
    const p = payload({ cards: '{"4111111111111112": "visa"}' });
    const parsed = parseWebhookPayload(p.text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const { event } = webhookReceived(POS_A, p.text, parsed.value, {
      receivedAt: '2025-03-01T10:00:03.000Z',
      remoteAddress: null,
    });
    expect((event.data as { webhook: { other: { cards: unknown } } }).webhook.other.cards).toEqual({
      '4111111111111112': 'visa',
    });
  });
});
