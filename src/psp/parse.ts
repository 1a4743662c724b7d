import { DateTime } from 'luxon';
import type { z } from 'zod';
import {
  operationMethod,
  transactionStatus,
  type NormalizedPeriodRecord,
  type NormalizedRecordCommon,
  type NormalizedRegisterRecord,
  type NormalizedWebhook,
  type OperationMethod,
  type TransactionStatus,
} from '../events/ingest-events';
import { isLosslessNumber, isPlainObject, parseJsonExact, parseJsonFast, toPlainJson } from './json';
import { decodeBase64Url } from './signature';
import { parseAmount } from '../money';
import {
  captureWebhook,
  periodRecord,
  primaryWebhook,
  refundWebhook,
  registerRecord,
  voidWebhook,
  type Amount,
} from './schemas';

/**
 * Normalizers: the PSP's JSON text → the exact records of src/events/ingest-events.ts. Every failure
 * names the field that failed, so that a rejected record can be shown to a person with its raw text.
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; field: string; reason: string };

export interface ParseOptions {
  /** "now" for the plausibility check of times (default: the clock). */
  readonly now?: Date;
  /**
   * true: lossless-json and the zod schemas only, never the fast paths (tests compare both; the fast
   * paths give the same result or step aside).
   */
  readonly exactOnly?: boolean;
}

/** Earliest plausible record time; anything before is a unit or encoding error. */
export const EARLIEST_RECORD_TIME = Date.UTC(2000, 0, 1);
/** Latest plausible record time, relative to now. */
export const LATEST_RECORD_AHEAD_MS = 366 * 24 * 3600 * 1000;

const fail = (field: string, reason: string): { ok: false; field: string; reason: string } => ({
  ok: false,
  field,
  reason,
});

function readObject(text: string, opts: ParseOptions): ParseResult<Record<string, unknown>> {
  // Fast path (see parseJsonFast): numbers arrive as JS numbers whose text is exactly the source's,
  // which every schema and normalizer reads as it reads a LosslessNumber.
  const fast = opts.exactOnly ? null : parseJsonFast(text);
  const parsed = fast ? { ok: true as const, value: fast.value } : parseJsonExact(text);
  if (!parsed.ok) return fail('(root)', parsed.reason);
  if (!isPlainObject(parsed.value)) return fail('(root)', 'expected a JSON object');
  // Without a \u escape or a surrogate in the text, no string can hold NUL or an unpaired surrogate.
  if (!fast || fast.mayHaveUnstorableText) {
    const bad = unstorableText(parsed.value, '');
    if (bad) return bad;
  }
  return { ok: true, value: parsed.value };
}

// U+0000 and unpaired surrogates are valid in JSON text (as escapes) but PostgreSQL's jsonb and text
// refuse them: accepted, such a record would fail every append of its batch, on every run.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** The first string (member name or value) in a parsed tree that cannot be stored, as a rejection. */
export function unstorableText(value: unknown, path: string): { ok: false; field: string; reason: string } | null {
  const check = (s: string, where: string) => {
    const m = UNSTORABLE.exec(s);
    if (!m) return null;
    return fail(
      where || '(root)',
      m[0] === '\u0000'
        ? 'contains a NUL character (U+0000), which cannot be stored'
        : 'contains an unpaired UTF-16 surrogate (not Unicode text)',
    );
  };
  if (typeof value === 'string') return check(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = unstorableText(value[i], path ? `${path}.${i}` : String(i));
      if (r) return r;
    }
    return null;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      // The field path is stored too: write an unstorable name's characters as \uXXXX text.
      const name = UNSTORABLE.test(k)
        ? k.replace(UNSTORABLE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
        : k;
      const where = path ? `${path}.${name}` : name;
      const r = check(k, where) ?? unstorableText(v, where);
      if (r) return r;
    }
  }
  return null;
}

/** Longest payment id accepted: it becomes part of a stream name (the PSP's ids are UUIDs). */
export const MAX_PAYMENT_ID_CHARS = 256;

