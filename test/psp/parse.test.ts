import { describe, expect, it } from 'vitest';
import { normalizedPeriodRecord, normalizedRegisterRecord, normalizedWebhook } from '../../src/events/ingest-events';
import { parseJsonExact } from '../../src/psp/json';
import { decodeWebhookData, parsePeriodRecord, parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { encodeBase64Url } from '../../src/psp/signature';
import {
  amount,
  feeObject,
  limitInfo,
  paymentRecord,
  pspErrorBody,
  pspErrorFields,
  recurringObject,
  registerStartResponse,
  reportNotReady,
} from '../../src/psp/schemas';

const now = new Date('2024-06-01T00:00:00Z');
const exact = (text: string) => {
  const r = parseJsonExact(text);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

// A register record with every field of 2.10 plus projectId, as a split row.
const REGISTER_FULL = `{
  "projectId": "6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f", "orderId": "order-1", "paymentId": "2f1c7a9e-0000-4000-8000-000000000001",
  "amount": 102.50, "currency": "UAH", "method": "purchase", "status": "success", "dateTime": 1714557600000,
  "cardMask": "444455******1111", "payway": "card", "customerFee": "2.50", "merchantFee": "1.75",
  "entityName": "Market LLC", "projectName": "Market", "originalAmount": "100.00", "exchangeAmount": "2.48",
  "exchangeCurrency": "USD", "exchangeRate": 40.3125, "tokenizationKind": null, "authCode": "123456", "rrnCode": 412345678901,
  "description": "Order 1", "payload": "", "paymentSystem": "visa", "recipientCardMask": null, "reserveAmount": "5.00",
  "receiverName": "Shop A", "receiverAmount": "58.25", "receiverFee": "1.75", "brandNew": {"x": 1}
}`;

describe('parseRegisterRecord', () => {
  it('reads every field of 2.10 exactly and keeps the rest in other', () => {
    const r = parseRegisterRecord(REGISTER_FULL, { now });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(normalizedRegisterRecord.parse(r.value)).toEqual(r.value);
    expect(r.value).toMatchObject({
      projectId: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
      orderId: 'order-1',
      method: 'purchase',
      status: 'success',
      dateTime: '2024-05-01T10:00:00.000Z',
      currency: 'UAH',
      amount: '10250',
      originalAmount: '10000',
      customerFee: '250',
      merchantFee: '175',
      receiverName: 'Shop A',
      receiverAmount: '5825',
      receiverFee: '175',
      reserveAmount: '500',
      cardMask: '444455******1111',
      payway: 'card',
    });
    expect(r.value.other).toMatchObject({
      exchangeRate: 40.3125,
      rrnCode: 412345678901,
      authCode: '123456',
      brandNew: { x: 1 },
      payload: '',
    });
  });

  it('reads the default fields only, with absent optional fields as null', () => {
    const r = parseRegisterRecord(
      '{"paymentId":"p","amount":"10","currency":"XTS","method":"REFUND","status":"Failure","dateTime":"1714557600000"}',
      { now },
    );
    expect(r).toMatchObject({
      ok: true,
      value: {
        amount: '1000',
        method: 'refund',
        status: 'failure',
        receiverAmount: null,
        projectId: null,
        dateTime: '2024-05-01T10:00:00.000Z',
      },
    });
  });

  it.each([
    ['""', null],
    ['null', null],
    ['1714557600123', '2024-05-01T10:00:00.123Z'],
    ['"1714557600123"', '2024-05-01T10:00:00.123Z'],
  ])('dateTime %s → %s', (dt, iso) => {
    const r = parseRegisterRecord(
      `{"paymentId":"p","currency":"UAH","method":"purchase","status":"init","dateTime":${dt}}`,
      { now },
    );
    expect(r).toMatchObject({ ok: true, value: { dateTime: iso } });
  });

  it.each([
    ['dateTime', '946684799999', /before 2000/],
    ['dateTime', '1714557600', /before 2000/], // seconds, not milliseconds
    ['dateTime', '1893456000000', /ahead/],
    ['dateTime', '"12:00"', /milliseconds/],
    ['dateTime', '1.5e12', /milliseconds/],
    ['amount', '12.345', /more than two decimals/],
    ['amount', '"1e3"', /plain decimal/],
    ['amount', '-5', /negative/],
    ['amount', '"NaN"', /plain decimal/],
    ['amount', '1000000000000000', /too large/],
    ['amount', 'true', /./],
    ['receiverFee', '"0.001"', /more than two decimals/],
    ['currency', '"uah"', /currency/],
    ['currency', '"UA"', /currency/],
    ['method', '"sale"', /unknown method/],
    ['status', '"done"', /unknown status/],
    ['paymentId', '""', /empty/],
  ])('rejects %s = %s, naming the field', (field, value, reason) => {
    const base: Record<string, string> = {
      paymentId: '"p"',
      currency: '"UAH"',
      method: '"purchase"',
      status: '"success"',
      dateTime: '1714557600000',
      amount: '"1.00"',
    };
    base[field] = value;
    const text =
      '{' +
      Object.entries(base)
        .map(([k, v]) => `"${k}":${v}`)
        .join(',') +
      '}';
    const r = parseRegisterRecord(text, { now });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.field).toBe(field);
    expect(r.reason).toMatch(reason);
  });

  it('rejects non-object roots, invalid JSON and deep nesting at the root', () => {
    for (const text of ['[]', '"x"', '12', 'null', '{"paymentId":', '{"a":' + '['.repeat(40) + ']'.repeat(40) + '}']) {
      expect(parseRegisterRecord(text, { now })).toMatchObject({ ok: false, field: '(root)' });
    }
  });

  it('is exact for amounts that floats cannot hold', () => {
    const r = parseRegisterRecord(
      '{"paymentId":"p","currency":"UAH","method":"purchase","status":"success","amount":9007199254740.99,"originalAmount":0.29}',
      { now },
    );
    expect(r).toMatchObject({ ok: true, value: { amount: '900719925474099', originalAmount: '29' } });
  });
});

describe('parsePeriodRecord (2.9)', () => {
  const full = `{"projectId":"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f","orderId":"o-9","paymentId":"pay-9","amount":"250.00","currency":"EUR",
    "method":"purchase","status":"pending","dateTime":"","authCode":null,"rrnCode":null,"description":"d","payload":"{\\"k\\":1}",
    "customerFee":"0.00","merchantFee":"3.10","paymentSystem":"mastercard","recipientCardMask":null}`;
  it('reads every field', () => {
    const r = parsePeriodRecord(full, { now });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(normalizedPeriodRecord.parse(r.value)).toEqual(r.value);
    expect(r.value).toMatchObject({
      orderId: 'o-9',
      amount: '25000',
      customerFee: '0',
      merchantFee: '310',
      dateTime: null,
      status: 'pending',
    });
    expect(r.value.other).toMatchObject({ description: 'd', payload: '{"k":1}', paymentSystem: 'mastercard' });
  });
  it('requires the amount', () => {
    expect(
      parsePeriodRecord('{"paymentId":"p","currency":"EUR","method":"purchase","status":"success","amount":""}', {
        now,
      }),
    ).toMatchObject({ ok: false, field: 'amount' });
    expect(
      parsePeriodRecord('{"paymentId":"p","currency":"EUR","method":"purchase","status":"success"}', { now }),
    ).toMatchObject({ ok: false, field: 'amount' });
  });
});

describe('parseWebhookPayload (6.2–6.5)', () => {
  const primary = {
    payment_id: 'pay-1',
    order_id: 'o-1',
    gateway_order_id: 'g-1',
    billing_order_id: null,
    transaction_id: 't-1',
    pos_id: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
    mode: 'direct',
    method: 'purchase',
    amount: 100.5,
    currency: 'UAH',
    payway: 'card',
    eci: '05',
    status: 'success',
    status_code: '1000',
    limit_info: { retry_after: '2024-05-02T00:00:00', description: 'limit' },
    status_description: 'transaction is successful',
    cc_mask: '444455******1111',
    cc_token: 'tok',
    cc_token_expiration: '2026-01-01T00:00:00',
    customer_id: 'c1',
    customer_phone: '+380',
    fee: { amount: 2.01, currency: 'UAH' },
    fixed_fee: { amount: 1, currency: 'UAH' },
    percent_fee: { amount: 1.01, currency: 'UAH' },
    created_at: '2024-05-01T10:00:00.000',
    processed_at: '2024-05-01T10:00:05.250',
    payload: 'x',
    receipt_url: 'https://psp.example/r/1',
    extra_future_field: [1, 2],
  };

  it('reads a primary webhook; times without zone are UTC', () => {
    const r = parseWebhookPayload(JSON.stringify(primary), { now });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(normalizedWebhook.parse(r.value)).toEqual(r.value);
    expect(r.value).toMatchObject({
      kind: 'primary',
      paymentId: 'pay-1',
      orderId: 'o-1',
      transactionId: 't-1',
      operationId: null,
      amount: '10050',
      fee: '201',
      feeCurrency: 'UAH',
      statusCode: '1000',
      createdAt: '2024-05-01T10:00:00.000Z',
      processedAt: '2024-05-01T10:00:05.250Z',
      recurringId: null,
    });
    expect(r.value.other).toMatchObject({
      extra_future_field: [1, 2],
      fixed_fee: { amount: 1, currency: 'UAH' },
      limit_info: { description: 'limit' },
    });
  });

  it.each([
    ['capture', 'capture'],
    ['void', 'void'],
    ['refund', 'refund'],
    ['auth', 'primary'],
    ['credit', 'primary'],
    ['p2p', 'primary'],
    ['lookup', 'primary'],
    ['dispute', 'other'],
    ['recurrent', 'other'],
  ])('method %s is a %s webhook', (method, kind) => {
    const body = {
      operation_id: 'op-7',
      payment_id: 'pay-1',
      order_id: 'o-1',
      transaction_id: 't-2',
      pos_id: 'x',
      mode: 'direct',
      method,
      amount: '40.00',
      currency: 'UAH',
      status: 'success',
      status_code: '1000',
      status_description: 'ok',
      fee: { amount: '0.40', currency: 'UAH' },
      created_at: '2024-05-03T08:00:00.000',
      processed_at: '2024-05-03T08:00:01.000',
    };
    expect(parseWebhookPayload(JSON.stringify(body), { now })).toMatchObject({
      ok: true,
      value: { kind, method, operationId: 'op-7', amount: '4000', fee: '40' },
    });
  });

  it('a recurring object makes it a recurring webhook', () => {
    const r = parseWebhookPayload(JSON.stringify({ ...primary, recurring: { id: 'rec-1', status: 'active' } }), {
      now,
    });
    expect(r).toMatchObject({ ok: true, value: { kind: 'recurring', recurringId: 'rec-1' } });
  });

  it.each([
    ['created_at', '2024-05-01 10:00', 'created_at'],
    ['processed_at', '1999-12-31T23:59:59.000', 'processed_at'],
    ['amount', 1.005, 'amount'],
    ['amount', null, 'amount'],
    ['fee', { amount: '1.001', currency: 'UAH' }, 'fee.amount'],
    ['fee', { amount: '1', currency: 'uah' }, 'fee.currency'],
    ['payment_id', '', 'payment_id'],
    ['method', 'bogus', 'method'],
    ['status', 'ok', 'status'],
  ])('rejects %s = %j naming %s', (key, value, field) => {
    const r = parseWebhookPayload(JSON.stringify({ ...primary, [key]: value }), { now });
    expect(r).toMatchObject({ ok: false, field });
  });

  it('takes a zone when one is given and accepts empty times as null', () => {
    const r = parseWebhookPayload(
      JSON.stringify({ ...primary, created_at: '2024-05-01T13:00:00.000+03:00', processed_at: '' }),
      { now },
    );
    expect(r).toMatchObject({ ok: true, value: { createdAt: '2024-05-01T10:00:00.000Z', processedAt: null } });
  });

  it('decodes data from padded and unpadded base64url', () => {
    const json = JSON.stringify(primary);
    const data = encodeBase64Url(json);
    expect(decodeWebhookData(data)).toEqual({ ok: true, value: json });
    expect(decodeWebhookData(data + '='.repeat((4 - (data.length % 4)) % 4))).toEqual({ ok: true, value: json });
    expect(decodeWebhookData('a+b/')).toMatchObject({ ok: false, field: 'data' });
    expect(decodeWebhookData(Buffer.from([0xc3, 0x28]).toString('base64url'))).toMatchObject({
      ok: false,
      field: 'data',
    });
  });
});

describe('schemas of responses and objects', () => {
  it('payment record (2.5) of a cancellation: nulls allowed, unknown fields kept', () => {
    const rec =
      exact(`{"payment_id":"2f1c7a9e-0000-4000-8000-000000000001","order_id":"o-1","gateway_order_id":null,"billing_order_id":null,
      "transaction_id":"t","pos_id":"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f","mode":"hosted","method":"purchase","amount":100.00,"currency":"UAH",
      "description":"d","status":"failure","status_code":"6007","status_description":"payment cancelled","user_action_required":false,
      "user_action_url":null,"eci":null,"mcc":null,"cc_mask":null,"cc_token":null,"cc_token_expiration":null,"created_at":"2024-05-01T10:00:00.000",
      "processing_time":"2024-05-01T10:01:00.000","split":[{"amount":100.00,"sub_merchant_id":"x"}],"something_new":true}`);
    const r = paymentRecord.safeParse(rec);
    expect(r.success).toBe(true);
    if (!r.success) return;
    expect(r.data.amount).toEqual({ minor: 10000n, raw: '100.00' });
    expect(r.data.status_code).toBe('6007');
    expect((r.data as Record<string, unknown>).something_new).toBe(true);
  });

  it('payment record with a recurring object and a 3-DS pending answer', () => {
    const r = paymentRecord.safeParse(
      exact(
        '{"payment_id":"p","method":"purchase","status":"pending","status_code":2122,"user_action_required":true,"user_action_url":"https://acs.example/3ds","amount":"5.00","recurring":{"id":"r-1","status":"init"}}',
      ),
    );
    expect(r.success && r.data.recurring?.id).toBe('r-1');
    expect(r.success && r.data.status_code).toBe('2122');
  });

  it('fee, limit_info and recurring objects', () => {
    expect(feeObject.parse(exact('{"amount":1.25,"currency":"UAH"}')).amount).toEqual({ minor: 125n, raw: '1.25' });
    expect(
      limitInfo.parse(exact('{"retry_after":"2024-05-02T00:00:00","description":"daily limit"}')).description,
    ).toBe('daily limit');
    expect(recurringObject.parse(exact('{"id":123,"status":"active"}')).id).toBe('123');
  });

  it('register start and not-ready responses', () => {
    expect(registerStartResponse.parse(exact('{"report_id":"rep-1","count":42}'))).toMatchObject({
      report_id: 'rep-1',
      count: 42,
    });
    expect(registerStartResponse.safeParse(exact('{"report_id":"rep-1","count":1.5}')).success).toBe(false);
    expect(reportNotReady.safeParse(exact('{"message":"Report is not ready","code":"report_not_ready"}')).success).toBe(
      true,
    );
    expect(reportNotReady.safeParse(exact('{"message":"x","code":"other"}')).success).toBe(false);
  });

  it('error body in the live shape and the flat shape', () => {
    expect(pspErrorFields(pspErrorBody.parse(exact('{"message":"Unauthorized","args":{"code":401}}'))).code).toBe(
      '401',
    );
    expect(pspErrorBody.parse(exact('{"message":"bad","code":"E1"}')).code).toBe('E1');
  });

  it.each([
    ['12', 1200n],
    ['12.5', 1250n],
    ['12.50', 1250n],
    ['0.01', 1n],
    ['0', 0n],
  ])('amount %s → %s minor units', (text, minor) => {
    expect(amount.parse(exact(text))).toEqual({ minor, raw: text });
    expect(amount.parse(text)).toEqual({ minor, raw: text });
  });
});
