import { parseAmount } from '../money';
import type { CardData, Operation, Order, SandboxStatus, SubMerchant } from './model';
import type { Rng } from './random';
import { STATUS_TEXT } from './model';
import { chargeParts, plainParts } from './receiver-parts';

/**
 * Orders created over HTTP (split purchase, purchase with subscription), checked the way the sandbox
 * checks them. Card outcome in direct mode, by the card number's last four digits:
 * 0002 declined, 3220 pending 3-D Secure (2122), anything else (and any cc_token) success.
 */

export type LiveResult = { ok: true; order: Order } | { ok: false; status: number; code: string; message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface LiveContext {
  readonly posId: string;
  readonly subMerchants: readonly SubMerchant[];
  readonly rng: Rng;
  readonly now: number;
  readonly baseUrl: string;
  readonly orderExists: (orderId: string) => boolean;
}

const refuse = (field: string, message: string): Refusal => ({
  ok: false,
  status: 400,
  code: 'validation_error',
  message: `${field}: ${message}`,
});

export function createLiveOrder(body: unknown, ctx: LiveContext, kind: 'split' | 'subscription'): LiveResult {
  const head = readOrderHead(body, ctx, kind);
  if (!head.ok) return head;
  const { mode, amount, currency, orderId } = head;
  const fields = body as Record<string, unknown>;
  const split = readSplit(fields, ctx, kind);
  if (!split.ok) return split;
  const { sms, shares } = split;
  const subscription = kind === 'subscription' ? readSubscription(fields, ctx) : NO_SUBSCRIPTION;
  if (!subscription.ok) return subscription;
  const { recurring, notificationUrl } = subscription;
  const payment = readCard(fields, ctx, mode);
  if (!payment.ok) return payment;
  const receivers = payment.status === 'success' ? chargeParts(shares, sms) : plainParts(shares, sms);
  const op = liveOperation(fields, ctx, { mode, amount, currency, orderId, receivers, recurring, payment });
  return {
    ok: true,
    order: {
      index: -1,
      posId: ctx.posId,
      orderId,
      kind: kind === 'subscription' ? 'subscription' : mode === 'hosted' ? 'hosted_purchase' : 'split_purchase',
      mode,
      recurringId: recurring?.id ?? null,
      serverUrl: typeof fields.server_url === 'string' ? fields.server_url : null,
      notificationUrl,
      operations: [op],
      injection: null,
    },
  };
}

interface OrderHead {
  readonly ok: true;
  readonly mode: 'direct' | 'hosted';
  readonly amount: bigint;
  readonly currency: string;
  readonly orderId: string;
}

/** The order's own fields: project, mode, method, amount, currency, a new order id, the payload's size. */
function readOrderHead(body: unknown, ctx: LiveContext, kind: 'split' | 'subscription'): OrderHead | Refusal {
  if (!isObject(body)) return refuse('body', 'expected a JSON object');
  if (body.pos_id !== ctx.posId) return refuse('pos_id', 'does not match the authenticated project');
  const mode = body.mode;
  if (mode !== 'direct' && mode !== 'hosted') return refuse('mode', 'expected direct or hosted');
  if (kind === 'subscription' && mode !== 'hosted') return refuse('mode', 'a subscription purchase is hosted');
  if (body.method !== 'purchase') return refuse('method', 'expected purchase');
  const amount = parseAmount(body.amount);
  if (!amount.ok || amount.minor <= 0n) return refuse('amount', 'positive, at most two decimals');
  if (typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency))
    return refuse('currency', 'ISO 4217 code expected');
  const orderId = body.order_id;
  if (typeof orderId !== 'string' || orderId.length === 0 || orderId.length > 256)
    return refuse('order_id', 'required, at most 256 characters');
  if (ctx.orderExists(orderId))
    return { ok: false, status: 409, code: 'order_exists', message: `order_id: ${orderId} already exists` };
  if (typeof body.payload === 'string' && body.payload.length > 4000)
    return refuse('payload', 'at most 4000 characters');
  return { ok: true, mode, amount: amount.minor, currency: body.currency, orderId };
}