/** A payment id names the payment's stream: non-empty, bounded, no control characters. */
function badPaymentId(id: string, field: string): { ok: false; field: string; reason: string } | null {
  if (id.trim() === '') return fail(field, 'empty payment id');
  if (id.length > MAX_PAYMENT_ID_CHARS) return fail(field, `payment id longer than ${MAX_PAYMENT_ID_CHARS} characters`);
  if (/[\u0000-\u001f\u007f]/.test(id)) return fail(field, 'payment id contains a control character');
  return null;
}

function firstIssue(error: z.ZodError): { ok: false; field: string; reason: string } {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return fail(field, issue?.message ?? 'invalid');
}

function plausible(ms: number, now: Date): string | null {
  if (ms < EARLIEST_RECORD_TIME) return 'time before 2000-01-01 (wrong unit?)';
  if (ms > now.getTime() + LATEST_RECORD_AHEAD_MS) return 'time more than a year ahead of now';
  return null;
}

/** `dateTime`: milliseconds since the epoch (number or numeric string); "" or null → null. */
export function epochMillisToIso(value: string | null | undefined, now: Date = new Date()): ParseResult<string | null> {
  if (value == null || value.trim() === '') return { ok: true, value: null };
  if (!/^\d{1,15}$/.test(value.trim())) return fail('dateTime', 'expected whole milliseconds since the Unix epoch');
  const ms = Number(value.trim());
  const bad = plausible(ms, now);
  if (bad) return fail('dateTime', bad);
  return { ok: true, value: new Date(ms).toISOString() };
}

// Offsets as they exist on Earth: -12:00 … +14:59 (luxon would otherwise accept +99:00).
const RECORD_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-](?:0\d|1[0-4]):?[0-5]\d)?$/;

const PLAIN_UTC = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?Z?$/;

/**
 * The common shape (no zone or Z, at most milliseconds, a real calendar time from 2000 on) read without
 * luxon, which cost a webhook about 15 µs; anything else, valid or not, goes the luxon way, which also
 * words the errors. test/psp/record-time.test.ts checks both ways agree.
 */
function plainUtcMillis(t: string): number | undefined {
  const m = PLAIN_UTC.exec(t);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 2000 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, m[7] ? Number(m[7].padEnd(3, '0')) : 0);
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

/**
 * Record timestamps (`yyyy-MM-ddTHH:mm:ss.SSS`, no zone shown) are read as UTC. A zone, when one is
 * given, is honoured. "" or null → null.
 */
export function recordTimeToIso(
  value: string | null | undefined,
  field: string,
  now: Date = new Date(),
): ParseResult<string | null> {
  if (value === null || value === undefined || value.trim() === '') return { ok: true, value: null };
  const t = value.trim();
  const plain = plainUtcMillis(t);
  if (plain !== undefined && !plausible(plain, now)) return { ok: true, value: new Date(plain).toISOString() };
  if (!RECORD_TIME.test(t)) return fail(field, 'expected a timestamp yyyy-MM-ddTHH:mm:ss.SSS');
  const dt = DateTime.fromISO(t.replace(' ', 'T'), { zone: 'utc' });
  if (!dt.isValid) return fail(field, `not a valid time: ${dt.invalidExplanation ?? dt.invalidReason}`);
  const bad = plausible(dt.toMillis(), now);
  if (bad) return fail(field, bad);
  return { ok: true, value: dt.toUTC().toISO()! };
}

// Method and status are matched case-insensitively: a change of case is not a change of meaning.
function methodOf(v: string, field = 'method'): ParseResult<OperationMethod> {
  const r = operationMethod.safeParse(v.trim().toLowerCase());
  return r.success ? { ok: true, value: r.data } : fail(field, `unknown method ${JSON.stringify(v.slice(0, 40))}`);
}
function statusOf(v: string, field = 'status'): ParseResult<TransactionStatus> {
  const r = transactionStatus.safeParse(v.trim().toLowerCase());
  return r.success ? { ok: true, value: r.data } : fail(field, `unknown status ${JSON.stringify(v.slice(0, 40))}`);
}

const minor = (a: Amount | null | undefined): string | null => (a == null ? null : a.minor.toString());
const orNull = (s: string | null | undefined): string | null => (s == null || s === '' ? null : s);

