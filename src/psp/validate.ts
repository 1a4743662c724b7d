import { DateTime } from 'luxon';
import type { z } from 'zod';
import { luhnValid } from '../input-rules';
import { formatMinor, parseAmount, type Minor } from '../money';
import {
  directPurchaseRequest,
  hostedPurchaseRequest,
  intervalUnit,
  subscriptionPurchaseRequest,
  type DirectPurchaseRequest,
  type HostedPurchaseRequest,
  type InitRecurring,
  type IntervalUnit,
  type PurchaseRequest,
  type SubscriptionPurchaseRequest,
} from './schemas';

/**
 * Merchant-side checks of outgoing requests (2.1–2.4, 2.6, 8). Every violation names its field and
 * never quotes a card number or CVV: messages describe the rule, not the value.
 */

export interface Violation {
  readonly field: string;
  readonly message: string;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; violations: Violation[] };

export interface ValidateOptions {
  /** The clock for the card expiry check (default: now). */
  readonly now?: Date;
}

export const MAX_PAYLOAD_CHARS = 4000;
export const MAX_ORDER_ID_CHARS = 256;
export const MAX_INTERVAL_COUNT = 30;
export const DEFAULT_RETRY_ATTEMPTS = 3;
export const MAX_RETRY_ATTEMPTS = 7;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const CARD_FIELDS = ['cc_number', 'exp_month', 'exp_year', 'card_cvv'] as const;
const NOT_IN_HOSTED = [
  'cc_number',
  'exp_month',
  'exp_year',
  'card_cvv',
  'cc_token',
  'customer_ip',
  'customer_referrer',
  'browser_fingerprint',
  'cryptogram',
] as const;

/** Luhn checksum over the digits of a card number. */
/** Request fields of free text the merchant writes and the PSP sends back in its reports and webhooks. */
const FREE_TEXT_FIELDS = ['description', 'payload'] as const;

/**
 * A card number inside free text: a whole run of 13 to 19 digits (spaces or dashes between them allowed)
 * that starts as the card schemes' numbers do (2–6) and passes the Luhn check. Narrow on purpose: a request
 * refused for an order number that merely looks like a card would cost a sale (docs/psp.md).
 */
export function holdsCardNumber(text: string): boolean {
  for (const m of text.matchAll(/(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/g)) {
    const digits = m[0].replace(/[ -]/g, '');
    if (/^[2-6]/.test(digits) && luhnValid(digits)) return true;
  }
  return false;
}

// the check digit is input-rules' (the doors mask card numbers by it): one copy
export { luhnValid };

/** The defaults the PSP applies when retry_attempts / retry_interval_hours are not sent. */
export function recurringDefaults(unit: IntervalUnit): {
  retryAttempts: number;
  retryIntervalHours: number;
  maxRetryIntervalHours: number;
} {
  return unit === 'day'
    ? { retryAttempts: DEFAULT_RETRY_ATTEMPTS, retryIntervalHours: 2, maxRetryIntervalHours: 23 }
    : { retryAttempts: DEFAULT_RETRY_ATTEMPTS, retryIntervalHours: 24, maxRetryIntervalHours: 72 };
}

/** init_recurring with the PSP's defaults filled in (for display and for the sandbox). */
export function withRecurringDefaults(
  r: InitRecurring,
): InitRecurring & { retry_attempts: number; retry_interval_hours: number } {
  const unit = intervalUnit.safeParse(r.interval_unit);
  const d = recurringDefaults(unit.success ? unit.data : 'month');
  return {
    ...r,
    retry_attempts: r.retry_attempts ?? d.retryAttempts,
    retry_interval_hours: r.retry_interval_hours ?? d.retryIntervalHours,
  };
}

function collector() {
  const list: Violation[] = [];
  return { list, add: (field: string, message: string) => void list.push({ field, message }) };
}
type Add = (field: string, message: string) => void;

function fromZod(error: z.ZodError, add: Add) {
  for (const i of error.issues) add(i.path.length > 0 ? i.path.map(String).join('.') : '(root)', i.message);
}

/** A positive amount with at most two decimals; returns its minor units. */
function checkAmount(value: unknown, field: string, add: Add): Minor | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) {
    add(field, 'not a finite number');
    return null;
  }
  const r = parseAmount(value);
  if (!r.ok) {
    add(field, r.reason);
    return null;
  }
  if (r.minor <= 0n) {
    add(field, 'must be positive');
    return null;
  }
  return r.minor;
}