/** The operation of an order accepted over HTTP (the seeded draws in the order the sandbox always made them). */
function liveOperation(
  body: Record<string, unknown>,
  ctx: LiveContext,
  order: Omit<OrderHead, 'ok'> & {
    receivers: Operation['receivers'];
    recurring: Operation['recurring'];
    payment: Extract<ReturnType<typeof readCard>, { ok: true }>;
  },
): Operation {
  const { mode, orderId, receivers, recurring } = order;
  const { status, code, card } = order.payment;
  const fixedFee = receivers.reduce((s, x) => s + x.fixedFee, 0n);
  const percentFee = receivers.reduce((s, x) => s + x.percentFee, 0n);
  const final = status === 'success' || status === 'failure';
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return {
    posId: ctx.posId,
    orderId,
    paymentId: ctx.rng.uuid(),
    transactionId: ctx.rng.digits(12),
    operationId: null,
    mode,
    method: 'purchase',
    status,
    statusCode: code.code,
    statusDescription: code.text,
    currency: order.currency,
    originalAmount: order.amount,
    customerFee: 0n,
    merchantFee: fixedFee + percentFee,
    fixedFee,
    percentFee,
    receivers,
    at: ctx.now,
    processedAt: ctx.now,
    blankPeriodDateTime: !final,
    card,
    authCode: status === 'success' ? ctx.rng.digits(6) : null,
    rrnCode: final ? ctx.rng.digits(12) : null,
    description: str(body.description),
    payload: typeof body.payload === 'string' ? body.payload : null,
    customer: {
      id: str(body.customer_id),
      email: str(body.customer_email),
      phone: str(body.customer_phone),
      fname: str(body.customer_fname),
      lname: str(body.customer_lname),
    },
    recurring,
    userActionUrl: status === 'pending' ? `${ctx.baseUrl}/api/v1/checkout/${ctx.rng.hex(16)}/3ds` : null,
    distortion: null,
    webhook: status === 'init' ? 'none' : 'sent',
  };
}

type Refusal = Extract<LiveResult, { ok: false }>;

/** The split items: each a listed sub-merchant and a positive amount. Required for a split purchase. */
function readSplit(
  body: Record<string, unknown>,
  ctx: LiveContext,
  kind: 'split' | 'subscription',
): Refusal | { ok: true; sms: SubMerchant[]; shares: bigint[] } {
  const sms: SubMerchant[] = [];
  const shares: bigint[] = [];
  if (kind === 'split' || body.split !== undefined) {
    if (!Array.isArray(body.split) || body.split.length === 0) return refuse('split', 'a non-empty array is required');
    for (const [i, item] of body.split.entries()) {
      if (!isObject(item)) return refuse(`split.${i}`, 'expected an object');
      const a = parseAmount(item.amount);
      if (!a.ok || a.minor <= 0n) return refuse(`split.${i}.amount`, 'positive, at most two decimals');
      if (typeof item.sub_merchant_id !== 'string' || !UUID.test(item.sub_merchant_id))
        return refuse(`split.${i}.sub_merchant_id`, 'UUID expected');
      const sm = ctx.subMerchants.find((s) => s.id === item.sub_merchant_id);
      if (!sm)
        return {
          ok: false,
          status: 400,
          code: 'unknown_sub_merchant',
          message: `split.${i}.sub_merchant_id: unknown sub-merchant`,
        };
      sms.push(sm);
      shares.push(a.minor);
    }
  }
  return { ok: true, sms, shares };
}

interface Subscription {
  readonly ok: true;
  readonly recurring: Operation['recurring'];
  readonly notificationUrl: string | null;
}
const NO_SUBSCRIPTION: Subscription = { ok: true, recurring: null, notificationUrl: null };

/** `init_recurring` of a purchase with subscription. */
function readSubscription(body: Record<string, unknown>, ctx: LiveContext): Refusal | Subscription {
  const rec = body.init_recurring;
  if (!isObject(rec)) return refuse('init_recurring', 'required');
  if (!['day', 'week', 'month', 'quarter', 'year'].includes(String(rec.interval_unit)))
    return refuse('init_recurring.interval_unit', 'day, week, month, quarter or year');
  if (
    !Number.isInteger(rec.interval_count) ||
    (rec.interval_count as number) < 1 ||
    (rec.interval_count as number) > 30
  )
    return refuse('init_recurring.interval_count', 'integer 1 to 30');
  if (rec.notification_url !== undefined && typeof rec.notification_url !== 'string')
    return refuse('init_recurring.notification_url', 'URL expected');
  return {
    ok: true,
    notificationUrl: typeof rec.notification_url === 'string' ? rec.notification_url : null,
    recurring: { id: ctx.rng.uuid(), status: 'init' },
  };
}