function otherFields(obj: Record<string, unknown>, mapped: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!mapped.has(k)) out[k] = toPlainJson(v);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fast readers of the register and period schemas (zod's unions cost tens of µs a record, most of a
// sync's parsing time). Each reads a field exactly as its schema in schemas.ts does when the value has
// a plain, valid shape, and answers SLOW otherwise (a LosslessNumber, a wrong type, an invalid amount):
// the record then goes through zod, which gives the verdict and its message. test/psp/fast-path.test.ts
// checks that both ways agree on arbitrary and hostile records.

const SLOW = Symbol('slow');
type Read = (v: unknown) => unknown;

/** idText */
const idTextOf: Read = (v) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : SLOW);
/** optionalIdText */
const optionalIdTextOf: Read = (v) => (v == null || v === '' ? null : idTextOf(v));
/** text, timestamp: z.string().nullish() */
const textOf: Read = (v) => (v == null || typeof v === 'string' ? v : SLOW);
/** z.string() */
const stringOf: Read = (v) => (typeof v === 'string' ? v : SLOW);
/** currency */
const currencyOf: Read = (v) => (typeof v === 'string' && /^[A-Z]{3}$/.test(v) ? v : SLOW);
/** epochMillis */
const epochOf: Read = (v) => (v == null ? null : typeof v === 'string' ? v : typeof v === 'number' ? String(v) : SLOW);
/** amount (required, non-negative) */
const amountOf: Read = (v) => {
  if (typeof v !== 'string' && typeof v !== 'number') return SLOW;
  const raw = typeof v === 'number' ? String(v) : v;
  const r = parseAmount(raw, { allowNegative: false });
  return r.ok ? ({ minor: r.minor, raw } satisfies Amount) : SLOW;
};
/** optionalAmount */
const optionalAmountOf: Read = (v) => (v === '' || v == null ? null : amountOf(v));

function readFast(
  obj: Record<string, unknown>,
  spec: ReadonlyArray<readonly [string, Read]>,
): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const [name, read] of spec) {
    const v = read(obj[name]);
    if (v === SLOW) return null;
    out[name] = v;
  }
  return out;
}

// The fields of registerRecord / periodRecord that the normalizers read (the rest stay in `other`).
const REGISTER_FAST: ReadonlyArray<readonly [string, Read]> = [
  ['projectId', optionalIdTextOf],
  ['orderId', optionalIdTextOf],
  ['paymentId', idTextOf],
  ['amount', optionalAmountOf],
  ['currency', currencyOf],
  ['method', stringOf],
  ['status', stringOf],
  ['dateTime', epochOf],
  ['cardMask', textOf],
  ['payway', textOf],
  ['customerFee', optionalAmountOf],
  ['merchantFee', optionalAmountOf],
  ['entityName', textOf],
  ['projectName', textOf],
  ['originalAmount', optionalAmountOf],
  ['exchangeCurrency', textOf],
  ['tokenizationKind', textOf],
  ['authCode', optionalIdTextOf],
  ['rrnCode', optionalIdTextOf],
  ['description', textOf],
  ['payload', textOf],
  ['paymentSystem', textOf],
  ['recipientCardMask', textOf],
  ['reserveAmount', optionalAmountOf],
  ['receiverName', textOf],
  ['receiverAmount', optionalAmountOf],
  ['receiverFee', optionalAmountOf],
];
const PERIOD_FAST: ReadonlyArray<readonly [string, Read]> = [
  ['projectId', optionalIdTextOf],
  ['orderId', optionalIdTextOf],
  ['paymentId', idTextOf],
  ['amount', amountOf],
  ['currency', currencyOf],
  ['method', stringOf],
  ['status', stringOf],
  ['dateTime', epochOf],
  ['authCode', optionalIdTextOf],
  ['rrnCode', optionalIdTextOf],
  ['description', textOf],
  ['payload', textOf],
  ['customerFee', optionalAmountOf],
  ['merchantFee', optionalAmountOf],
  ['paymentSystem', textOf],
  ['recipientCardMask', textOf],
];

