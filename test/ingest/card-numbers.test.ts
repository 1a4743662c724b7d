import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { maskCardNumbers, maskCardNumbersInJson, maskCardToken } from '../../src/ingest/card-numbers';
import { recordRejected, registerObserved, webhookReceived } from '../../src/ingest/observations';
import { parseJsonExact } from '../../src/psp/json';
import { parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A, payload } from '../bad-input/webhooks.cases';

/**
 * Card numbers never reach the event store: a whole one in a webhook or a PSP record (a PSP that does not mask
 * `cc_mask`, a customer who types one into a description) is masked to its first six and last four digits
 * before the observation's event is built (src/ingest/card-numbers.ts). Found by a reviewer: such a webhook was
 * accepted and its event kept the number twice, in `raw` and in `webhook.other`.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const META = { receivedAt: '2025-03-01T10:00:03.000Z', remoteAddress: null };

function webhookEvent(text: string) {
  const parsed = parseWebhookPayload(text);
  if (!parsed.ok) throw new Error(`the webhook was refused: ${parsed.field} ${parsed.reason}`);
  return webhookReceived(POS_A, text, parsed.value, META).event;
}

describe('card numbers in what the PSP sends', () => {
  it('a whole card number in a webhook (cc_mask, a description, spaced) is stored masked, in raw and in the webhook', () => {
    const p = payload({ cc_mask: `"${PAN}"`, description: '"paid with 4111 1111 1111 1111"' });
    const event = webhookEvent(p.text);
    const stored = JSON.stringify(event.data);
    expect(stored.replace(/[\s-]/g, '')).not.toContain(PAN);
    const data = event.data as { raw: string; webhook: { other: Record<string, unknown> } };
    expect(data.webhook.other['cc_mask']).toBe(MASKED);
    expect(data.webhook.other['description']).toBe(`paid with ${MASKED}`);
    // the recorded text stays exact JSON: it parses, and everything but the masked strings is as sent
    const raw = parseJsonExact(data.raw);
    expect(raw.ok).toBe(true);
    expect(data.raw).toBe(p.text.replace(PAN, MASKED).replace('4111 1111 1111 1111', MASKED));
    // the same delivery again is the same event
    expect(webhookEvent(p.text).id).toBe(event.id);
  });

  it('a webhook with nothing to mask is stored exactly as before (text and id)', () => {
    const p = payload({ cc_mask: '"411111******1111"', description: '"order 2025-03-01 10:00, 1234 5678"' });
    const parsed = parseWebhookPayload(p.text);
    if (!parsed.ok) throw new Error('refused');
    const event = webhookEvent(p.text);
    expect((event.data as { raw: string }).raw).toBe(p.text);
    expect((event.data as { webhook: unknown }).webhook).toEqual(parsed.value);
  });

  it('a card number in a register record (its card mask, its description) is stored masked', () => {
    const text = recordText('register', { cc_mask: `"${PAN}"` });
    const parsed = parseRegisterRecord(text);
    if (!parsed.ok) throw new Error(`refused: ${parsed.field} ${parsed.reason}`);
    const { event } = registerObserved(POS_A, text, parsed.value, {
      source: 'register',
      reportId: null,
      window: { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' },
      observedAt: '2025-03-02T01:00:00Z',
    });
    expect(JSON.stringify(event.data)).not.toContain(PAN);
    expect(JSON.stringify(event.data)).toContain(MASKED);
  });

  it('a refused payload is kept with its card numbers masked', () => {
    const { event } = recordRejected(POS_A, 'webhook', 'amount', 'not a number', `{"cc_mask":"${PAN}",`, {});
    expect(JSON.stringify(event.data)).not.toContain(PAN);
  });

  it('masks what has the shape and check digit of a card number, and only that', () => {
    // Luhn-valid, 13 to 19 digits, plain, spaced or dashed: masked
    expect(maskCardNumbers('5555555555554444')).toBe('555555******4444');
    expect(maskCardNumbers('card 5555-5555-5555-4444.')).toBe('card 555555******4444.');
    expect(maskCardNumbers('378282246310005')).toBe('378282*****0005');
    // not a card number: a wrong check digit, too short, too long, part of a longer digit run
    // and a UUID whose digits between its letters and dashes happen to pass the check (a sandbox payment id)
    for (const text of [
      '4111111111111112',
      '411111111111',
      '41111111111111111111',
      'id 12345678901234567890123',
      '4cc60206-7056-4732-8584-4a443f6b0469',
    ])
      expect(maskCardNumbers(text)).toBe(text);
    // in JSON, only inside strings: a number of that shape stays a number (amounts stay exact)
    expect(maskCardNumbersInJson(`{"a":${PAN},"b":"${PAN}","c":"x\\"${PAN}"}`)).toBe(
      `{"a":${PAN},"b":"${MASKED}","c":"x\\"${MASKED}"}`,
    );
  });
});

/** The masking of a JSON text as it was written before its quick check: string value by string value. */
function maskEachString(raw: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '"') continue;
    let end = i + 1;
    while (end < raw.length && raw[end] !== '"') end += raw[end] === '\\' ? 2 : 1;
    out += raw.slice(from, i + 1) + maskCardNumbers(raw.slice(i + 1, end));
    from = end;
    i = end;
  }
  return out + raw.slice(from);
}

