import { describe, expect, it } from 'vitest';
import { parseWebhookPayload } from '../../src/psp/parse';

/**
 * docs/bad-input.md: record timestamps need "if an offset is given, a real one (−12:00…+14:59)", and the orders
 * door refuses `-13:00`. A webhook's `created_at`/`processed_at` took any offset from −14:59 to +14:59: a time
 * written `-13:00` or `-14:00` was accepted and stored up to a day and more away from any real local time, in
 * another business day (2026-01-31T20:00:00-14:00 was booked on 1 February).
 */

const body = (createdAt: string) =>
  JSON.stringify({
    payment_id: 'p-offset',
    order_id: 'o-offset',
    method: 'purchase',
    status: 'success',
    currency: 'EUR',
    amount: '10.00',
    created_at: createdAt,
    processed_at: '2026-01-05T10:00:00Z',
  });

describe('a webhook time with an offset no place on Earth has', () => {
  it.each(['2026-01-31T20:00:00-14:00', '2026-01-05T10:00:00-13:00'])('%s is refused naming created_at', (t) => {
    const r = parseWebhookPayload(body(t));
    expect(r.ok ? 'accepted' : r.field).toBe('created_at');
  });

  it.each([
    ['2026-01-05T10:00:00-12:00', '2026-01-05T22:00:00.000Z'],
    ['2026-01-05T10:00:00+14:00', '2026-01-04T20:00:00.000Z'],
    ['2026-01-05T10:00:00-0930', '2026-01-05T19:30:00.000Z'],
  ])('%s, a real offset, is still read', (t, utc) => {
    const r = parseWebhookPayload(body(t));
    expect(r.ok ? r.value.createdAt : r.reason).toBe(utc);
  });
});
