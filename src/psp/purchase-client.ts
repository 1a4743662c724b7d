import { LosslessNumber, stringify as losslessStringify } from 'lossless-json';
import type { PspProject } from '../config/env';
import { formatMinor, parseAmount } from '../money';
import { readingClient, type PspClient } from './client';
import { isPspError, PspError } from './errors';
import { isPlainObject, toPlainJson } from './json';
import type {
  DirectPurchaseRequest,
  HostedPurchaseRequest,
  PaymentRecord,
  SubscriptionPurchaseRequest,
} from './schemas';
import { type Answer, type Call, createPspTransport, type PspClientOptions, type PspTransport, seg } from './transport';
import { validatePurchase, validateSubscriptionPurchase } from './validate';

/**
 * The PSP client that makes payments: split purchases (direct and hosted), subscription purchases, their
 * transactions, cancellations. The demo and the tests buy through it; the worker (sync, healing, jobs,
 * start) only reads, through client.ts, and never imports this module (test/architecture/psp-clients.test.ts).
 * A purchase whose answer is lost is never sent again: the order is looked up instead, as the PSP advises.
 */

export type SplitPurchaseResult = { kind: 'direct'; record: PaymentRecord } | { kind: 'hosted'; location: string };

/** The reading client with the calls that make payments. */
export interface PspPurchaseClient extends PspClient {
  splitPurchase(req: DirectPurchaseRequest | HostedPurchaseRequest): Promise<SplitPurchaseResult>;
  purchaseWithSubscription(req: SubscriptionPurchaseRequest): Promise<{ location: string }>;
  getSubscriptionTransactions(
    recurringId: string,
    q: { method: 'purchase' | 'refund'; status: string },
  ): Promise<unknown>;
  cancelPayment(orderId: string): Promise<PaymentRecord[]>;
}

/**
 * Card fields as every real client sends them: the expiry month and year as JSON integers ("09" → 9) and the
 * card number as digits only (the spaces and dashes people type removed). Applied after validation, which
 * has checked their forms.
 */
function cardFields(req: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof req.cc_number === 'string') out.cc_number = req.cc_number.replace(/[ -]/g, '');
  for (const f of ['exp_month', 'exp_year'] as const) {
    const v = req[f];
    if (typeof v === 'string' && /^\d{1,4}$/.test(v.trim())) out[f] = Number(v.trim());
  }
  return out;
}

/**
 * JSON body of a request with amounts written as JSON numbers, exactly: from the minor units the amount
 * parses to ("012.50" and "12.5" are sent as 12.50; lossless-json refuses a leading zero).
 */
export function serializeRequest(req: Record<string, unknown>): string {
  const num = (v: unknown) => {
    if (typeof v !== 'string') return v;
    const a = parseAmount(v, { allowNegative: true });
    return a.ok ? new LosslessNumber(formatMinor(a.minor)) : v;
  };
  const copy: Record<string, unknown> = { ...req, amount: num(req.amount), ...cardFields(req) };
  if (Array.isArray(req.split))
    copy.split = req.split.map((i) => (isPlainObject(i) ? { ...i, amount: num(i.amount) } : i));
  if (isPlainObject(req.init_recurring))
    copy.init_recurring = { ...req.init_recurring, amount: num(req.init_recurring.amount) };
  return losslessStringify(copy) ?? '{}';
}

/** What the purchase calls share: the project's transport and how a lost answer is followed up. */
interface Purchasing {
  readonly t: PspTransport;
  readonly lookupDelayMs: number;
  readonly getOrderTransactions: (orderId: string) => Promise<PaymentRecord[]>;
}