const plainOf = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && !isLosslessNumber(v);
/** feeObject.nullish() */
const feeOf: Read = (v) => {
  if (v == null) return v;
  if (!plainOf(v)) return SLOW;
  const amount = optionalAmountOf(v.amount);
  const currency = textOf(v.currency);
  return amount === SLOW || currency === SLOW ? SLOW : { ...v, amount, currency };
};
/** limitInfo.nullish() (validated, not read) */
const limitInfoOf: Read = (v) =>
  v == null || (plainOf(v) && textOf(v.retry_after) !== SLOW && textOf(v.description) !== SLOW) ? v : SLOW;
/** recurringObject.nullish() */
const recurringOf: Read = (v) => {
  if (v == null) return v;
  if (!plainOf(v)) return SLOW;
  const id = idTextOf(v.id);
  const status = textOf(v.status);
  return id === SLOW || status === SLOW ? SLOW : { ...v, id, status };
};
/** z.string().max(256).nullish() */
const shortTextOf: Read = (v) => (v == null || (typeof v === 'string' && v.length <= 256) ? v : SLOW);
/** A member outside the schema: passed through as it is. */
const asIs: Read = (v) => v;

const WEBHOOK_BASE_FAST: ReadonlyArray<readonly [string, Read]> = [
  ['payment_id', idTextOf],
  ['order_id', optionalIdTextOf],
  ['transaction_id', optionalIdTextOf],
  ['pos_id', textOf],
  ['mode', textOf],
  ['method', stringOf],
  ['amount', amountOf],
  ['currency', currencyOf],
  ['status', stringOf],
  ['status_code', optionalIdTextOf],
  ['status_description', textOf],
  ['fee', feeOf],
  ['created_at', textOf],
  ['processed_at', textOf],
];
const PRIMARY_FAST: ReadonlyArray<readonly [string, Read]> = [
  ...WEBHOOK_BASE_FAST,
  ['operation_id', asIs],
  ['gateway_order_id', textOf],
  ['billing_order_id', textOf],
  ['payway', textOf],
  ['eci', optionalIdTextOf],
  ['limit_info', limitInfoOf],
  ['cc_mask', textOf],
  ['cc_token', textOf],
  ['cc_token_expiration', textOf],
  ['customer_id', textOf],
  ['customer_phone', textOf],
  ['fixed_fee', feeOf],
  ['percent_fee', feeOf],
  ['payload', textOf],
  ['receipt_url', textOf],
  ['recurring', recurringOf],
  ['processed_amount', optionalAmountOf],
  ['processed_currency', shortTextOf],
];
/** The schema of each webhook kind (primaryWebhook, captureWebhook, voidWebhook, refundWebhook), read fast. */
const WEBHOOK_FAST: Record<NormalizedWebhook['kind'], ReadonlyArray<readonly [string, Read]>> = {
  primary: PRIMARY_FAST,
  recurring: PRIMARY_FAST,
  capture: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf], ['limit_info', limitInfoOf]],
  refund: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf], ['receipt_url', textOf]],
  void: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf]],
  other: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf]],
};

const REGISTER_MAPPED = new Set([
  'projectId',
  'orderId',
  'paymentId',
  'method',
  'status',
  'dateTime',
  'currency',
  'amount',
  'originalAmount',
  'customerFee',
  'merchantFee',
  'receiverName',
  'receiverAmount',
  'receiverFee',
  'reserveAmount',
  'cardMask',
  'payway',
]);

/**
 * A refusal found on a fast path is read again on the exact path, whose reasons (zod's messages name
 * what it saw: a LosslessNumber, not a number) are the ones stored: the same record is refused with the
 * same reason, so with the same event id, whichever path read it first.
 */
function exactOnRefusal<T>(
  read: (text: string, opts: ParseOptions) => ParseResult<T>,
): (text: string, opts?: ParseOptions) => ParseResult<T> {
  return (text, opts = {}) => {
    const r = read(text, opts);
    return r.ok || opts.exactOnly ? r : read(text, { ...opts, exactOnly: true });
  };
}

/** The fields register and period records share, as their schemas read them. */
type RecordCommon = {
  projectId?: string | null;
  orderId?: string | null;
  paymentId: string;
  method: string;
  status: string;
  dateTime?: string | null;
  currency: string;
};

