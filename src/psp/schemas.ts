import { z } from 'zod';
import { operationMethod, transactionStatus } from '../events/ingest-events';
import { parseAmount, type Minor } from '../money';
import { isLosslessNumber, type LosslessNumber } from './json';

/**
 * Zod schemas of every resource of the PSP's interface (docs: /work/shared/psp-interface.md).
 *
 * Two families:
 * - incoming (records, webhooks, responses): read from the lossless JSON tree of `parseJsonExact`, so a
 *   JSON number arrives as a `LosslessNumber` with its source text. Unknown fields are kept
 *   (`z.looseObject`), null is accepted wherever a value may be missing, and amounts become
 *   `{ minor, raw }` (exact bigint minor units plus the text as received).
 * - outgoing (purchase requests): plain objects built by recon; amounts are decimal strings or numbers
 *   in currency units ("12.50"); see src/psp/validate.ts for the merchant-side rules.
 */

// ---------------------------------------------------------------------------------------------
// Shared field types

export const uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'expected a UUID');
/** ISO 4217 shape. Codes outside the ISO list (e.g. a new or test code such as XTS) are kept, not flagged. */
export const currency = z.string().regex(/^[A-Z]{3}$/, 'expected a 3-letter uppercase currency code');
// The methods and statuses the recorded events carry (src/events/ingest-events.ts) are the PSP's.
export const method = operationMethod;
export type Method = z.infer<typeof method>;
export const status = transactionStatus;
export type Status = z.infer<typeof status>;
export const mode = z.enum(['direct', 'hosted']);
export type Mode = z.infer<typeof mode>;
export const recurringStatus = z.enum(['init', 'active', 'canceled']);
export const intervalUnit = z.enum(['day', 'week', 'month', 'quarter', 'year']);
export type IntervalUnit = z.infer<typeof intervalUnit>;

/** An amount as received: exact minor units and the source text. */
export interface Amount {
  readonly minor: Minor;
  readonly raw: string;
}

const lossless = z.custom<LosslessNumber>((v) => isLosslessNumber(v), 'expected a number');

/** Text of a JSON number or string, before interpretation. */
export const numberText = z
  .union([lossless, z.string(), z.number()])
  .transform((v) => (typeof v === 'object' ? v.value : String(v)));

function amountOf(opts: { allowNegative: boolean }) {
  return numberText.transform((raw, ctx): Amount => {
    const r = parseAmount(raw, { allowNegative: opts.allowNegative });
    if (!r.ok) {
      ctx.addIssue({ code: 'custom', message: r.reason });
      return z.NEVER;
    }
    return { minor: r.minor, raw };
  });
}

/** A non-negative amount (number or decimal string, at most two decimals). */
export const amount = amountOf({ allowNegative: false });
/** A signed amount (for fields whose sign the PSP does not describe: kept in `other`, never summed). */
export const signedAmount = amountOf({ allowNegative: true });
/** An optional amount: absent, null and "" all mean "no value". */
export const optionalAmount = z
  .union([z.literal(''), z.null(), z.undefined(), lossless, z.string(), z.number()])
  .transform((v, ctx): Amount | null => {
    if (v === '' || v === null || v === undefined) return null;
    const r = amount.safeParse(v);
    if (!r.success) {
      ctx.addIssue({ code: 'custom', message: r.error.issues[0]?.message ?? 'invalid amount' });
      return z.NEVER;
    }
    return r.data;
  })
  .optional();

/** A string the PSP may leave empty or null. */
const text = z.string().nullish();
/** A string or number held as text (ids, codes and masks are sometimes sent as numbers). */
const idText = z
  .union([z.string(), lossless, z.number()])
  .transform((v) => (typeof v === 'object' ? v.value : String(v)));
const optionalIdText = z
  .union([idText, z.null(), z.undefined()])
  .transform((v) => (v == null || v === '' ? null : v))
  .optional();
/** Record timestamp yyyy-MM-ddTHH:mm:ss.SSS, no zone shown (read as UTC by the parsers). */
export const timestamp = z.string().nullish();
/** Milliseconds since the epoch as a number or numeric string, or "" when not yet set. */
export const epochMillis = z
  .union([lossless, z.string(), z.number(), z.null(), z.undefined()])
  .transform((v) => (v == null ? null : typeof v === 'object' ? v.value : String(v)))
  .optional();

// ---------------------------------------------------------------------------------------------
// 2.3, 2.4, 2.6: pieces of requests (outgoing)

/** A decimal in currency units: a string ("12.50") or a number. Validated by validate.ts. */
export const decimalIn = z.union([z.string(), z.number()]);

export const splitItem = z.looseObject({
  amount: decimalIn,
  sub_merchant_id: z.string(),
});
export type SplitItem = z.infer<typeof splitItem>;