/** The reading calls and the purchase calls over one transport; each purchase call is a function below. */
export function createPspPurchaseClient(project: PspProject, opts: PspClientOptions = {}): PspPurchaseClient {
  const t = createPspTransport(project, opts);
  const reader = readingClient(t, opts);
  const p: Purchasing = {
    t,
    lookupDelayMs: opts.outcomeLookupDelayMs ?? 1_000,
    getOrderTransactions: reader.getOrderTransactions,
  };
  return {
    ...reader,
    splitPurchase: (req) => splitPurchase(p, req),
    purchaseWithSubscription: (req) => purchaseWithSubscription(p, req),
    getSubscriptionTransactions: (recurringId, q) => getSubscriptionTransactions(t, recurringId, q),
    cancelPayment: (orderId) => cancelPayment(t, orderId),
  };
}

function mayHaveTakenEffect(e: unknown): e is PspError {
  return (
    isPspError(e) &&
    (e.code === 'PSP_TIMEOUT' || e.code === 'PSP_NETWORK' || (e.code === 'PSP_HTTP_ERROR' && (e.status ?? 0) >= 500))
  );
}

/** After a purchase whose answer was lost: look the order up, as the PSP advises. */
async function lookUpAfterLoss(
  p: Purchasing,
  orderId: string,
  cause: PspError,
  endpoint: string,
): Promise<PaymentRecord[]> {
  p.t.log.warn('purchase outcome lost, looking the order up', { endpoint, code: cause.code, status: cause.status });
  if (p.lookupDelayMs > 0) await p.t.sleep(p.lookupDelayMs);
  try {
    return await p.getOrderTransactions(orderId);
  } catch (e) {
    if (isPspError(e, 'PSP_HTTP_ERROR') && e.status === 404) return [];
    throw new PspError(
      'PSP_OUTCOME_UNKNOWN',
      `purchase on ${endpoint} failed (${cause.code}${cause.status ? ` ${cause.status}` : ''}) and the order look-up failed too (${isPspError(e) ? e.code : 'error'}): the order may or may not exist`,
      {
        endpoint,
        status: cause.status,
        pspCode: cause.pspCode,
        pspMessage: cause.pspMessage,
        cause: e,
      },
    );
  }
}

/**
 * Sends a purchase POST once. When its outcome is lost (5xx, timeout, network), it is never sent again:
 * the order is looked up instead, as the PSP advises.
 */
async function sendPurchase(
  p: Purchasing,
  call: Call,
  orderId: string,
  endpoint: string,
): Promise<{ answer: Answer } | { lost: PspError; found: PaymentRecord[] }> {
  try {
    const a = await p.t.send(call);
    if (a.status >= 500) throw p.t.httpError(call, a.status, a.text, a.headers, a.attempts);
    return { answer: a };
  } catch (e) {
    if (!mayHaveTakenEffect(e)) throw e;
    return { lost: e, found: await lookUpAfterLoss(p, orderId, e, endpoint) };
  }
}

function outcomeUnknown(e: PspError, endpoint: string, found: PaymentRecord[], message: string): PspError {
  return new PspError('PSP_OUTCOME_UNKNOWN', message, {
    endpoint,
    status: e.status,
    pspCode: e.pspCode,
    pspMessage: e.pspMessage,
    found,
    cause: e,
  });
}

function purchaseCall(path: string, endpoint: string, req: Record<string, unknown>): Call {
  return {
    method: 'POST',
    base: 'base',
    path,
    endpoint,
    body: serializeRequest(req),
    retry: false,
    // the card number as sent and as digits only (a PSP may echo it either way; a 12-digit one escapes the PAN mask)
    secrets: [
      req.cc_number,
      typeof req.cc_number === 'string' ? req.cc_number.replace(/[ -]/g, '') : undefined,
      req.card_cvv,
    ].filter((v): v is string => typeof v === 'string' && v.length > 0),
  };
}

function locationOf(t: PspTransport, call: Call, a: Answer): string | null {
  if (a.status < 300 || a.status >= 400) return null;
  const loc = a.headers.get('location');
  if (!loc)
    throw new PspError('PSP_BAD_RESPONSE', `PSP answered ${a.status} on ${call.endpoint} without a Location`, {
      endpoint: call.endpoint,
      status: a.status,
    });
  return new URL(loc, t.project.baseUrl).toString();
}