/** The identification shared by register and period records (ids, method, status and time, checked), and the currency. */
function identityOf(d: RecordCommon, opts: ParseOptions): ParseResult<NormalizedRecordCommon> {
  const badId = badPaymentId(d.paymentId, 'paymentId');
  if (badId) return badId;
  const m = methodOf(d.method);
  if (!m.ok) return m;
  const s = statusOf(d.status);
  if (!s.ok) return s;
  const t = epochMillisToIso(d.dateTime, opts.now);
  if (!t.ok) return t;
  return {
    ok: true,
    value: {
      projectId: orNull(d.projectId),
      orderId: orNull(d.orderId),
      paymentId: d.paymentId,
      method: m.value,
      status: s.value,
      dateTime: t.value,
      currency: d.currency,
    },
  };
}

type RecordHead<T> =
  | { ok: true; root: Record<string, unknown>; record: T; common: NormalizedRecordCommon }
  | { ok: false; field: string; reason: string };

/**
 * What reading a register or a period record starts with: the JSON object, the record as its schema
 * reads it (by the fast reader `fast` when it can, else by zod), and the fields they share, normalized.
 */
function readRecordHead<T extends RecordCommon>(
  text: string,
  opts: ParseOptions,
  fast: ReadonlyArray<readonly [string, Read]>,
  schema: z.ZodType<T>,
): RecordHead<T> {
  const root = readObject(text, opts);
  if (!root.ok) return root;
  const fastRecord = opts.exactOnly ? null : readFast(root.value, fast);
  let d: T;
  if (fastRecord) d = fastRecord as T;
  else {
    const r = schema.safeParse(root.value);
    if (!r.success) return firstIssue(r.error);
    d = r.data;
  }
  const c = identityOf(d, opts);
  if (!c.ok) return c;
  return { ok: true, root: root.value, record: d, common: c.value };
}

/** A register record (2.10), exactly. Fields absent from the report come out as null. */
export const parseRegisterRecord = exactOnRefusal(readRegisterRecord);

function readRegisterRecord(text: string, opts: ParseOptions): ParseResult<NormalizedRegisterRecord> {
  const h = readRecordHead(text, opts, REGISTER_FAST, registerRecord);
  if (!h.ok) return h;
  const d = h.record;
  return {
    ok: true,
    value: {
      ...h.common,
      amount: minor(d.amount),
      originalAmount: minor(d.originalAmount),
      customerFee: minor(d.customerFee),
      merchantFee: minor(d.merchantFee),
      receiverName: orNull(d.receiverName),
      receiverAmount: minor(d.receiverAmount),
      receiverFee: minor(d.receiverFee),
      reserveAmount: minor(d.reserveAmount),
      cardMask: orNull(d.cardMask),
      payway: orNull(d.payway),
      other: otherFields(h.root, REGISTER_MAPPED),
    },
  };
}

const PERIOD_MAPPED = new Set([
  'projectId',
  'orderId',
  'paymentId',
  'method',
  'status',
  'dateTime',
  'currency',
  'amount',
  'customerFee',
  'merchantFee',
]);

/** A time-period transaction record (2.9), exactly. */
export const parsePeriodRecord = exactOnRefusal(readPeriodRecord);

function readPeriodRecord(text: string, opts: ParseOptions): ParseResult<NormalizedPeriodRecord> {
  const h = readRecordHead(text, opts, PERIOD_FAST, periodRecord);
  if (!h.ok) return h;
  const d = h.record;
  return {
    ok: true,
    value: {
      ...h.common,
      amount: d.amount.minor.toString(),
      customerFee: minor(d.customerFee),
      merchantFee: minor(d.merchantFee),
      other: otherFields(h.root, PERIOD_MAPPED),
    },
  };
}

const WEBHOOK_MAPPED = new Set([
  'payment_id',
  'order_id',
  'operation_id',
  'transaction_id',
  'method',
  'status',
  'status_code',
  'currency',
  'amount',
  'fee',
  'created_at',
  'processed_at',
]);

/** Which body a webhook has: `recurring` when a recurring object is present, else by method. */
export function webhookKindOf(method: OperationMethod, hasRecurring: boolean): NormalizedWebhook['kind'] {
  if (hasRecurring) return 'recurring';
  switch (method) {
    case 'purchase':
    case 'auth':
    case 'credit':
    case 'p2p':
    case 'lookup':
      return 'primary';
    case 'capture':
    case 'void':
    case 'refund':
      return method;
    default:
      return 'other';
  }
}

