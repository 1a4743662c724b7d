import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonExact, parseJsonFast, toPlainJson } from '../../src/psp/json';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload, type ParseOptions } from '../../src/psp/parse';

/**
 * The parsers' fast paths (JSON.parse with a proof of exactness, hand readers of the record schemas)
 * must give exactly what the lossless path with zod gives, or step aside. Differential properties on
 * arbitrary and hostile records: adversarial number texts, wrong types, repeated and prototype names,
 * escapes that decode to NUL or lone surrogates, deep nesting, invalid JSON.
 */

const now = new Date('2025-06-01T00:00:00Z');
const FAST: ParseOptions = { now };
const EXACT: ParseOptions = { now, exactOnly: true };
const RUN = { numRuns: 1500, interruptAfterTimeLimit: 6000 } as const;

const NUMBER_TEXTS = [
  '0',
  '-0',
  '0.0',
  '1',
  '7',
  '12.5',
  '12.50',
  '1.10',
  '0.05',
  '0.001',
  '100.005',
  '-12.34',
  '1e5',
  '1E+2',
  '2e-2',
  '1.5e1',
  '9007199254740991',
  '9007199254740993',
  '123456789012345678901234567890',
  '1e21',
  '1e400',
  '-1e400',
  '0.1',
  '5e-324',
  '1000000000000000',
  '10000000000000.01',
  '99999999999999.99',
  '1735700000000',
  '00',
  '01',
  '1.',
  '.5',
  '-',
  '+1',
  '--1',
  '1e',
];

const numberText = fc.oneof(
  fc.constantFrom(...NUMBER_TEXTS),
  fc.integer({ min: -1e6, max: 1e15 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 4 }))
    .map(([w, f]) => (f ? `${w}.${f}` : `${w}`)),
);

const stringText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '"UAH"',
    '"usd"',
    '""',
    '"purchase"',
    '"REFUND"',
    '"success"',
    '" pending "',
    '"12.50"',
    '"1e3"',
    '"-5"',
    '"\\u0000"',
    '"a\\ud800b"',
    '"\\udc00"',
    '"\\ud83d\\ude00"',
    '"\\u0410\\u0411"',
    '"💳"',
    '"\ud800"',
    '"1735700000000"',
    '"capture"',
    '"refund"',
    '"void"',
    '"dispute"',
    '"2025-03-01T10:00:00.000"',
    '"2025-02-30T10:00:00.000"',
    JSON.stringify('x'.repeat(300)),
  ),
);

const leaf = fc.oneof(
  { weight: 3, arbitrary: numberText },
  { weight: 3, arbitrary: stringText },
  fc.constantFrom('null', 'true', 'false'),
);

