import { z } from 'zod';
import { eventIdFor } from '../../events/ids';
import { OrderAmended, OrderCancelled, OrderPlaced, orderStream, type SplitPart } from '../../events/order-events';
import { isLosslessNumber } from '../../psp/json';
import type { Keyed } from '../observations';
import { formatMinor, notWholeUnits, parseAmount } from '../../money';
import { checkText, maskCardNumbersInText, plausibleInstant, quoteForMessage, REFERENCE_TEXT } from '../../input-rules';

/**
 * One order record as the marketplace sends it, in any of the three ways in (CSV file, NDJSON file,
 * POST /api/orders), to the event it stands for. Fields (snake_case in every format):
 *   order_id             required
 *   amount, currency     the order total, a decimal with at most two decimals ("125.00"), ISO currency
 *   created_at           ISO-8601 instant with an offset ("2025-01-05T10:00:00Z"), a plausible day
 *                        (src/input-rules.ts: 2000-01-01 to ten years ahead), so that every stored time is
 *                        one PostgreSQL, luxon and the projections can read
 *   split                the requested parts: JSON [{ "sub_merchant_id", "amount" }], CSV "id:12.50;id2:3.00"
 *   customer_reference   optional, one line of at most 256 characters (src/input-rules.ts REFERENCE_TEXT)
 *   amended_at           set: this record is an amendment (a new version as of that time)
 *   cancelled_at         set: this record cancels the order (order_id and cancelled_at only)
 * A record is a placement when neither amended_at nor cancelled_at is set.
 */

export const ORDER_FIELDS = [
  'order_id',
  'amount',
  'currency',
  'created_at',
  'split',
  'customer_reference',
  'amended_at',
  'cancelled_at',
] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

export type OrderInput =
  | { readonly ok: true; readonly item: Keyed; readonly orderId: string }
  | { readonly ok: false; readonly field: string; readonly message: string };

const ID = /^[\x21-\x7e][\x20-\x7e]{0,255}$/;
const SUB_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;
const OFFSET = /(Z|[+-]\d{2}:?\d{2})$/;

const fail = (field: string, message: string): OrderInput => ({ ok: false, field, message });
const isEmpty = (v: unknown) => v === undefined || v === null || v === '';
/** A field's text: strings as given, JSON numbers by their exact source text. */
function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isLosslessNumber(v)) return v.value;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * An amount or a part of a fraction of the currency's smallest unit (10001.50 JPY: yen have no decimals), which
 * no payment has: judged against the PSP's whole yen it would differ, and hold the payment's money for nothing.
 */
function fractionOfUnit(amount: bigint, parts: readonly SplitPart[], currency: string): OrderInput | null {
  const why = notWholeUnits(amount, currency);
  if (why !== null) return fail('amount', `${formatMinor(amount)} ${currency} ${why}`);
  for (const p of parts) {
    const partWhy = notWholeUnits(BigInt(p.amount), currency);
    if (partWhy !== null)
      return fail('split', `the part of ${p.subMerchantId}, ${formatMinor(BigInt(p.amount))} ${currency}, ${partWhy}`);
  }
  return null;
}

/** An ISO-8601 instant with an explicit offset, plausible, to the store's form (UTC, milliseconds). */
export function parseInstant(v: unknown, now?: Date): { ok: true; iso: string } | { ok: false; message: string } {
  const t = typeof v === 'string' ? v.trim() : undefined;
  if (!t) return { ok: false, message: 'expected an ISO-8601 instant such as 2025-01-05T10:00:00Z' };
  if (!OFFSET.test(t)) return { ok: false, message: `${quoteForMessage(t)} has no offset (end it with Z or +02:00)` };
  const r = plausibleInstant(t, now ? { now } : {});
  return r.ok ? { ok: true, iso: r.value } : { ok: false, message: r.reason };
}

function amountOf(v: unknown, field: string): { ok: true; minor: bigint } | { ok: false; bad: OrderInput } {
  const t = textOf(v);
  if (t === undefined) return { ok: false, bad: fail(field, 'expected a decimal amount such as "125.00"') };
  const a = parseAmount(t);
  if (!a.ok) return { ok: false, bad: fail(field, a.reason) };
  if (a.minor === 0n) return { ok: false, bad: fail(field, 'must be above zero') };
  return { ok: true, minor: a.minor };
}

/** `id:12.50;id2:3.00` (CSV) or `[{ sub_merchant_id, amount }]` (JSON) → parts in minor units. */
function splitOf(v: unknown): { ok: true; parts: SplitPart[] } | { ok: false; bad: OrderInput } {
  if (isEmpty(v)) return { ok: true, parts: [] };
  const raw: Array<{ id: unknown; amount: unknown; at: string }> = [];
  if (typeof v === 'string') {
    v.split(';').forEach((p, i) => {
      const k = p.lastIndexOf(':');
      raw.push({
        id: k < 0 ? p : p.slice(0, k).trim(),
        amount: k < 0 ? undefined : p.slice(k + 1).trim(),
        at: `split[${i}]`,
      });
    });
  } else if (Array.isArray(v)) {
    v.forEach((p, i) => {
      const o = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
      raw.push({ id: o.sub_merchant_id, amount: o.amount, at: `split[${i}]` });
    });
  } else
    return { ok: false, bad: fail('split', 'expected a list of {sub_merchant_id, amount} (CSV: id:12.50;id2:3.00)') };
  if (raw.length > 100) return { ok: false, bad: fail('split', 'more than 100 parts') };
  const parts: SplitPart[] = [];
  for (const r of raw) {
    if (typeof r.id !== 'string' || !SUB_ID.test(r.id))
      return {
        ok: false,
        bad: fail(`${r.at}.sub_merchant_id`, `${JSON.stringify(r.id ?? null)} is not a sub-merchant id`),
      };
    const a = amountOf(r.amount, `${r.at}.amount`);
    if (!a.ok) return a;
    parts.push({ subMerchantId: r.id, amount: a.minor.toString() });
  }
  return { ok: true, parts };
}