/**
 * `fee` as a bare number (the interface gives an object `{ amount, currency }`; the PSP's plugins also show
 * `"fee": 12.5`) is read as the total fee in the webhook's own currency. Without this a number passed the object
 * schema as an empty object and the fee was lost. A JSON number is never a plain object, so the object form
 * is untouched.
 */
function feeAsObject(obj: Record<string, unknown>): Record<string, unknown> {
  const fee = obj.fee;
  if (typeof fee !== 'number' && !isLosslessNumber(fee)) return obj;
  return { ...obj, fee: { amount: fee, currency: obj.currency } };
}

/** A webhook (6.2–6.5) from the decoded JSON text of its `data` field. */
export const parseWebhookPayload = exactOnRefusal(readWebhookPayload);

function readWebhookPayload(json: string, opts: ParseOptions): ParseResult<NormalizedWebhook> {
  const root = readObject(json, opts);
  if (!root.ok) return root;
  const obj = feeAsObject(root.value);
  if (typeof obj.method !== 'string') return fail('method', 'expected a method');
  const m = methodOf(obj.method);
  if (!m.ok) return m;
  const hasRecurring = isPlainObject(obj.recurring);
  const kind = webhookKindOf(m.value, hasRecurring);
  type Body = z.infer<typeof voidWebhook> & { operation_id?: string | null; recurring?: { id: string } | null };
  const fast = opts.exactOnly ? null : readFast(obj, WEBHOOK_FAST[kind]);
  let d: Body;
  if (fast) d = fast as Body;
  else {
    const schema =
      kind === 'primary' || kind === 'recurring'
        ? primaryWebhook
        : kind === 'capture'
          ? captureWebhook
          : kind === 'refund'
            ? refundWebhook
            : voidWebhook;
    const r = schema.safeParse(obj);
    if (!r.success) return firstIssue(r.error);
    d = r.data as Body;
  }
  const badId = badPaymentId(d.payment_id, 'payment_id');
  if (badId) return badId;
  const s = statusOf(d.status);
  if (!s.ok) return s;
  // operation_id is in the schema of capture, void and refund only; on a primary body it passes through
  // unread, so read it here (a number arrives as a LosslessNumber, which is not event data).
  const op = d.operation_id as unknown;
  const operationId =
    op == null || op === ''
      ? null
      : typeof op === 'string'
        ? op
        : isLosslessNumber(op)
          ? op.value
          : typeof op === 'number'
            ? String(op)
            : undefined;
  if (operationId === undefined) return fail('operation_id', 'expected a string or a number');
  const created = recordTimeToIso(d.created_at, 'created_at', opts.now);
  if (!created.ok) return created;
  const processed = recordTimeToIso(d.processed_at, 'processed_at', opts.now);
  if (!processed.ok) return processed;
  if (d.fee?.currency != null && d.fee.currency !== '' && !/^[A-Z]{3}$/.test(d.fee.currency))
    return fail('fee.currency', 'expected a 3-letter uppercase currency code');
  return {
    ok: true,
    value: {
      kind,
      paymentId: d.payment_id,
      orderId: orNull(d.order_id),
      operationId,
      transactionId: orNull(d.transaction_id),
      method: m.value,
      status: s.value,
      statusCode: orNull(d.status_code),
      currency: d.currency,
      amount: d.amount.minor.toString(),
      fee: minor(d.fee?.amount),
      feeCurrency: orNull(d.fee?.currency),
      createdAt: created.value,
      processedAt: processed.value,
      recurringId: d.recurring ? orNull(d.recurring.id) : null,
      other: otherFields(obj, WEBHOOK_MAPPED),
    },
  };
}

/**
 * Decodes a webhook's `data` field (base64url, padded or not) to its JSON text. Invalid base64url or
 * invalid UTF-8 are refused rather than repaired.
 */
export function decodeWebhookData(data: string): ParseResult<string> {
  const bytes = decodeBase64Url(data);
  if (bytes === null) return fail('data', 'not base64url');
  try {
    return { ok: true, value: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return fail('data', 'decoded data is not UTF-8');
  }
}