describe('the quick check before masking a JSON text (issue 26)', () => {
  it('gives the text masked string by string, for numbers and strings of card shapes, valid or not', () => {
    const digits = fc.stringMatching(/^[0-9]{1,20}$/);
    const piece = fc.oneof(
      digits,
      digits.map((d) => `"${d}"`),
      fc.constantFrom(
        PAN,
        `"${PAN}"`,
        '"4111 1111 1111 1111"',
        '"4111-111111-11111"',
        '4111111111111112',
        '"a4111111111111111"',
      ),
      fc.constantFrom('"x\\"', '\\"', ' ', '-', ',', ':', '{', '}', '"', 'a', '1757000000000'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(maskCardNumbersInJson(text)).toBe(maskEachString(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('card tokens in what the PSP sends', () => {
  // a token the PSP accepts in place of the card (psp-interface.md 2.1): whoever reads it can charge the card
  const TOKEN = 'tok_9f8e7d6c5b4a3b2c1d0e';
  const TOKEN_MASKED = `${'*'.repeat(TOKEN.length - 4)}1d0e`;

  it('a webhook and a register record carrying cc_token are stored with it masked, in raw and in the record', () => {
    const p = payload({ cc_token: `"${TOKEN}"`, cc_token_expiration: '"2027-03-01T00:00:00"' });
    const event = webhookEvent(p.text);
    expect(JSON.stringify(event.data)).not.toContain(TOKEN);
    const data = event.data as { raw: string; webhook: { other: Record<string, unknown> } };
    expect(data.webhook.other['cc_token']).toBe(TOKEN_MASKED);
    expect(data.raw).toBe(p.text.replace(TOKEN, TOKEN_MASKED));
    expect(parseJsonExact(data.raw).ok).toBe(true);
    expect(webhookEvent(p.text).id).toBe(event.id);

    const text = recordText('register', { cc_token: `"${TOKEN}"` });
    const parsed = parseRegisterRecord(text);
    if (!parsed.ok) throw new Error(`refused: ${parsed.field} ${parsed.reason}`);
    const record = registerObserved(POS_A, text, parsed.value, {
      source: 'register',
      reportId: null,
      window: { from: '2025-03-01T00:00:00Z', to: '2025-03-02T00:00:00Z' },
      observedAt: '2025-03-02T01:00:00Z',
    }).event;
    expect(JSON.stringify(record.data)).not.toContain(TOKEN);
    expect(JSON.stringify(record.data)).toContain(TOKEN_MASKED);
  });

  it('a refused payload is kept with its token masked', () => {
    const { event } = recordRejected(
      POS_A,
      'webhook',
      'amount',
      'not a number',
      `{"cc_token" : "${TOKEN}", "amount":`,
      {},
    );
    expect(JSON.stringify(event.data)).not.toContain(TOKEN);
    expect((event.data as { raw: string }).raw).toBe(`{"cc_token" : "${TOKEN_MASKED}", "amount":`);
    // a payload cut short inside the token: what there is of it is masked whole
    const cut = recordRejected(POS_A, 'webhook', '(record)', 'not JSON', `{"cc_token":"${TOKEN.slice(0, 15)}`, {});
    expect(JSON.stringify(cut.event.data)).not.toContain(TOKEN.slice(0, 15));
    expect((cut.event.data as { raw: string }).raw).toBe('{"cc_token":"********');
  });

  it('a token under a key written with escapes, or nested in an object, is masked in raw and record alike', () => {
    // valid JSON: "cc\u005ftoken" is the key cc_token
    const escaped = payload({ cc_token: `"${TOKEN}"` }).text.replace('"cc_token"', '"cc\\u005ftoken"');
    expect(escaped).toContain('"cc\\u005ftoken"');
    const e1 = webhookEvent(escaped);
    expect(JSON.stringify(e1.data)).not.toContain(TOKEN);
    expect((e1.data as { raw: string }).raw).toContain(TOKEN_MASKED);
    const nested = payload({ recurring: `{"id":"rec-1","status":"active","cc_token":"${TOKEN}"}` });
    const parsed = parseWebhookPayload(nested.text);
    if (!parsed.ok) throw new Error(`refused: ${parsed.field} ${parsed.reason}`);
    const e2 = webhookEvent(nested.text);
    expect(JSON.stringify(e2.data)).not.toContain(TOKEN);
    expect(JSON.stringify(e2.data)).toContain(TOKEN_MASKED);
    expect(webhookEvent(nested.text).id).toBe(e2.id);
  });

  it('keeps a wallet prefix and the last four characters; a short or masked token stays masked', () => {
    expect(maskCardToken('applepay:abcdef1234567890')).toBe('applepay:************7890');
    expect(maskCardToken('abc12')).toBe('****');
    expect(maskCardToken(maskCardToken(TOKEN))).toBe(TOKEN_MASKED);
    expect(maskCardToken('')).toBe('');
    // an escaped value in a text is masked whole
    expect(maskCardNumbers('{"cc_token":"ab\\"cd1234567890"}')).toBe('{"cc_token":"********"}');
  });
});
