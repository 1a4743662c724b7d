import { describe, expect, it } from 'vitest';
import { PeriodRecordObserved, RegisterRecordObserved, WebhookReceived } from '../../src/events/ingest-events';
import { paymentMethodWords } from '../../src/export/i18n/payment-methods';
import { lineDetailsOf } from '../../src/export/statements/details';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import type { RecordedEvent } from '../../src/store/types';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const at = Date.UTC(2025, 2, 3, 10, 0, 0);
let revision = 0;

function recorded(id: string, type: string, data: unknown): RecordedEvent {
  const n = BigInt(++revision);
  return {
    id,
    stream: 'payment-pos-pay-1',
    revision: revision - 1,
    position: { commit: n, prepare: n },
    appendId: String(n),
    type,
    version: 1,
    data,
    metadata: {},
    recordedAt: NOW,
  };
}

function webhook(id: string, body: Record<string, unknown>): RecordedEvent {
  const raw = JSON.stringify(body);
  const r = parseWebhookPayload(raw, { now: NOW });
  if (!r.ok) throw new Error(`${r.field}: ${r.reason}`);
  const data = { posId: 'pos', raw, webhook: r.value };
  WebhookReceived.schema.parse(data);
  return recorded(id, WebhookReceived.type, data);
}

function register(id: string, body: Record<string, unknown>): RecordedEvent {
  const raw = JSON.stringify(body);
  const r = parseRegisterRecord(raw, { now: NOW });
  if (!r.ok) throw new Error(`${r.field}: ${r.reason}`);
  return recorded(id, RegisterRecordObserved.type, { posId: 'pos', raw, record: r.value });
}

function period(id: string, body: Record<string, unknown>): RecordedEvent {
  const raw = JSON.stringify(body);
  const r = parsePeriodRecord(raw, { now: NOW });
  if (!r.ok) throw new Error(`${r.field}: ${r.reason}`);
  return recorded(id, PeriodRecordObserved.type, { posId: 'pos', raw, record: r.value });
}

const purchase = (fee: Record<string, unknown>) => ({
  payment_id: 'pay-1',
  order_id: 'ord-1',
  transaction_id: 'tr-1',
  method: 'purchase',
  status: 'success',
  status_code: '1000',
  currency: 'UAH',
  amount: 1000.1,
  payway: 'apple_pay',
  created_at: new Date(at).toISOString().slice(0, 23),
  processed_at: new Date(at).toISOString().slice(0, 23),
  ...fee,
});
const registerRow = (payway: string) => ({
  orderId: 'ord-1',
  paymentId: 'pay-1',
  amount: '1000.10',
  currency: 'UAH',
  method: 'purchase',
  status: 'success',
  dateTime: at,
  payway,
  paymentSystem: 'mastercard',
  receiverName: 'Kvitka',
  receiverAmount: '969.80',
  receiverFee: '30.30',
});
const line = { method: 'purchase', fee: 3030n, currency: 'UAH', eventIds: ['r1'] };

describe('statement line details from recorded events', () => {
  it('reads the fee parts exactly from the webhook text, and they add up to the line fee', () => {
    // 0.1 + 30.2 is not 30.3 in binary floating point: the parts are read as integer minor units
    const events = [
      webhook(
        'w1',
        purchase({
          fee: { amount: 30.3, currency: 'UAH' },
          fixed_fee: { amount: 0.1, currency: 'UAH' },
          percent_fee: { amount: 30.2, currency: 'UAH' },
        }),
      ),
      register('r1', registerRow('card')),
    ];
    const d = lineDetailsOf(events, line);
    expect(d.feeParts).toEqual({ fixed: 10n, percent: 3020n });
    expect(d.feeParts!.fixed + d.feeParts!.percent).toBe(line.fee);
    // the webhook's payway (checkout) first, the register row's scheme
    expect(d.paidWith).toEqual({ payway: 'apple_pay', scheme: 'mastercard' });
    expect(paymentMethodWords(d.paidWith, 'en')).toBe('Apple Pay · Mastercard');
  });

  it('shows the total only when the parts are missing, do not add up, or belong to a larger fee', () => {
    const noParts = [webhook('w1', purchase({ fee: { amount: 30.3, currency: 'UAH' } }))];
    expect(lineDetailsOf(noParts, line).feeParts).toBeNull();
    const notAddingUp = [
      webhook(
        'w1',
        purchase({
          fee: { amount: 30.3, currency: 'UAH' },
          fixed_fee: { amount: 1, currency: 'UAH' },
          percent_fee: { amount: 30.2, currency: 'UAH' },
        }),
      ),
    ];
    expect(lineDetailsOf(notAddingUp, line).feeParts).toBeNull();
    // the payment's fee covers two receivers: its parts are not this line's
    const wholePayment = [
      webhook(
        'w1',
        purchase({
          fee: { amount: 40.3, currency: 'UAH' },
          fixed_fee: { amount: 10.1, currency: 'UAH' },
          percent_fee: { amount: 30.2, currency: 'UAH' },
        }),
      ),
    ];
    expect(lineDetailsOf(wholePayment, line).feeParts).toBeNull();
    // a refund line takes no parts from the purchase
    const fine = [
      webhook(
        'w1',
        purchase({
          fee: { amount: 30.3, currency: 'UAH' },
          fixed_fee: { amount: 0.1, currency: 'UAH' },
          percent_fee: { amount: 30.2, currency: 'UAH' },
        }),
      ),
    ];
    expect(lineDetailsOf(fine, { ...line, method: 'refund' }).feeParts).toBeNull();
  });

  it('falls back to the line register row, then the period record, and says "—" with no source', () => {
    const row = register('r1', registerRow('card'));
    expect(lineDetailsOf([row], line).paidWith).toEqual({ payway: 'card', scheme: 'mastercard' });
    expect(paymentMethodWords(lineDetailsOf([row], line).paidWith, 'uk')).toBe('Картка · Mastercard');
    const p = period('p1', {
      paymentId: 'pay-1',
      amount: '1000.10',
      currency: 'UAH',
      method: 'purchase',
      status: 'success',
      dateTime: at,
      paymentSystem: 'visa',
    });
    expect(lineDetailsOf([p], line).paidWith).toEqual({ payway: null, scheme: 'visa' });
    expect(paymentMethodWords(lineDetailsOf([p], line).paidWith, 'uk')).toBe('Visa');
    expect(lineDetailsOf([], line)).toEqual({ paidWith: null, feeParts: null });
    // an event stored before a schema became stricter still tells what it can, and never stops the statement
    const old = recorded('r2', RegisterRecordObserved.type, {
      posId: 'pos',
      raw: '{}',
      record: { dateTime: 'yesterday', payway: 'wallet' },
    });
    expect(lineDetailsOf([old], { ...line, eventIds: ['r2'] }).paidWith).toEqual({ payway: 'wallet', scheme: null });
    expect(paymentMethodWords({ payway: 'wallet', scheme: null }, 'uk')).toBe('Гаманець');
    expect(paymentMethodWords(null, 'uk')).toBe('—');
    expect(paymentMethodWords({ payway: 'crypto_x', scheme: null }, 'uk')).toBe('crypto_x');
  });
});