async function splitPurchase(
  p: Purchasing,
  req: DirectPurchaseRequest | HostedPurchaseRequest,
): Promise<SplitPurchaseResult> {
  const { t } = p;
  const endpoint = 'POST /api/v1/split/purchase';
  const v = validatePurchase(req, { now: t.now() });
  if (!v.ok) throw t.validationError(endpoint, v.violations);
  const call = purchaseCall('/api/v1/split/purchase', endpoint, req as Record<string, unknown>);
  const sent = await sendPurchase(p, call, req.order_id, endpoint);
  if ('lost' in sent) {
    const { lost: e, found } = sent;
    const primary = found.find((r) => r.method === 'purchase') ?? found[0];
    if (primary && req.mode === 'direct') return { kind: 'direct', record: primary };
    throw outcomeUnknown(
      e,
      endpoint,
      found,
      primary
        ? `purchase on ${endpoint} failed (${e.code}) but order ${req.order_id} exists at the PSP; its checkout address was not returned`
        : `purchase on ${endpoint} failed (${e.code}) and order ${req.order_id} is not found at the PSP (yet): it was probably not created`,
    );
  }
  const a = sent.answer;
  const location = locationOf(t, call, a);
  if (location !== null) return { kind: 'hosted', location };
  t.expectOk(call, a);
  return { kind: 'direct', record: t.recordOf(call, t.jsonOf(call, a), a.status) };
}

async function purchaseWithSubscription(
  p: Purchasing,
  req: SubscriptionPurchaseRequest,
): Promise<{ location: string }> {
  const { t } = p;
  const endpoint = 'POST /api/v1/payment';
  const v = validateSubscriptionPurchase(req);
  if (!v.ok) throw t.validationError(endpoint, v.violations);
  const call = purchaseCall('/api/v1/payment', endpoint, req as Record<string, unknown>);
  const sent = await sendPurchase(p, call, req.order_id, endpoint);
  if ('lost' in sent) {
    const { lost: e, found } = sent;
    throw outcomeUnknown(
      e,
      endpoint,
      found,
      found.length > 0
        ? `subscription purchase failed (${e.code}) but order ${req.order_id} exists at the PSP; its checkout address was not returned`
        : `subscription purchase failed (${e.code}) and order ${req.order_id} is not found at the PSP (yet): it was probably not created`,
    );
  }
  const a = sent.answer;
  const location = locationOf(t, call, a);
  if (location !== null) return { location };
  t.expectOk(call, a);
  throw new PspError('PSP_BAD_RESPONSE', `PSP answered ${a.status} on ${endpoint}; expected 303 with a Location`, {
    endpoint,
    status: a.status,
  });
}

async function getSubscriptionTransactions(
  t: PspTransport,
  recurringId: string,
  q: { method: 'purchase' | 'refund'; status: string },
): Promise<unknown> {
  const call: Call = {
    method: 'GET',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/recurring/${seg(recurringId)}`,
    endpoint: 'GET /api/v1/pos/:pos_id/recurring/:recurring_id',
    query: { method: q.method, status: q.status },
    retry: true,
  };
  if (q.method !== 'purchase' && q.method !== 'refund')
    throw t.validationError(call.endpoint, [{ field: 'method', message: 'only purchase or refund' }]);
  const a = t.expectOk(call, await t.send(call));
  // Body not published: returned as plain JSON (numbers exact when safe, else their text).
  return toPlainJson(t.jsonOf(call, a));
}

async function cancelPayment(t: PspTransport, orderId: string): Promise<PaymentRecord[]> {
  // Not repeated: a second cancel of a cancelled payment is outside the endpoint's scope (its answer is not published).
  const call: Call = {
    method: 'POST',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/order/${seg(orderId)}/cancel`,
    endpoint: 'POST /api/v1/pos/:pos_id/order/:order_id/cancel',
    retry: false,
  };
  const a = t.expectOk(call, await t.send(call));
  return t.recordsOf(call, t.jsonOf(call, a), a.status);
}
