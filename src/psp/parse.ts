import type { z } from 'zod';
import type {
  NormalizedPeriodRecord,
  NormalizedRecordCommon,
  NormalizedRegisterRecord,
  NormalizedWebhook,
  OperationMethod,
} from '../events/ingest-events';
import { PERIOD_FAST, readFast, REGISTER_FAST, WEBHOOK_FAST, type Read } from './fast-readers';
import {
  badPaymentId,
  MAX_RECEIVER_NAME_CHARS,
  overlongIdText,
  epochMillisToIso,
  fail,
  firstIssue,
  methodOf,
  minor,
  orNull,
  otherFields,
  readObject,
  recordTimeToIso,
  statusOf,
  type ParseOptions,
  type ParseResult,
} from './field-readers';
import { formatMinor, notWholeUnits, smallestUnit } from '../money';
import { isLosslessNumber, isPlainObject } from './json';
import { decodeBase64Url } from './signature';
import { captureWebhook, periodRecord, primaryWebhook, refundWebhook, registerRecord, voidWebhook } from './schemas';

/**
 * Normalizers: the PSP's JSON text → the exact records of src/events/ingest-events.ts. Every failure
 * names the field that failed, so that a rejected record can be shown to a person with its raw text.
 * The values are read by src/psp/field-readers.ts, fast where they can be by src/psp/fast-readers.ts.
 */

export type { ParseOptions, ParseResult };

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
  const badId =
    badPaymentId(d.paymentId, 'paymentId') ??
    overlongIdText([
      ['projectId', d.projectId],
      ['orderId', d.orderId],
      ['receiverName', (d as { receiverName?: string | null }).receiverName, MAX_RECEIVER_NAME_CHARS],
    ]);
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

/**
 * The first money field of a record that is not a whole number of its currency's smallest unit (1000.50 JPY: yen
 * have no decimals), refused naming it: no payment has such an amount, and stored it made the JPY payable a
 * fraction of a yen, so the whole payout was left out (`not_whole_units`). Null: every field is whole (or absent).
 */
function fractionOfUnit(
  currency: string | null | undefined,
  fields: ReadonlyArray<readonly [string, string | null]>,
): { ok: false; field: string; reason: string } | null {
  // per record on the sync's path: most currencies have hundredths, and nothing is converted for them
  if (!currency || smallestUnit(currency) === 1n) return null;
  for (const [field, value] of fields) {
    if (value === null) continue;
    const why = notWholeUnits(BigInt(value), currency);
    if (why !== null) return fail(field, `${formatMinor(BigInt(value))} ${currency} ${why}`);
  }
  return null;
}

/** A register record (2.10), exactly. Fields absent from the report come out as null. */
export const parseRegisterRecord = exactOnRefusal(readRegisterRecord);

function readRegisterRecord(text: string, opts: ParseOptions): ParseResult<NormalizedRegisterRecord> {
  const h = readRecordHead(text, opts, REGISTER_FAST, registerRecord);
  if (!h.ok) return h;
  const d = h.record;
  const money = {
    amount: minor(d.amount),
    originalAmount: minor(d.originalAmount),
    customerFee: minor(d.customerFee),
    merchantFee: minor(d.merchantFee),
    receiverAmount: minor(d.receiverAmount),
    receiverFee: minor(d.receiverFee),
    reserveAmount: minor(d.reserveAmount),
  };
  const fraction = fractionOfUnit(h.common.currency, Object.entries(money));
  if (fraction) return fraction;
  return {
    ok: true,
    value: {
      ...h.common,
      ...money,
      receiverName: orNull(d.receiverName),
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
  const money = {
    amount: d.amount.minor.toString(),
    customerFee: minor(d.customerFee),
    merchantFee: minor(d.merchantFee),
  };
  const fraction = fractionOfUnit(h.common.currency, Object.entries(money));
  if (fraction) return fraction;
  return { ok: true, value: { ...h.common, ...money, other: otherFields(h.root, PERIOD_MAPPED) } };
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
  const badId =
    badPaymentId(d.payment_id, 'payment_id') ??
    overlongIdText([
      ['order_id', d.order_id],
      ['transaction_id', d.transaction_id],
    ]);
  if (badId) return badId;
  const s = statusOf(d.status);
  if (!s.ok) return s;
  const operationId = operationIdOf(d.operation_id);
  if (operationId === undefined) return fail('operation_id', 'expected a string or a number');
  const longOperation = overlongIdText([['operation_id', operationId]]);
  if (longOperation) return longOperation;
  const created = recordTimeToIso(d.created_at, 'created_at', opts.now);
  if (!created.ok) return created;
  const processed = recordTimeToIso(d.processed_at, 'processed_at', opts.now);
  if (!processed.ok) return processed;
  if (d.fee?.currency != null && d.fee.currency !== '' && !/^[A-Z]{3}$/.test(d.fee.currency))
    return fail('fee.currency', 'expected a 3-letter uppercase currency code');
  const fraction =
    fractionOfUnit(d.currency, [['amount', d.amount.minor.toString()]]) ??
    fractionOfUnit(orNull(d.fee?.currency) ?? d.currency, [['fee.amount', minor(d.fee?.amount)]]);
  if (fraction) return fraction;
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
 * operation_id is in the schema of capture, void and refund only; on a primary body it passes through
 * unread, so it is read here (a number arrives as a LosslessNumber, which is not event data). undefined: neither
 * a string nor a number.
 */
function operationIdOf(op: unknown): string | null | undefined {
  if (op == null || op === '') return null;
  if (typeof op === 'string') return op;
  if (isLosslessNumber(op)) return op.value;
  return typeof op === 'number' ? String(op) : undefined;
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