export const browserFingerprint = z.looseObject({
  browserColorDepth: z.string().optional(),
  browserScreenHeight: z.string().optional(),
  browserScreenWidth: z.string().optional(),
  browserJavaEnabled: z.string().optional(),
  browserLanguage: z.string().optional(),
  browserTimeZone: z.string().optional(),
  browserTimeZoneOffset: z.string().optional(),
  browserAcceptHeader: z.string().optional(),
  browserIpAddress: z.string().optional(),
  browserUserAgent: z.string().optional(),
});
export type BrowserFingerprint = z.infer<typeof browserFingerprint>;

export const initRecurring = z.looseObject({
  interval_unit: z.string(),
  interval_count: z.number(),
  retry_attempts: z.number().optional(),
  retry_interval_hours: z.number().optional(),
  start_date: z.string().optional(),
  expiry_date: z.string().optional(),
  time: z.string().optional(),
  notification_url: z.string().optional(),
  amount: decimalIn.optional(),
});
export type InitRecurring = z.infer<typeof initRecurring>;

// ---------------------------------------------------------------------------------------------
// 2.1, 2.2: purchase requests (outgoing)

const purchaseCommon = {
  pos_id: z.string(),
  method: z.literal('purchase'),
  amount: decimalIn,
  currency: z.string(),
  description: z.string(),
  order_id: z.string(),
  order_3ds_bypass: z.string(),
  customer_id: z.string().optional(),
  customer_fname: z.string().optional(),
  customer_lname: z.string().optional(),
  customer_patronym: z.string().optional(),
  customer_email: z.string(),
  customer_phone: z.string(),
  customer_country: z.string().optional(),
  customer_birthday: z.string().optional(),
  customer_tax_id: z.string().optional(),
  customer_lang: z.string().optional(),
  payway: z.string().optional(),
  server_url: z.string().optional(),
  result_url: z.string().optional(),
  merchant_mcc: z.string().optional(),
  payload: z.string().optional(),
  validation_url: z.string().optional(),
  split: z.array(splitItem),
};

export const directPurchaseRequest = z.looseObject({
  ...purchaseCommon,
  mode: z.literal('direct'),
  cc_number: z.string().optional(),
  exp_month: z.union([z.number(), z.string()]).optional(),
  exp_year: z.union([z.number(), z.string()]).optional(),
  card_cvv: z.string().optional(),
  cc_token: z.string().optional(),
  customer_fname: z.string(),
  customer_lname: z.string(),
  customer_ip: z.string(),
  customer_referrer: z.string().optional(),
  browser_fingerprint: browserFingerprint.optional(),
  cryptogram: z.record(z.string(), z.unknown()).optional(),
  init_recurring: initRecurring.optional(),
});
export type DirectPurchaseRequest = z.infer<typeof directPurchaseRequest>;

export const hostedPurchaseRequest = z.looseObject({
  ...purchaseCommon,
  mode: z.literal('hosted'),
  customer_patronym: z.string(),
  init_recurring: initRecurring.optional(),
});
export type HostedPurchaseRequest = z.infer<typeof hostedPurchaseRequest>;

export const purchaseRequest = z.discriminatedUnion('mode', [directPurchaseRequest, hostedPurchaseRequest]);
export type PurchaseRequest = DirectPurchaseRequest | HostedPurchaseRequest;

/** 4.2: hosted purchase with `init_recurring` (split is not required there). */
export const subscriptionPurchaseRequest = z.looseObject({
  ...purchaseCommon,
  mode: z.literal('hosted'),
  split: z.array(splitItem).optional(),
  init_recurring: initRecurring,
});
export type SubscriptionPurchaseRequest = z.infer<typeof subscriptionPurchaseRequest>;

// ---------------------------------------------------------------------------------------------
// 2.7, 2.8, 2.6 (response side): objects inside records and webhooks (incoming)

export const feeObject = z.looseObject({ amount: optionalAmount, currency: text });
export type FeeObject = z.infer<typeof feeObject>;

export const limitInfo = z.looseObject({ retry_after: timestamp, description: text });
export type LimitInfo = z.infer<typeof limitInfo>;

export const recurringObject = z.looseObject({ id: idText, status: z.string().nullish() });
export type RecurringObject = z.infer<typeof recurringObject>;

// ---------------------------------------------------------------------------------------------
// 2.5: payment record (incoming)

