import { randomUUID } from 'node:crypto';
import { encodeBase64Url, sign } from '../../src/psp/signature';
import { INJECTIONS, recordText } from './records.cases';

/**
 * The bad-input corpus for the webhook endpoint (`POST /webhooks/<pos_id>`, section 6). Each case
 * builds one HTTP request (fresh payment ids on every build, so a case can be sent again) and states:
 *   status    the HTTP status expected
 *   reason    a pattern the answer's `error` must match (the receiver's reason)
 *   stored    what the event store must hold afterwards, and nothing else:
 *               'webhook'   one WebhookReceived in payment-<pos>-<payment_id>
 *               'rejection' one SourceRecordRejected in rejections-<pos> (signed but unusable: raw kept)
 *               'nothing'   no event at all (unsigned or unreadable requests never reach the store)
 *   field     for a rejection: the field named
 *   knownIssue  set when the receiver does not behave as expected yet: the case runs as `it.fails`
 */

export const POS_A = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
export const SECRET_A = 'sk_test_bad_input_secret_A';
export const POS_B = '0f0e0d0c-0b0a-4909-8807-060504030201';
export const SECRET_B = 'sk_test_bad_input_secret_B';
/** WEBHOOK_MAX_BODY_BYTES of the receiver under test. */
export const MAX_BODY = 65_536;

export interface WebhookRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array;
  /** Send the body with chunked transfer encoding (no content-length). */
  readonly chunked?: boolean;
  /** The payment the request is about, when it carries one. */
  readonly paymentId?: string;
  /** The raw text a SourceRecordRejected must keep (the decoded JSON, or `data` when it does not decode). */
  readonly raw?: string;
}