function checkUrl(value: unknown, field: string, add: Add) {
  if (value === undefined) return;
  try {
    const u = new URL(String(value));
    if (u.protocol !== 'https:' && u.protocol !== 'http:') add(field, 'expected an http(s) URL');
  } catch {
    add(field, 'expected a URL');
  }
}

const isDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && DateTime.fromISO(s, { zone: 'utc' }).isValid;

function checkCommon(req: Record<string, unknown>, add: Add) {
  if (typeof req.pos_id === 'string' && !UUID.test(req.pos_id)) add('pos_id', 'expected a UUID');
  checkAmount(req.amount, 'amount', add);
  if (typeof req.currency === 'string' && !/^[A-Z]{3}$/.test(req.currency))
    add('currency', 'expected a 3-letter uppercase ISO 4217 code');
  if (typeof req.order_id === 'string') {
    if (req.order_id.trim() === '') add('order_id', 'must not be empty');
    if (req.order_id === '.' || req.order_id === '..')
      add('order_id', 'must not be "." or ".." (it is a path segment of later calls)');
    if (req.order_id.length > MAX_ORDER_ID_CHARS) add('order_id', `at most ${MAX_ORDER_ID_CHARS} characters`);
  }
  if (typeof req.description === 'string' && req.description.trim() === '') add('description', 'must not be empty');
  if (typeof req.order_3ds_bypass === 'string' && req.order_3ds_bypass.trim() === '')
    add('order_3ds_bypass', 'must not be empty');
  if (typeof req.payload === 'string' && [...req.payload].length > MAX_PAYLOAD_CHARS)
    add('payload', `at most ${MAX_PAYLOAD_CHARS} characters`);
  // The PSP stores these and returns them in the register, the period records and webhooks, whose text recon
  // keeps: a card number written there would be persisted.
  for (const f of FREE_TEXT_FIELDS)
    if (typeof req[f] === 'string' && holdsCardNumber(req[f])) add(f, 'must not hold a card number');
  if (typeof req.customer_birthday === 'string' && !isDate(req.customer_birthday))
    add('customer_birthday', 'expected a date yyyy-MM-dd');
  if (typeof req.customer_country === 'string' && !/^[A-Z]{2}$/.test(req.customer_country))
    add('customer_country', 'expected an ISO 3166-1 alpha-2 code');
  if (typeof req.customer_email === 'string' && !/^[^\s@]+@[^\s@]+$/.test(req.customer_email))
    add('customer_email', 'expected an e-mail address');
  for (const f of ['server_url', 'result_url', 'customer_referrer'] as const) checkUrl(req[f], f, add);
  if (req.mode === 'hosted') checkUrl(req.validation_url, 'validation_url', add);
  if (typeof req.merchant_mcc === 'string' && !/^\d{4}$/.test(req.merchant_mcc))
    add('merchant_mcc', 'expected a 4-digit MCC');
  if (Array.isArray(req.split)) {
    if (req.split.length === 0 && req.init_recurring === undefined) add('split', 'at least one split item');
    req.split.forEach((item, i) => {
      const it = item as Record<string, unknown>;
      checkAmount(it.amount, `split.${i}.amount`, add);
      if (typeof it.sub_merchant_id === 'string' && !UUID.test(it.sub_merchant_id))
        add(`split.${i}.sub_merchant_id`, 'expected a UUID');
    });
  }
  if (req.init_recurring !== undefined && typeof req.init_recurring === 'object' && req.init_recurring !== null)
    checkRecurring(req.init_recurring as InitRecurring, add);
}