const valueText: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: leaf },
    fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
    fc
      .array(
        fc.tuple(
          fc.constantFrom('a', 'amount', 'currency', '__proto__', 'x', 'id', 'status', 'retry_after', 'description'),
          tie('v'),
        ),
        { maxLength: 3 },
      )
      .map((es) => `{${es.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).v;

const REGISTER_BASE: Array<[string, string]> = [
  ['projectId', '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"'],
  ['orderId', '"order-1"'],
  ['paymentId', '"2f1c7a9e-0000-4000-8000-000000000001"'],
  ['amount', '102.5'],
  ['currency', '"UAH"'],
  ['method', '"purchase"'],
  ['status', '"success"'],
  ['dateTime', '1735700000000'],
  ['cardMask', '"444455******1111"'],
  ['payway', '"card"'],
  ['customerFee', '2.5'],
  ['merchantFee', '1.75'],
  ['entityName', '"Market LLC"'],
  ['projectName', '"Market"'],
  ['originalAmount', '100'],
  ['exchangeAmount', 'null'],
  ['exchangeCurrency', 'null'],
  ['exchangeRate', 'null'],
  ['tokenizationKind', 'null'],
  ['authCode', '"123456"'],
  ['rrnCode', '412345678901'],
  ['description', '"Order 1"'],
  ['payload', 'null'],
  ['paymentSystem', '"visa"'],
  ['recipientCardMask', 'null'],
  ['reserveAmount', '0'],
  ['receiverName', '"Shop A"'],
  ['receiverAmount', '58.25'],
  ['receiverFee', '1.75'],
];
const PERIOD_BASE: Array<[string, string]> = [
  ['projectId', '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"'],
  ['orderId', '"order-1"'],
  ['paymentId', '"2f1c7a9e-0000-4000-8000-000000000001"'],
  ['amount', '"100.00"'],
  ['currency', '"UAH"'],
  ['method', '"purchase"'],
  ['status', '"success"'],
  ['dateTime', '1735700000000'],
  ['authCode', '"123456"'],
  ['rrnCode', '""'],
  ['description', '"Order 1"'],
  ['payload', '""'],
  ['customerFee', '"2.50"'],
  ['merchantFee', '"1.75"'],
];
const WEBHOOK_BASE: Array<[string, string]> = [
  ['payment_id', '"2f1c7a9e-0000-4000-8000-000000000001"'],
  ['order_id', '"order-1"'],
  ['operation_id', '"op-1"'],
  ['transaction_id', '"t-1"'],
  ['pos_id', '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"'],
  ['mode', '"direct"'],
  ['method', '"purchase"'],
  ['amount', '12.5'],
  ['currency', '"UAH"'],
  ['status', '"success"'],
  ['status_code', '"1000"'],
  ['fee', '{"amount":0.25,"currency":"UAH"}'],
  ['created_at', '"2025-03-01T10:00:00.000"'],
  ['processed_at', '"2025-03-01T10:00:02.000"'],
];

type Edit =
  | { kind: 'set'; at: number; value: string }
  | { kind: 'drop'; at: number }
  | { kind: 'add'; name: string; value: string }
  | { kind: 'repeat'; at: number; value: string };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: valueText }) },
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('add' as const),
    name: fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom(
        '__proto__',
        'constructor',
        'recurring',
        'extra',
        'fee',
        'fixed_fee',
        'percent_fee',
        'limit_info',
        'operation_id',
        'eci',
        'processed_amount',
        'processed_currency',
        'receipt_url',
      ),
    ),
    value: valueText,
  }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), value: fc.oneof(valueText, fc.constant('')) }),
);

/** A record text from a base with edits applied; `spacing` puts whitespace between tokens. */
function recordText(base: ReadonlyArray<[string, string]>) {
  return fc.tuple(fc.array(edit, { maxLength: 4 }), fc.boolean()).map(([edits, spaced]) => {
    const entries = base.map(([k, v]) => [k, v] as [string, string]);
    for (const e of edits) {
      if (entries.length === 0) break;
      const at = 'at' in e ? e.at % entries.length : 0;
      if (e.kind === 'set') entries[at]![1] = e.value;
      else if (e.kind === 'drop') entries.splice(at, 1);
      else if (e.kind === 'add') entries.push([e.name, e.value]);
      // '' repeats the member with its own value (a duplicate lossless-json accepts).
      else entries.push([entries[at]![0], e.value === '' ? entries[at]![1] : e.value]);
    }
    const sep = spaced ? ' \n' : '';
    return `{${sep}${entries.map(([k, v]) => `${JSON.stringify(k)}${sep}:${sep}${v}`).join(`,${sep}`)}${sep}}`;
  });
}

describe('parseJsonFast', () => {
  it('is either the lossless tree read as plain JSON, or steps aside', () => {
    fc.assert(
      fc.property(fc.oneof(valueText, recordText(REGISTER_BASE)), (text) => {
        const fast = parseJsonFast(text);
        const exact = parseJsonExact(text);
        if (fast === null) return;
        expect(exact.ok).toBe(true);
        if (exact.ok) expect(fast.value).toEqual(toPlainJson(exact.value));
      }),
      RUN,
    );
  });

  it('steps aside for every number whose text is not its shortest round trip', () => {
    for (const t of [
      '1e5',
      '1.10',
      '12.50',
      '-0',
      '9007199254740993',
      '123456789012345678901234567890',
      '1e400',
      '0.0',
    ]) {
      expect(parseJsonFast(`{"amount":${t}}`), t).toBeNull();
    }
    expect(parseJsonFast('{"amount":12.5,"fee":0.05}')?.value).toEqual({ amount: 12.5, fee: 0.05 });
  });

  it('reads an integer token without converting it exactly when the conversions would take it (issue 26)', () => {
    const token = fc
      .tuple(fc.constantFrom('', '-', '--'), fc.stringMatching(/^[0-9]{1,18}$/), fc.constantFrom('', '-0', '.5', 'e1'))
      .map(([sign, digits, tail]) => `${sign}${digits}${tail}`);
    fc.assert(
      fc.property(token, (t) => {
        const n = Number(t);
        const exact = String(n) === t && !(Number.isInteger(n) && !Number.isSafeInteger(n));
        const fast = parseJsonFast(`{"amount":${t},"at":[${t}]}`);
        expect(fast !== null, t).toBe(exact);
        if (fast) expect(fast.value).toEqual({ amount: n, at: [n] });
      }),
      RUN,
    );
    for (const t of ['00', '-00', '01', '-01', '--1', '1-0', '0-1', '-0'])
      expect(parseJsonFast(`{"amount":${t}}`), t).toBeNull();
    expect(parseJsonFast('{"a":0,"b":-1,"c":123456789012345,"d":-123456789012345}')?.value).toEqual({
      a: 0,
      b: -1,
      c: 123456789012345,
      d: -123456789012345,
    });
  });

  it('steps aside for repeated names, __proto__, invalid JSON and deep nesting', () => {
    expect(parseJsonFast('{"a":1,"a":1}')).toBeNull();
    expect(parseJsonFast('{"a":{"b":1,"b":2}}')).toBeNull();
    expect(parseJsonFast('{"__proto__":{"x":1}}')).toBeNull();
    expect(parseJsonFast('{"a":1,}')).toBeNull();
    expect(parseJsonFast(`${'['.repeat(40)}${']'.repeat(40)}`)).toBeNull();
    expect(parseJsonFast('{"a":":","b":[1,{"c":"}"}]}')?.value).toEqual({ a: ':', b: [1, { c: '}' }] });
  });

  it('flags text that may hold NUL or unpaired surrogates', () => {
    expect(parseJsonFast('{"a":"x"}')?.mayHaveUnstorableText).toBe(false);
    expect(parseJsonFast('{"a":"\\u0000"}')?.mayHaveUnstorableText).toBe(true);
    expect(parseJsonFast('{"a":"\ud83d\ude00"}')?.mayHaveUnstorableText).toBe(true);
  });
});

describe('record parsers: fast path and exact path agree', () => {
  it('register records', () => {
    fc.assert(
      fc.property(recordText(REGISTER_BASE), (text) => {
        expect(parseRegisterRecord(text, FAST)).toEqual(parseRegisterRecord(text, EXACT));
      }),
      RUN,
    );
  });

  it('period records', () => {
    fc.assert(
      fc.property(recordText(PERIOD_BASE), (text) => {
        expect(parsePeriodRecord(text, FAST)).toEqual(parsePeriodRecord(text, EXACT));
      }),
      RUN,
    );
  });

  it('webhook bodies', () => {
    fc.assert(
      fc.property(recordText(WEBHOOK_BASE), (text) => {
        expect(parseWebhookPayload(text, FAST)).toEqual(parseWebhookPayload(text, EXACT));
      }),
      RUN,
    );
  });

  it('takes the fast path for the records the PSP sends, with exact amounts', () => {
    const text = `{${REGISTER_BASE.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
    expect(parseJsonFast(text)).not.toBeNull();
    const r = parseRegisterRecord(text, FAST);
    expect(r.ok && r.value).toMatchObject({
      amount: '10250',
      originalAmount: '10000',
      customerFee: '250',
      merchantFee: '175',
      receiverAmount: '5825',
    });
    expect(r.ok && r.value.other).toMatchObject({ rrnCode: 412345678901, exchangeRate: null });
    expect(r).toEqual(parseRegisterRecord(text, EXACT));
    const body = `{${WEBHOOK_BASE.map(([k, v]) => `"${k}":${v}`).join(',')},"recurring":{"id":77,"status":"active"}}`;
    expect(parseJsonFast(body)).not.toBeNull();
    const w = parseWebhookPayload(body, FAST);
    expect(w.ok && w.value).toMatchObject({
      kind: 'recurring',
      amount: '1250',
      fee: '25',
      feeCurrency: 'UAH',
      recurringId: '77',
      operationId: 'op-1',
    });
    expect(w).toEqual(parseWebhookPayload(body, EXACT));
  });
});