export interface WebhookCase {
  readonly name: string;
  readonly build: () => WebhookRequest;
  readonly status: number;
  readonly reason?: RegExp;
  readonly stored: 'webhook' | 'rejection' | 'nothing';
  readonly field?: string;
  readonly knownIssue?: string;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const q = (s: string) => JSON.stringify(s);
const pathOf = (pos: string) => `/webhooks/${pos}`;

/** A webhook body (JSON text) for POS_A with a fresh payment id; `over` holds raw JSON fragments. */
export function payload(over: Record<string, string | undefined> = {}): { text: string; paymentId: string } {
  const paymentId = randomUUID();
  return {
    paymentId,
    text: recordText('webhook', {
      payment_id: q(paymentId),
      pos_id: q(POS_A),
      created_at: '"2025-03-01T10:00:00.000"',
      processed_at: '"2025-03-01T10:00:02.000"',
      ...over,
    }),
  };
}

export function formBody(fields: readonly (readonly [string, string])[]): string {
  return new URLSearchParams(fields.map(([k, v]): [string, string] => [k, v])).toString();
}

/** A delivery as the PSP makes it: data = base64url(JSON), signature over data with the project's secret. */
function signed(text: string, opts: { secret?: string; pos?: string; paymentId?: string } = {}): WebhookRequest {
  const data = encodeBase64Url(text);
  return {
    path: pathOf(opts.pos ?? POS_A),
    headers: FORM,
    body: formBody([
      ['data', data],
      ['signature', sign(opts.secret ?? SECRET_A, data)],
    ]),
    paymentId: opts.paymentId,
    raw: text,
  };
}

/**
 * A signed delivery of `data` given as is (not necessarily base64url of anything). Refused before it is JSON, it
 * is kept decoded as far as it goes (never as its encoding, in which a card number or token could not be masked).
 */
function signedData(data: string): WebhookRequest {
  return {
    path: pathOf(POS_A),
    headers: FORM,
    body: formBody([
      ['data', data],
      ['signature', sign(SECRET_A, data)],
    ]),
    raw: Buffer.from(data, 'base64').toString('utf8'),
  };
}

/** A delivery whose signature field is replaced by `signature(data)` (or left out when it returns null). */
function withSignature(signature: (data: string, good: string) => string | string[] | null): WebhookRequest {
  const p = payload();
  const data = encodeBase64Url(p.text);
  const s = signature(data, sign(SECRET_A, data));
  const fields: [string, string][] = [['data', data]];
  for (const v of s === null ? [] : Array.isArray(s) ? s : [s]) fields.push(['signature', v]);
  return { path: pathOf(POS_A), headers: FORM, body: formBody(fields), paymentId: p.paymentId };
}

const valid =
  (over: Record<string, string | undefined> = {}) =>
  () => {
    const p = payload(over);
    return signed(p.text, { paymentId: p.paymentId });
  };

/** Signed, but the payload is refused by the parser: 400 and a SourceRecordRejected with the raw text. */
const refusedPayload = (
  name: string,
  over: Record<string, string | undefined>,
  field: string,
  reason: RegExp,
): WebhookCase => ({
  name,
  build: () => signed(payload(over).text),
  status: 400,
  reason,
  stored: 'rejection',
  field,
});

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

export const webhookCases: readonly WebhookCase[] = [
  // --- valid deliveries (stored, 200) ---------------------------------------------------------
  { name: 'a valid purchase', build: valid(), status: 200, stored: 'webhook' },
  {
    name: 'a valid refund',
    build: valid({ method: '"refund"', operation_id: '"op-1"', amount: '20' }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'a valid recurring notification',
    build: valid({ recurring: '{"id": "sub-1", "status": "active"}' }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'unknown fields (kept)',
    build: valid({ brand_new: '{"nested": [1, 2, {"deep": null}]}' }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'a well-formed currency outside ISO 4217 (kept)',
    build: valid({ currency: '"ZZZ"' }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'operation_id as a JSON number on a purchase (was a 500: found by fuzzing)',
    build: valid({ operation_id: '12345678901234567890' }),
    status: 200,
    stored: 'webhook',
  },
  { name: 'created_at empty (not yet set)', build: valid({ created_at: '""' }), status: 200, stored: 'webhook' },
  {
    name: 'data with base64 padding kept',
    build: () => {
      const p = payload({ pad: '"x"' });
      const data = Buffer.from(p.text, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
      return {
        path: pathOf(POS_A),
        headers: FORM,
        body: formBody([
          ['data', data],
          ['signature', sign(SECRET_A, data)],
        ]),
        paymentId: p.paymentId,
      };
    },
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'the pos_id of the address in another case',
    build: () => ({ ...valid()(), path: pathOf(POS_A.toUpperCase()) }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'a content-type with a charset parameter',
    build: () => ({ ...valid()(), headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } }),
    status: 200,
    stored: 'webhook',
  },
  {
    name: 'a valid body sent chunked (no content-length)',
    build: () => ({ ...valid()(), chunked: true }),
    status: 200,
    stored: 'webhook',
  },
  ...INJECTIONS.filter(([n]) => n !== 'very long text').flatMap(([name, value]): WebhookCase[] => [
    {
      name: `${name} in status_description (stored verbatim)`,
      build: valid({ status_description: q(value) }),
      status: 200,
      stored: 'webhook',
    },
    {
      name: `${name} in order_id (stored verbatim)`,
      build: valid({ order_id: q(value) }),
      status: 200,
      stored: 'webhook',
    },
  ]),

  // --- signatures: 401, nothing stored --------------------------------------------------------
  {
    name: 'signature made with a wrong secret',
    build: () => withSignature((data) => sign('wrong-secret', data)),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: "signature made with another project's secret",
    build: () => withSignature((data) => sign(SECRET_B, data)),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: "another project's valid delivery sent to this project's address",
    build: () => {
      const p = payload({ pos_id: q(POS_B) });
      return { ...signed(p.text, { secret: SECRET_B }), path: pathOf(POS_A), paymentId: p.paymentId };
    },
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: 'signature missing',
    build: () => withSignature(() => null),
    status: 401,
    reason: /signature missing/,
    stored: 'nothing',
  },
  { name: 'signature empty', build: () => withSignature(() => ''), status: 401, stored: 'nothing' },
  {
    name: 'signature truncated by one character',
    build: () => withSignature((_d, good) => good.slice(0, -1)),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: 'signature without its padding',
    build: () => withSignature((_d, good) => good.replace(/=+$/, '')),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: 'signature truncated to 4 characters',
    build: () => withSignature((_d, good) => good.slice(0, 4)),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: 'signature with a character appended',
    build: () => withSignature((_d, good) => `${good}A`),
    status: 401,
    reason: /signature invalid/,
    stored: 'nothing',
  },
  {
    name: 'signature in another letter case',
    build: () => withSignature((_d, good) => (good.toLowerCase() === good ? good.toUpperCase() : good.toLowerCase())),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'signature in standard base64 (+ and /)',
    build: () =>
      withSignature((_d, good) =>
        /[-_]/.test(good) ? good.replace(/-/g, '+').replace(/_/g, '/') : `+${good.slice(1)}`,
      ),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'signature as lowercase hex of SHA-1',
    build: () =>
      withSignature((_d, good) => Buffer.from(good.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex')),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'signature over the decoded JSON instead of data',
    build: () => withSignature((data) => sign(SECRET_A, Buffer.from(data, 'base64url').toString('utf8'))),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'signature sent twice',
    build: () => withSignature((_d, good) => [good, good]),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'a wrong and a right signature',
    build: () => withSignature((data, good) => [sign('x', data), good]),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'data tampered after signing (amount changed)',
    build: () => {
      const p = payload();
      const data = encodeBase64Url(p.text);
      const forged = encodeBase64Url(p.text.replace('100.5', '100000.5'));
      return {
        path: pathOf(POS_A),
        headers: FORM,
        body: formBody([
          ['data', forged],
          ['signature', sign(SECRET_A, data)],
        ]),
        paymentId: p.paymentId,
      };
    },
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'garbage data with a wrong signature (no rejection recorded for unsigned input)',
    build: () => ({
      path: pathOf(POS_A),
      headers: FORM,
      body: formBody([
        ['data', '@@not-base64@@'],
        ['signature', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='],
      ]),
    }),
    status: 401,
    stored: 'nothing',
  },
  {
    name: 'an oversized signature (10 KiB)',
    build: () => withSignature(() => 'A'.repeat(10_240)),
    status: 401,
    stored: 'nothing',
  },

  // --- signed but unreadable data: 400 and a SourceRecordRejected ------------------------------
  {
    name: 'data that is not base64url',
    build: () => signedData('@@@@'),
    status: 400,
    reason: /data: not base64url/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data in standard base64 (+ and /)',
    build: () => signedData('eyJh+/8='),
    status: 400,
    reason: /not base64url/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data of impossible base64 length',
    build: () => signedData('abcde'),
    status: 400,
    reason: /not base64url/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data with spaces',
    build: () => signedData('eyJh IjoxfQ'),
    status: 400,
    reason: /not base64url/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data decoding to invalid UTF-8',
    build: () => signedData(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('base64url')),
    status: 400,
    reason: /UTF-8/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data decoding to invalid UTF-8 around a card token: kept decoded, the token masked',
    build: () => {
      const text = '{"cc_token":"tok_SECRETabcdef1234","description":"caf\u00e9"}';
      const data = Buffer.from(text, 'latin1').toString('base64url');
      return { ...signedData(data), raw: '{"cc_token":"****************1234","description":"caf\ufffd"}' };
    },
    status: 400,
    reason: /UTF-8/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data decoding to an overlong UTF-8 sequence',
    // kept decoded, its bad bytes as U+FFFD: an "o" keeps it apart from the case above (same text, one record)
    build: () => signedData(Buffer.from([0x7b, 0x22, 0x6f, 0xc0, 0xaf, 0x22, 0x7d]).toString('base64url')),
    status: 400,
    reason: /UTF-8/,
    stored: 'rejection',
    field: 'data',
  },
  {
    name: 'data that is not JSON',
    build: () => signed('this is not JSON'),
    status: 400,
    reason: /\(root\): invalid JSON/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'data that is empty JSON text',
    build: () => signed('   '),
    status: 400,
    reason: /invalid JSON/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'data that is truncated JSON',
    build: () => signed(payload().text.slice(0, 60)),
    status: 400,
    reason: /invalid JSON/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'data that is a JSON array',
    build: () => signed(`[${payload().text}]`),
    status: 400,
    reason: /JSON object/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'data that is JSON null',
    build: () => signed('null'),
    status: 400,
    reason: /JSON object/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'JSON of the wrong shape (a register row)',
    build: () => signed(recordText('register')),
    status: 400,
    reason: /payment_id/,
    stored: 'rejection',
    field: 'payment_id',
  },
  {
    name: 'JSON without payment_id',
    build: () => signed(payload({ payment_id: undefined }).text),
    status: 400,
    reason: /payment_id/,
    stored: 'rejection',
    field: 'payment_id',
  },
  {
    name: 'JSON with a raw control character in a string (not JSON)',
    build: () => signed(payload({ status_description: '"a\u0001b"' }).text),
    status: 400,
    reason: /invalid JSON/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'JSON nested 10,000 levels deep',
    build: () => signed(payload({ extra: deep(10_000) }).text),
    status: 400,
    reason: /deeper than 32/,
    stored: 'rejection',
    field: '(root)',
  },
  {
    name: 'JSON with a duplicate amount',
    build: () => signed(payload().text.replace(/}$/, ',"amount": 1}')),
    status: 400,
    reason: /Duplicate key/,
    stored: 'rejection',
    field: '(root)',
  },
  refusedPayload('amount with three decimals', { amount: '100.505' }, 'amount', /amount: more than two decimals/),
  refusedPayload('amount negative', { amount: '-100.5' }, 'amount', /negative/),
  refusedPayload('amount "NaN"', { amount: '"NaN"' }, 'amount', /not a plain decimal/),
  refusedPayload('amount in exponent notation', { amount: '1.005e2' }, 'amount', /not a plain decimal/),
  refusedPayload('amount huge', { amount: '1' + '0'.repeat(40) }, 'amount', /too large/),
  refusedPayload('amount missing', { amount: undefined }, 'amount', /amount/),
  refusedPayload('fee negative', { fee: '{"amount": -1, "currency": "UAH"}' }, 'fee.amount', /negative/),
  // yen have no decimals: stored, the JPY payable became a fraction of a yen and the payout was left out
  refusedPayload(
    'amount of a fraction of a yen',
    { amount: '1000.5', currency: '"JPY"', fee: '{"amount": 25, "currency": "JPY"}' },
    'amount',
    /amount: 1000\.50 JPY is not a whole number of JPY's smallest unit/,
  ),
  refusedPayload(
    'fee of a fraction of a yen',
    { amount: '1000', currency: '"JPY"', fee: '{"amount": 12.5, "currency": "JPY"}' },
    'fee.amount',
    /smallest unit/,
  ),
  refusedPayload('currency lowercase', { currency: '"uah"' }, 'currency', /currency/),
  refusedPayload('currency empty', { currency: '""' }, 'currency', /currency/),
  refusedPayload('currency numeric', { currency: '980' }, 'currency', /currency/),
  refusedPayload(
    'created_at absurd (month 13)',
    { created_at: '"2025-13-01T00:00:00.000"' },
    'created_at',
    /not a valid time/,
  ),
  refusedPayload('created_at in 1970', { created_at: '"1970-01-01T00:00:00.000"' }, 'created_at', /before 2000/),
  refusedPayload('created_at in 9999', { created_at: '"9999-01-01T00:00:00.000"' }, 'created_at', /ahead/),
  refusedPayload('processed_at a word', { processed_at: '"soon"' }, 'processed_at', /timestamp/),
  refusedPayload('method unknown', { method: '"teleport"' }, 'method', /unknown method/),
  refusedPayload('status unknown', { status: '"done"' }, 'status', /unknown status/),
  refusedPayload('a NUL escape in a string', { status_description: '"a\\u0000b"' }, 'status_description', /NUL/),
  refusedPayload(
    'an unpaired surrogate escape',
    { status_description: '"a\\udfffb"' },
    'status_description',
    /surrogate/,
  ),
  refusedPayload('payment_id of 300 characters', { payment_id: q('p'.repeat(300)) }, 'payment_id', /longer than 256/),
  refusedPayload('payment_id with a newline', { payment_id: q('pay\nment') }, 'payment_id', /control character/),
  refusedPayload('pos_id of another project in the body', { pos_id: q(POS_B) }, 'pos_id', /differs/),
  {
    name: 'JSON with a raw NUL character in a string (not JSON)',
    build: () => signed(payload({ status_description: '"a\u0000b"' }).text),
    status: 400,
    reason: /invalid JSON/,
    stored: 'rejection',
    field: '(root)',
  },

  // --- unreadable requests: 4xx, nothing stored ----------------------------------------------
  {
    name: 'content-type application/json',
    build: () => ({ ...valid()(), headers: { 'content-type': 'application/json' } }),
    status: 400,
    reason: /content-type/,
    stored: 'nothing',
  },
  {
    name: 'multipart/form-data',
    build: () => ({ ...valid()(), headers: { 'content-type': 'multipart/form-data; boundary=x' } }),
    status: 400,
    reason: /content-type/,
    stored: 'nothing',
  },
  {
    name: 'no content-type',
    build: () => ({ ...valid()(), headers: {} }),
    status: 400,
    reason: /content-type/,
    stored: 'nothing',
  },
  {
    name: 'a JSON body under the form content-type',
    build: () => ({ path: pathOf(POS_A), headers: FORM, body: payload().text }),
    status: 400,
    reason: /malformed form/,
    stored: 'nothing',
  },
  {
    name: 'a form body with raw non-ASCII bytes',
    build: () => ({
      path: pathOf(POS_A),
      headers: FORM,
      body: new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3d, 0xff, 0xfe]),
    }),
    status: 400,
    reason: /malformed form/,
    stored: 'nothing',
  },
  {
    name: 'a form body with a raw NUL',
    build: () => ({ path: pathOf(POS_A), headers: FORM, body: 'data=a\u0000b&signature=x' }),
    status: 400,
    reason: /malformed form/,
    stored: 'nothing',
  },
  {
    name: 'an empty body',
    build: () => ({ path: pathOf(POS_A), headers: FORM, body: '' }),
    status: 400,
    reason: /data missing/,
    stored: 'nothing',
  },
  {
    name: 'data missing (signature only)',
    build: () => ({ path: pathOf(POS_A), headers: FORM, body: formBody([['signature', 'AAAA']]) }),
    status: 400,
    reason: /data missing/,
    stored: 'nothing',
  },
  {
    name: 'data sent twice',
    build: () => {
      const p = payload();
      const data = encodeBase64Url(p.text);
      return {
        path: pathOf(POS_A),
        headers: FORM,
        body: formBody([
          ['data', data],
          ['data', data],
          ['signature', sign(SECRET_A, data)],
        ]),
      };
    },
    status: 400,
    reason: /repeated/,
    stored: 'nothing',
  },
  {
    name: 'an unknown pos_id',
    build: () => ({ ...valid()(), path: pathOf('00000000-0000-4000-8000-000000000000') }),
    status: 404,
    reason: /unknown pos_id/,
    stored: 'nothing',
  },
  {
    name: 'a pos_id with SQL in it',
    build: () => ({ ...valid()(), path: pathOf(encodeURIComponent("x' OR 1=1 --")) }),
    status: 404,
    stored: 'nothing',
  },
  {
    name: 'a pos_id with broken percent-encoding',
    build: () => ({ ...valid()(), path: '/webhooks/%E0%A4%A' }),
    status: 404,
    stored: 'nothing',
  },
  {
    name: 'GET instead of POST',
    build: () => ({ ...valid()(), method: 'GET', body: '' }),
    status: 405,
    stored: 'nothing',
  },
  { name: 'PUT instead of POST', build: () => ({ ...valid()(), method: 'PUT' }), status: 405, stored: 'nothing' },
  {
    name: 'a body over the limit (content-length declared)',
    build: () => ({
      path: pathOf(POS_A),
      headers: FORM,
      body: formBody([
        ['data', 'A'.repeat(MAX_BODY)],
        ['signature', 'x'],
      ]),
    }),
    status: 413,
    stored: 'nothing',
  },
  {
    name: 'a body over the limit sent chunked (no content-length)',
    build: () => ({
      path: pathOf(POS_A),
      headers: FORM,
      body: formBody([
        ['data', 'A'.repeat(MAX_BODY * 4)],
        ['signature', 'x'],
      ]),
      chunked: true,
    }),
    status: 413,
    stored: 'nothing',
  },
  {
    name: 'a signed valid delivery over the limit',
    build: () => {
      const p = payload({ padding: q('x'.repeat(MAX_BODY)) });
      return signed(p.text, { paymentId: p.paymentId });
    },
    status: 413,
    stored: 'nothing',
  },
  {
    name: 'a header of 20 KiB',
    build: () => ({ ...valid()(), headers: { ...FORM, 'x-filler': 'x'.repeat(20_480) } }),
    status: 431,
    stored: 'nothing',
  },
];