function checkRecurring(r: InitRecurring, add: Add) {
  const p = 'init_recurring';
  const unit = intervalUnit.safeParse(r.interval_unit);
  if (!unit.success) add(`${p}.interval_unit`, 'expected day, week, month, quarter or year');
  if (
    typeof r.interval_count === 'number' &&
    (!Number.isInteger(r.interval_count) || r.interval_count < 1 || r.interval_count > MAX_INTERVAL_COUNT)
  ) {
    add(`${p}.interval_count`, `a whole number from 1 to ${MAX_INTERVAL_COUNT}`);
  }
  if (
    r.retry_attempts !== undefined &&
    (!Number.isInteger(r.retry_attempts) || r.retry_attempts < 0 || r.retry_attempts > MAX_RETRY_ATTEMPTS)
  ) {
    add(`${p}.retry_attempts`, `a whole number from 0 to ${MAX_RETRY_ATTEMPTS}`);
  }
  if (r.retry_interval_hours !== undefined) {
    const max = recurringDefaults(unit.success ? unit.data : 'month').maxRetryIntervalHours;
    if (!Number.isInteger(r.retry_interval_hours) || r.retry_interval_hours < 1 || r.retry_interval_hours > max) {
      add(
        `${p}.retry_interval_hours`,
        `a whole number from 1 to ${max} when interval_unit is ${unit.success ? unit.data : r.interval_unit}`,
      );
    }
  }
  if (r.start_date !== undefined && !isDate(r.start_date)) add(`${p}.start_date`, 'expected a date YYYY-MM-DD');
  if (r.expiry_date !== undefined && !isDate(r.expiry_date)) add(`${p}.expiry_date`, 'expected a date YYYY-MM-DD');
  if (
    r.start_date !== undefined &&
    r.expiry_date !== undefined &&
    isDate(r.start_date) &&
    isDate(r.expiry_date) &&
    r.expiry_date < r.start_date
  ) {
    add(`${p}.expiry_date`, 'must not be before start_date');
  }
  if (r.time !== undefined && !/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(r.time))
    add(`${p}.time`, 'expected a UTC time HH:MM:SS');
  checkUrl(r.notification_url, `${p}.notification_url`, add);
  checkAmount(r.amount, `${p}.amount`, add);
}

function checkCard(req: Record<string, unknown>, add: Add, now: Date) {
  const present = CARD_FIELDS.filter((f) => req[f] !== undefined && req[f] !== null && req[f] !== '');
  const hasToken = req.cc_token !== undefined && req.cc_token !== null && req.cc_token !== '';
  if (hasToken && present.length > 0) {
    add('cc_token', `send either full card data or cc_token, not both (card fields given: ${present.join(', ')})`);
    return;
  }
  if (hasToken) {
    // A wallet token may carry a short text prefix ending in a colon ("applepay:…"): any non-blank token passes.
    if (typeof req.cc_token !== 'string' || /\s/.test(req.cc_token) || /^[^:]*:$/.test(req.cc_token))
      add('cc_token', 'expected a token without spaces');
    return;
  }
  if (present.length === 0) {
    add('cc_number', 'full card data (cc_number, exp_month, exp_year, card_cvv) or cc_token is required');
    return;
  }
  for (const f of CARD_FIELDS) if (!present.includes(f)) add(f, 'required with full card data');
  if (typeof req.cc_number === 'string') {
    const digits = req.cc_number.replace(/[ -]/g, '');
    if (!/^\d{12,19}$/.test(digits)) add('cc_number', 'expected 12 to 19 digits');
    else if (!luhnValid(digits)) add('cc_number', 'fails the Luhn check');
  }
  if (typeof req.card_cvv === 'string' && !/^\d{3,4}$/.test(req.card_cvv)) add('card_cvv', 'expected 3 or 4 digits');
  const month = Number(req.exp_month);
  const yearRaw = String(req.exp_year ?? '');
  const monthOk = req.exp_month !== undefined && /^\d{1,2}$/.test(String(req.exp_month)) && month >= 1 && month <= 12;
  if (req.exp_month !== undefined && !monthOk) add('exp_month', 'expected a month 1 to 12');
  const yearOk = /^(\d{2}|\d{4})$/.test(yearRaw);
  if (req.exp_year !== undefined && !yearOk) add('exp_year', 'expected a 2- or 4-digit year');
  if (monthOk && yearOk) {
    const year = yearRaw.length === 2 ? 2000 + Number(yearRaw) : Number(yearRaw);
    // A card is valid through the last day of its expiry month; compare months in UTC.
    const nowMonth = now.getUTCFullYear() * 12 + now.getUTCMonth();
    if (year * 12 + (month - 1) < nowMonth) add('exp_year', 'the card has expired');
  }
}