/** Validates one record and builds its event; the first problem is reported with the field it is in. */
export function orderInput(record: Readonly<Record<string, unknown>>, opts: { now?: Date } = {}): OrderInput {
  try {
    return checkedOrder(record, opts.now);
  } catch (e) {
    // the event schema is a second line of defence: what it refuses is reported as a field, never thrown
    if (e instanceof z.ZodError) {
      const issue = e.issues[0];
      return fail(issue?.path.map(String).join('.') || '(record)', issue?.message ?? 'refused');
    }
    throw e;
  }
}

function checkedOrder(record: Readonly<Record<string, unknown>>, now: Date | undefined): OrderInput {
  for (const k of Object.keys(record))
    if (!(ORDER_FIELDS as readonly string[]).includes(k))
      return fail(k, `unknown field (fields: ${ORDER_FIELDS.join(', ')})`);
  const orderId = typeof record.order_id === 'string' ? record.order_id.trim() : undefined;
  if (!orderId || !ID.test(orderId)) return fail('order_id', 'required: printable text of at most 256 characters');
  if (!isEmpty(record.cancelled_at)) {
    const t = parseInstant(record.cancelled_at, now);
    if (!t.ok) return fail('cancelled_at', t.message);
    if (!isEmpty(record.amended_at)) return fail('amended_at', 'a cancellation is not also an amendment');
    const data = { orderId, cancelledAt: t.iso };
    const event = {
      id: eventIdFor(`${OrderCancelled.type}.v${OrderCancelled.version}`, { orderId }),
      type: OrderCancelled.type,
      version: OrderCancelled.version,
      data: OrderCancelled.schema.parse(data),
    };
    return { ok: true, orderId, item: { stream: orderStream(orderId), event } };
  }
  const amount = amountOf(record.amount, 'amount');
  if (!amount.ok) return amount.bad;
  const currency = typeof record.currency === 'string' ? record.currency.trim() : '';
  if (!/^[A-Z]{3}$/.test(currency)) return fail('currency', 'expected a three-letter ISO 4217 code such as EUR');
  const created = parseInstant(record.created_at, now);
  if (!created.ok) return fail('created_at', created.message);
  const split = splitOf(record.split);
  if (!split.ok) return split.bad;
  const ids = split.parts.map((p) => p.subMerchantId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) return fail('split', `sub-merchant ${twice} is given twice (one part each)`);
  const fraction = fractionOfUnit(amount.minor, split.parts, currency);
  if (fraction) return fraction;
  const parts = split.parts.reduce((a, p) => a + BigInt(p.amount), 0n);
  if (parts > amount.minor)
    return fail('split', `the parts sum to more than the amount (${parts} > ${amount.minor} minor units)`);
  const ref = record.customer_reference;
  if (!isEmpty(ref)) {
    if (typeof ref !== 'string') return fail('customer_reference', 'expected text of at most 256 characters');
    const text = checkText(ref, REFERENCE_TEXT);
    if (!text.ok) return fail('customer_reference', text.reason);
  }
  const values = {
    orderId,
    amount: amount.minor.toString(),
    currency,
    createdAt: created.iso,
    split: split.parts,
    // card numbers are never stored (README, "Secrets and card data")
    customerReference: isEmpty(ref) ? null : maskCardNumbersInText(ref as string),
  };
  if (isEmpty(record.amended_at)) {
    const event = {
      id: eventIdFor(`${OrderPlaced.type}.v${OrderPlaced.version}`, { orderId }),
      type: OrderPlaced.type,
      version: OrderPlaced.version,
      data: OrderPlaced.schema.parse(values),
    };
    return { ok: true, orderId, item: { stream: orderStream(orderId), event } };
  }
  const amended = parseInstant(record.amended_at, now);
  if (!amended.ok) return fail('amended_at', amended.message);
  // an order's versions are ordered by their times: one dated before the order was created sorted before its
  // placement, and the order stayed as placed for good, the amendment recorded and never in force
  if (amended.iso < created.iso)
    return fail('amended_at', `${amended.iso} is before the order's created_at ${created.iso}`);
  const event = {
    id: eventIdFor(`${OrderAmended.type}.v${OrderAmended.version}`, { orderId, amendedAt: amended.iso }),
    type: OrderAmended.type,
    version: OrderAmended.version,
    data: OrderAmended.schema.parse({ ...values, amendedAt: amended.iso }),
  };
  return { ok: true, orderId, item: { stream: orderStream(orderId), event } };
}
