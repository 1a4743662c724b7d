import { describe, expect, it } from 'vitest';
import {
  checkSplitSum,
  luhnValid,
  validateDirectPurchase,
  validateHostedPurchase,
  validateSubscriptionPurchase,
  withRecurringDefaults,
} from '../../src/psp/validate';
import type { DirectPurchaseRequest, HostedPurchaseRequest, SubscriptionPurchaseRequest } from '../../src/psp/schemas';

const now = new Date('2024-06-15T12:00:00Z');
const SUB = '0b7f8c1e-1111-4222-8333-444455556666';

const direct = (over: Record<string, unknown> = {}): DirectPurchaseRequest =>
  ({
    pos_id: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
    mode: 'direct',
    method: 'purchase',
    amount: '100.00',
    currency: 'UAH',
    description: 'Order 1',
    order_id: 'o-1',
    order_3ds_bypass: 'always',
    cc_number: '4111111111111111',
    exp_month: 12,
    exp_year: 26,
    card_cvv: '123',
    customer_fname: 'Ivan',
    customer_lname: 'Petrenko',
    customer_email: 'i@example.com',
    customer_phone: '+380501234567',
    customer_ip: '203.0.113.5',
    split: [
      { amount: '60.00', sub_merchant_id: SUB },
      { amount: 40, sub_merchant_id: SUB },
    ],
    ...over,
  }) as DirectPurchaseRequest;

const hosted = (over: Record<string, unknown> = {}): HostedPurchaseRequest =>
  ({
    pos_id: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
    mode: 'hosted',
    method: 'purchase',
    amount: 100,
    currency: 'UAH',
    description: 'Order 2',
    order_id: 'o-2',
    order_3ds_bypass: 'always',
    customer_patronym: 'Ivanovych',
    customer_email: 'i@example.com',
    customer_phone: '+380501234567',
    split: [{ amount: '100', sub_merchant_id: SUB }],
    ...over,
  }) as HostedPurchaseRequest;

const fieldsOf = (r: { ok: boolean; violations?: Array<{ field: string }> }) =>
  r.ok ? [] : r.violations!.map((v) => v.field);

describe('direct purchase (2.1)', () => {
  it('accepts a valid request with full card data, and with a token', () => {
    expect(validateDirectPurchase(direct(), { now })).toMatchObject({ ok: true });
    expect(
      validateDirectPurchase(
        direct({
          cc_number: undefined,
          exp_month: undefined,
          exp_year: undefined,
          card_cvv: undefined,
          cc_token: 'applepay:AbC123',
        }),
        { now },
      ),
    ).toMatchObject({ ok: true });
    expect(validateDirectPurchase(direct({ exp_month: 6, exp_year: 2024 }), { now })).toMatchObject({ ok: true }); // valid through June
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['Luhn', { cc_number: '4111111111111112' }, 'cc_number'],
    ['card digits', { cc_number: '4111-abcd' }, 'cc_number'],
    ['expired', { exp_month: 5, exp_year: 24 }, 'exp_year'],
    ['month', { exp_month: 13 }, 'exp_month'],
    ['year form', { exp_year: 123 }, 'exp_year'],
    ['CVV letters', { card_cvv: '12a' }, 'card_cvv'],
    ['CVV length', { card_cvv: '12345' }, 'card_cvv'],
    ['card and token', { cc_token: 'tok' }, 'cc_token'],
    ['partial card', { card_cvv: undefined }, 'card_cvv'],
    [
      'no card, no token',
      { cc_number: undefined, exp_month: undefined, exp_year: undefined, card_cvv: undefined },
      'cc_number',
    ],
    ['amount decimals', { amount: '10.001' }, 'amount'],
    ['amount zero', { amount: 0 }, 'amount'],
    ['amount negative', { amount: '-1.00' }, 'amount'],
    ['amount float noise', { amount: 0.1 + 0.2 }, 'amount'],
    ['amount exponent', { amount: '1e2' }, 'amount'],
    ['split amount', { split: [{ amount: '1.234', sub_merchant_id: SUB }] }, 'split.0.amount'],
    [
      'split uuid',
      {
        split: [
          { amount: '1', sub_merchant_id: SUB },
          { amount: '1', sub_merchant_id: 'shop-a' },
        ],
      },
      'split.1.sub_merchant_id',
    ],
    ['split empty', { split: [] }, 'split'],
    ['split missing', { split: undefined }, 'split'],
    ['payload', { payload: 'x'.repeat(4001) }, 'payload'],
    ['pos_id', { pos_id: 'pos-1' }, 'pos_id'],
    ['currency', { currency: 'uah' }, 'currency'],
    ['order_id', { order_id: 'x'.repeat(257) }, 'order_id'],
    ['customer_ip missing', { customer_ip: undefined }, 'customer_ip'],
    ['customer_fname missing', { customer_fname: undefined }, 'customer_fname'],
    ['birthday', { customer_birthday: '1990-02-30' }, 'customer_birthday'],
    ['country', { customer_country: 'UKR' }, 'customer_country'],
    ['server_url', { server_url: 'not a url' }, 'server_url'],
    ['order_3ds_bypass', { order_3ds_bypass: undefined }, 'order_3ds_bypass'],
    ['method', { method: 'auth' }, 'method'],
  ])('%s: names %s', (_name, over, field) => {
    const r = validateDirectPurchase(direct(over), { now });
    expect(fieldsOf(r)).toContain(field);
  });

  it('never quotes the card number or CVV in a violation', () => {
    const r = validateDirectPurchase(direct({ cc_number: '4111111111111112', card_cvv: '98a' }), { now });
    expect(JSON.stringify(r)).not.toContain('4111111111111112');
    expect(JSON.stringify(r)).not.toContain('98a');
  });

  it('payload of 4000 characters (counted as characters, not UTF-16 units) passes', () => {
    expect(validateDirectPurchase(direct({ payload: '😀'.repeat(4000) }), { now })).toMatchObject({ ok: true });
  });
});

