import type { NormalizedWebhook } from '../events/ingest-events';
import { parseAmount } from '../money';
import { isLosslessNumber, isPlainObject } from './json';
import type { Amount } from './schemas';

/**
 * Fast readers of the register, period and webhook schemas (zod's unions cost tens of µs a record, most of a
 * sync's parsing time). Each reads a field exactly as its schema in schemas.ts does when the value has
 * a plain, valid shape, and answers SLOW otherwise (a LosslessNumber, a wrong type, an invalid amount):
 * the record then goes through zod, which gives the verdict and its message. test/psp/fast-path.test.ts
 * checks that both ways agree on arbitrary and hostile records.
 */

export const SLOW = Symbol('slow');
export type Read = (v: unknown) => unknown;

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

export function readFast(
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
export const REGISTER_FAST: ReadonlyArray<readonly [string, Read]> = [
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
export const PERIOD_FAST: ReadonlyArray<readonly [string, Read]> = [
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
export const WEBHOOK_FAST: Record<NormalizedWebhook['kind'], ReadonlyArray<readonly [string, Read]>> = {
  primary: PRIMARY_FAST,
  recurring: PRIMARY_FAST,
  capture: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf], ['limit_info', limitInfoOf]],
  refund: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf], ['receipt_url', textOf]],
  void: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf]],
  other: [...WEBHOOK_BASE_FAST, ['operation_id', optionalIdTextOf]],
};