function result<T>(value: T, list: Violation[]): Validation<T> {
  return list.length > 0 ? { ok: false, violations: list } : { ok: true, value };
}

export function validateDirectPurchase(
  req: DirectPurchaseRequest,
  opts: ValidateOptions = {},
): Validation<DirectPurchaseRequest> {
  const { list, add } = collector();
  const s = directPurchaseRequest.safeParse(req);
  if (!s.success) fromZod(s.error, add);
  const r = req as unknown as Record<string, unknown>;
  checkCommon(r, add);
  checkCard(r, add, opts.now ?? new Date());
  if (
    r.browser_fingerprint !== undefined &&
    (typeof r.browser_fingerprint !== 'object' || r.browser_fingerprint === null)
  )
    add('browser_fingerprint', 'expected an object');
  return result(req, dedupe(list));
}

export function validateHostedPurchase(req: HostedPurchaseRequest): Validation<HostedPurchaseRequest> {
  const { list, add } = collector();
  const s = hostedPurchaseRequest.safeParse(req);
  if (!s.success) fromZod(s.error, add);
  const r = req as unknown as Record<string, unknown>;
  for (const f of NOT_IN_HOSTED) if (r[f] !== undefined) add(f, 'not allowed in hosted mode');
  checkCommon(r, add);
  return result(req, dedupe(list));
}

/** A split purchase of either mode (4.1). */
export function validatePurchase(req: PurchaseRequest, opts: ValidateOptions = {}): Validation<PurchaseRequest> {
  if (req.mode === 'direct') return validateDirectPurchase(req, opts);
  if (req.mode === 'hosted') return validateHostedPurchase(req);
  return { ok: false, violations: [{ field: 'mode', message: 'expected direct or hosted' }] };
}

/** A hosted purchase with init_recurring (4.2). */
export function validateSubscriptionPurchase(
  req: SubscriptionPurchaseRequest,
): Validation<SubscriptionPurchaseRequest> {
  const { list, add } = collector();
  const s = subscriptionPurchaseRequest.safeParse(req);
  if (!s.success) fromZod(s.error, add);
  const r = req as unknown as Record<string, unknown>;
  for (const f of NOT_IN_HOSTED) if (r[f] !== undefined) add(f, 'not allowed in hosted mode');
  checkCommon(r, add);
  return result(req, dedupe(list));
}

function dedupe(list: Violation[]): Violation[] {
  const seen = new Set<string>();
  return list.filter((v) => {
    const k = `${v.field}\u0000${v.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * The relation between the split amounts and the purchase amount is not published, so recon never
 * refuses a request for it; this exposes the comparison for whoever wants to warn.
 */
export function checkSplitSum(req: { amount: string | number; split?: ReadonlyArray<{ amount: string | number }> }): {
  total: Minor | null;
  splitTotal: Minor | null;
  matches: boolean;
} {
  const total = parseAmount(req.amount);
  let splitTotal: Minor | null = 0n;
  for (const item of req.split ?? []) {
    const a = parseAmount(item.amount);
    if (!a.ok) {
      splitTotal = null;
      break;
    }
    splitTotal += a.minor;
  }
  const t = total.ok ? total.minor : null;
  return { total: t, splitTotal, matches: t !== null && splitTotal !== null && t === splitTotal };
}

/** A request amount from minor units ("1250" minor → "12.50"): the exact decimal the PSP expects. */
export function requestAmount(minor: Minor): string {
  return formatMinor(minor);
}