describe('hosted purchase (2.2)', () => {
  it('accepts a valid request; first and last name optional', () => {
    expect(validateHostedPurchase(hosted())).toMatchObject({ ok: true });
  });
  it.each<[string, Record<string, unknown>, string]>([
    ['card number', { cc_number: '4111111111111111' }, 'cc_number'],
    ['token', { cc_token: 'tok' }, 'cc_token'],
    ['customer_ip', { customer_ip: '1.2.3.4' }, 'customer_ip'],
    ['customer_referrer', { customer_referrer: 'https://a.example' }, 'customer_referrer'],
    ['browser_fingerprint', { browser_fingerprint: {} }, 'browser_fingerprint'],
    ['cryptogram', { cryptogram: {} }, 'cryptogram'],
    ['patronym', { customer_patronym: undefined }, 'customer_patronym'],
    ['email', { customer_email: undefined }, 'customer_email'],
    ['phone', { customer_phone: undefined }, 'customer_phone'],
    ['validation_url', { validation_url: 'nope' }, 'validation_url'],
  ])('%s: names %s', (_name, over, field) => {
    expect(fieldsOf(validateHostedPurchase(hosted(over)))).toContain(field);
  });
});

describe('init_recurring (2.6)', () => {
  const sub = (rec: Record<string, unknown>): SubscriptionPurchaseRequest =>
    ({
      ...hosted(),
      split: undefined,
      init_recurring: { interval_unit: 'month', interval_count: 1, ...rec },
    }) as SubscriptionPurchaseRequest;

  it('accepts limits at their maxima', () => {
    expect(
      validateSubscriptionPurchase(
        sub({
          interval_count: 30,
          retry_attempts: 7,
          retry_interval_hours: 72,
          start_date: '2024-07-01',
          expiry_date: '2025-07-01',
          time: '23:59:59',
          amount: '9.99',
        }),
      ),
    ).toMatchObject({ ok: true });
    expect(validateSubscriptionPurchase(sub({ interval_unit: 'day', retry_interval_hours: 23 }))).toMatchObject({
      ok: true,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['interval_unit', { interval_unit: 'fortnight' }, 'init_recurring.interval_unit'],
    ['interval_count', { interval_count: 31 }, 'init_recurring.interval_count'],
    ['interval_count zero', { interval_count: 0 }, 'init_recurring.interval_count'],
    ['retry_attempts', { retry_attempts: 8 }, 'init_recurring.retry_attempts'],
    ['retry hours, day', { interval_unit: 'day', retry_interval_hours: 24 }, 'init_recurring.retry_interval_hours'],
    ['retry hours, week', { interval_unit: 'week', retry_interval_hours: 73 }, 'init_recurring.retry_interval_hours'],
    ['start_date', { start_date: '01.07.2024' }, 'init_recurring.start_date'],
    ['expiry_date', { expiry_date: '2024-13-01' }, 'init_recurring.expiry_date'],
    ['expiry before start', { start_date: '2024-07-01', expiry_date: '2024-06-01' }, 'init_recurring.expiry_date'],
    ['time', { time: '24:00:00' }, 'init_recurring.time'],
    ['time form', { time: '9:00' }, 'init_recurring.time'],
    ['amount', { amount: '0.001' }, 'init_recurring.amount'],
    ['notification_url', { notification_url: 'x' }, 'init_recurring.notification_url'],
  ])('%s: names %s', (_name, rec, field) => {
    expect(fieldsOf(validateSubscriptionPurchase(sub(rec)))).toContain(field);
  });

  it('fills the PSP defaults by unit', () => {
    expect(withRecurringDefaults({ interval_unit: 'day', interval_count: 1 })).toMatchObject({
      retry_attempts: 3,
      retry_interval_hours: 2,
    });
    expect(withRecurringDefaults({ interval_unit: 'month', interval_count: 1 })).toMatchObject({
      retry_attempts: 3,
      retry_interval_hours: 24,
    });
    expect(withRecurringDefaults({ interval_unit: 'week', interval_count: 1, retry_attempts: 0 })).toMatchObject({
      retry_attempts: 0,
    });
  });
});

describe('helpers', () => {
  it('Luhn', () => {
    for (const good of ['4111111111111111', '5555555555554444', '378282246310005', '79927398713'])
      expect(luhnValid(good)).toBe(true);
    for (const bad of ['4111111111111112', '79927398710', '12a4']) expect(luhnValid(bad)).toBe(false);
  });
  it('checkSplitSum compares exactly and never rejects', () => {
    expect(checkSplitSum({ amount: '100.00', split: [{ amount: '60.10' }, { amount: 39.9 }] })).toEqual({
      total: 10000n,
      splitTotal: 10000n,
      matches: true,
    });
    expect(checkSplitSum({ amount: 100, split: [{ amount: '60' }] })).toEqual({
      total: 10000n,
      splitTotal: 6000n,
      matches: false,
    });
    expect(checkSplitSum({ amount: 100, split: [{ amount: '1.001' }] })).toMatchObject({
      splitTotal: null,
      matches: false,
    });
  });
});