export const paymentRecord = z.looseObject({
  payment_id: z.string(),
  order_id: z.string().max(256).nullish(),
  gateway_order_id: text,
  billing_order_id: text,
  transaction_id: optionalIdText,
  operation_id: optionalIdText,
  pos_id: z.string().nullish(),
  mode: z.string().nullish(),
  method: z.string(),
  amount: optionalAmount,
  currency: z.string().nullish(),
  description: z.string().max(2048).nullish(),
  payway: text,
  status: z.string(),
  status_code: optionalIdText,
  status_description: text,
  user_action_required: z.boolean().nullish(),
  user_action_url: text,
  eci: optionalIdText,
  mcc: optionalIdText,
  options_3ds: text,
  cc_mask: text,
  cc_token: text,
  cc_token_expiration: text,
  result_url: text,
  created_at: timestamp,
  processed_at: timestamp,
  processing_time: timestamp,
  payload: text,
  bank_short_name: text,
  receipt_url: text,
  recurring: recurringObject.nullish(),
});
export type PaymentRecord = z.infer<typeof paymentRecord>;

// ---------------------------------------------------------------------------------------------
// 2.9: time-period transaction record (incoming)

export const periodRecord = z.looseObject({
  projectId: optionalIdText,
  orderId: optionalIdText,
  paymentId: idText,
  amount,
  currency,
  method: z.string(),
  status: z.string(),
  dateTime: epochMillis,
  authCode: optionalIdText,
  rrnCode: optionalIdText,
  description: text,
  payload: text,
  customerFee: optionalAmount,
  merchantFee: optionalAmount,
  paymentSystem: text,
  recipientCardMask: text,
});
export type PeriodRecord = z.infer<typeof periodRecord>;

// ---------------------------------------------------------------------------------------------
// 2.10: register record (incoming). Which fields are present depends on transaction_details.

export const registerRecord = z.looseObject({
  projectId: optionalIdText,
  orderId: optionalIdText,
  paymentId: idText,
  amount: optionalAmount,
  currency,
  method: z.string(),
  status: z.string(),
  dateTime: epochMillis,
  cardMask: text,
  payway: text,
  customerFee: optionalAmount,
  merchantFee: optionalAmount,
  entityName: text,
  projectName: text,
  originalAmount: optionalAmount,
  exchangeAmount: z.unknown().optional(),
  exchangeCurrency: text,
  exchangeRate: z.unknown().optional(),
  tokenizationKind: text,
  authCode: optionalIdText,
  rrnCode: optionalIdText,
  description: text,
  payload: text,
  paymentSystem: text,
  recipientCardMask: text,
  reserveAmount: optionalAmount,
  receiverName: text,
  receiverAmount: optionalAmount,
  receiverFee: optionalAmount,
});
export type RegisterRecord = z.infer<typeof registerRecord>;

/** Field names accepted in `transaction_details` (2.10 plus projectId). */
export const REGISTER_FIELDS = [
  'projectId',
  'orderId',
  'paymentId',
  'amount',
  'currency',
  'method',
  'status',
  'dateTime',
  'cardMask',
  'payway',
  'customerFee',
  'merchantFee',
  'entityName',
  'projectName',
  'originalAmount',
  'exchangeAmount',
  'exchangeCurrency',
  'exchangeRate',
  'tokenizationKind',
  'authCode',
  'rrnCode',
  'description',
  'payload',
  'paymentSystem',
  'recipientCardMask',
  'reserveAmount',
  'receiverName',
  'receiverAmount',
  'receiverFee',
] as const;
export type RegisterField = (typeof REGISTER_FIELDS)[number];
/** The fields the PSP sends when `transaction_details` is absent. */
export const REGISTER_DEFAULT_FIELDS: readonly RegisterField[] = [
  'orderId',
  'paymentId',
  'amount',
  'currency',
  'method',
  'status',
  'dateTime',
  'cardMask',
  'payway',
  'customerFee',
  'merchantFee',
];
// ---------------------------------------------------------------------------------------------
// 4.7: register report responses (incoming)

export const registerStartRequest = z.object({
  project_id: z.string(),
  start_date: z.string(),
  end_date: z.string(),
  statuses: z.array(status).optional(),
  methods: z.array(method).optional(),
  transaction_details: z.array(z.string()).optional(),
});
export type RegisterStartRequest = z.infer<typeof registerStartRequest>;

export const registerStartResponse = z.looseObject({
  report_id: idText,
  count: z.union([lossless, z.number(), z.string()]).transform((v, ctx) => {
    const t = typeof v === 'object' ? v.value : String(v);
    if (!/^\d{1,15}$/.test(t)) {
      ctx.addIssue({ code: 'custom', message: 'expected a whole number of records' });
      return z.NEVER;
    }
    return Number(t);
  }),
});
export type RegisterStartResponse = z.infer<typeof registerStartResponse>;