/** The card and the payment's outcome: hosted orders wait for the customer; direct ones pay by the card data. */
function readCard(
  body: Record<string, unknown>,
  ctx: LiveContext,
  mode: 'direct' | 'hosted',
): Refusal | { ok: true; status: SandboxStatus; code: { code: string; text: string }; card: CardData } {
  const card: CardData = {
    mask: '',
    token: ctx.rng.uuid(),
    tokenExpiration: '',
    payway: 'card',
    paymentSystem: 'visa',
    tokenizationKind: null,
  };
  if (mode !== 'direct') return { ok: true, status: 'init', code: STATUS_TEXT.init, card };
  const number = typeof body.cc_number === 'string' || typeof body.cc_number === 'number' ? String(body.cc_number) : '';
  const token = typeof body.cc_token === 'string' ? body.cc_token : '';
  if (!number && !token) return refuse('cc_number', 'card data or cc_token required');
  if (number && token) return refuse('cc_token', 'send either full card data or cc_token');
  if (
    number &&
    (!/^\d{12,19}$/.test(number) ||
      body.exp_month === undefined ||
      body.exp_year === undefined ||
      !/^\d{3,4}$/.test(String(body.card_cvv ?? '')))
  )
    return refuse('cc_number', 'cc_number, exp_month, exp_year and card_cvv (3-4 digits) go together');
  const last4 = number ? number.slice(-4) : '';
  const paid: CardData = {
    ...card,
    mask: number ? `${number.slice(0, 6)}******${last4}` : '',
    tokenExpiration: new Date(ctx.now + 3 * 365 * 86_400_000).toISOString().slice(0, 19),
    paymentSystem: number.startsWith('5') ? 'mastercard' : 'visa',
  };
  if (last4 === '0002') return { ok: true, status: 'failure', code: STATUS_TEXT.declined, card: paid };
  if (last4 === '3220') return { ok: true, status: 'pending', code: STATUS_TEXT.pending3ds, card: paid };
  return { ok: true, status: 'success', code: STATUS_TEXT.success, card: paid };
}

/** The customer pays (or fails to pay) a hosted order on the checkout form. */
export function completeCheckout(
  order: Order,
  outcome: 'success' | 'failure',
  ctx: { now: number; rng: Rng; subMerchants: readonly SubMerchant[] },
): Order {
  const op = order.operations[0]!;
  if (op.status !== 'init') return order;
  const shares = op.receivers.map((x) => x.share);
  const sms = op.receivers.map((x) => ctx.subMerchants.find((s) => s.id === x.subMerchantId)!);
  const receivers = outcome === 'success' ? chargeParts(shares, sms) : plainParts(shares, sms);
  const fixedFee = receivers.reduce((s, x) => s + x.fixedFee, 0n);
  const percentFee = receivers.reduce((s, x) => s + x.percentFee, 0n);
  const paid: Operation = {
    ...op,
    status: outcome,
    statusCode: outcome === 'success' ? STATUS_TEXT.success.code : STATUS_TEXT.declined.code,
    statusDescription: outcome === 'success' ? STATUS_TEXT.success.text : STATUS_TEXT.declined.text,
    receivers,
    fixedFee,
    percentFee,
    merchantFee: fixedFee + percentFee,
    processedAt: ctx.now,
    blankPeriodDateTime: false,
    card: {
      ...op.card,
      mask: '444111******1111',
      tokenExpiration: new Date(ctx.now + 3 * 365 * 86_400_000).toISOString().slice(0, 19),
    },
    authCode: outcome === 'success' ? ctx.rng.digits(6) : null,
    rrnCode: ctx.rng.digits(12),
    recurring: op.recurring ? { id: op.recurring.id, status: outcome === 'success' ? 'active' : 'canceled' } : null,
    webhook: 'sent',
  };
  return { ...order, operations: [paid, ...order.operations.slice(1)] };
}

/** Section 4.8: a hosted purchase/auth in status init becomes failure 6007. */
export function cancelOrder(order: Order, now: number): { ok: true; order: Order } | { ok: false } {
  const op = order.operations[0];
  if (!op || order.mode !== 'hosted' || (op.method !== 'purchase' && op.method !== 'auth') || op.status !== 'init')
    return { ok: false };
  const cancelled: Operation = {
    ...op,
    status: 'failure',
    statusCode: STATUS_TEXT.cancelled.code,
    statusDescription: STATUS_TEXT.cancelled.text,
    processedAt: now,
    blankPeriodDateTime: false,
    webhook: 'sent',
  };
  return { ok: true, order: { ...order, operations: [cancelled, ...order.operations.slice(1)] } };
}