export const reportNotReady = z.looseObject({ message: z.string().nullish(), code: z.literal('report_not_ready') });
export type ReportNotReady = z.infer<typeof reportNotReady>;

/** Fetch response when the whole body is in memory: the records, or not ready. */
export const registerFetchResponse = z.union([
  reportNotReady,
  z.array(z.unknown()),
  z.looseObject({}).transform((o) => o),
]);

// ---------------------------------------------------------------------------------------------
// 6.2–6.5: webhook bodies (incoming, the decoded `data` JSON)

const webhookBase = {
  payment_id: idText,
  order_id: optionalIdText,
  transaction_id: optionalIdText,
  pos_id: z.string().nullish(),
  mode: z.string().nullish(),
  method: z.string(),
  amount,
  currency,
  status: z.string(),
  status_code: optionalIdText,
  status_description: text,
  fee: feeObject.nullish(),
  created_at: timestamp,
  processed_at: timestamp,
};

export const primaryWebhook = z.looseObject({
  ...webhookBase,
  gateway_order_id: text,
  billing_order_id: text,
  payway: text,
  eci: optionalIdText,
  limit_info: limitInfo.nullish(),
  cc_mask: text,
  cc_token: text,
  cc_token_expiration: text,
  customer_id: text,
  customer_phone: text,
  fixed_fee: feeObject.nullish(),
  percent_fee: feeObject.nullish(),
  payload: text,
  receipt_url: text,
  recurring: recurringObject.nullish(),
  processed_amount: optionalAmount,
  processed_currency: z.string().max(256).nullish(),
});
export type PrimaryWebhook = z.infer<typeof primaryWebhook>;

export const captureWebhook = z.looseObject({
  ...webhookBase,
  operation_id: optionalIdText,
  limit_info: limitInfo.nullish(),
});
export type CaptureWebhook = z.infer<typeof captureWebhook>;
export const voidWebhook = z.looseObject({ ...webhookBase, operation_id: optionalIdText });
export type VoidWebhook = z.infer<typeof voidWebhook>;
export const refundWebhook = z.looseObject({ ...webhookBase, operation_id: optionalIdText, receipt_url: text });
export type RefundWebhook = z.infer<typeof refundWebhook>;

/** The webhook form fields of 6.1 (application/x-www-form-urlencoded). */
export const webhookForm = z.object({ data: z.string().min(1), signature: z.string().min(1) });
export type WebhookForm = z.infer<typeof webhookForm>;

// ---------------------------------------------------------------------------------------------
// 7: error bodies

const errorCode = z.union([z.string(), lossless, z.number()]);

/** One entry of an `args` list: `{ field_name, violation }` (the PSP's plugins) or a plain sentence (an SDK). */
const errorViolation = z.union([
  z.string(),
  z.looseObject({ field_name: z.string().nullish(), violation: z.union([z.string(), z.number()]).nullish() }),
]);

/**
 * Error bodies as the PSP's own material shows them: `{ message, args: { code } }` (the live service),
 * `{ message, code }`, and `{ message, code?, args: [{ field_name, violation }, …] }` or `args: ["…", …]`
 * (its plugins and a production SDK). Each part is read on its own, so one odd part never loses the others.
 */
export const pspErrorBody = z.looseObject({
  message: z.unknown().optional(),
  code: z.unknown().optional(),
  args: z.unknown().optional(),
});
export type PspErrorBody = z.infer<typeof pspErrorBody>;

export interface PspErrorFields {
  readonly code?: string;
  readonly message?: string;
  /** `field_name: violation`, or the sentence given */
  readonly violations: readonly string[];
}

const codeText = (v: unknown): string | undefined => {
  const c = errorCode.safeParse(v);
  if (!c.success) return undefined;
  return typeof c.data === 'object' ? c.data.value : String(c.data);
};

/** The code (from `args.code`, else `code`), the message and the violations of an error body. */
export function pspErrorFields(body: PspErrorBody): PspErrorFields {
  const args = body.args;
  const list = Array.isArray(args) ? args : [];
  const fromArgs =
    args && typeof args === 'object' && !Array.isArray(args) ? (args as { code?: unknown }).code : undefined;
  const violations = list.map((entry) => {
    const v = errorViolation.safeParse(entry);
    if (!v.success) return JSON.stringify(entry);
    if (typeof v.data === 'string') return v.data;
    const field = v.data.field_name ?? '';
    const what = v.data.violation == null ? '' : String(v.data.violation);
    return field && what ? `${field}: ${what}` : field || what || JSON.stringify(entry);
  });
  const code = codeText(fromArgs) ?? codeText(body.code);
  return {
    ...(code !== undefined ? { code } : {}),
    ...(typeof body.message === 'string' ? { message: body.message } : {}),
    violations,
  };
}
