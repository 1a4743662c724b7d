import { DateTime } from 'luxon';
import { LosslessNumber, stringify as losslessStringify } from 'lossless-json';
import type { PspProject } from '../config/env';
import { silentLogger, type Logger } from '../log';
import { formatMinor, parseAmount } from '../money';
import { cleanText, isPspError, PspError } from './errors';
import { isPlainObject, jsonArrayItems, parseJsonExact, toPlainJson } from './json';
import {
  paymentRecord,
  pspErrorBody,
  pspErrorFields,
  registerStartResponse,
  type DirectPurchaseRequest,
  type HostedPurchaseRequest,
  type Method,
  type PaymentRecord,
  type RegisterField,
  type Status,
  type SubscriptionPurchaseRequest,
} from './schemas';
import { validatePurchase, validateSubscriptionPurchase, type Violation } from './validate';

/**
 * The PSP client: every endpoint of section 4, with timeouts, bounded retries of safe calls, and
 * typed errors that never hold a secret or card data. See docs/psp.md for each decision.
 */

export type RequestSigner = (req: {
  method: string;
  url: string;
  body: string | undefined;
  project: PspProject;
}) => Record<string, string>;

export interface PspClientOptions {
  /** Timeout of each call; for streamed bodies, the longest silence between two chunks. */
  timeoutMs?: number;
  /** Retries after the first attempt, for calls that are safe to repeat. */
  maxRetries?: number;
  /** Replaces the default X-API-AUTH / X-API-KEY headers (e.g. the PAY-HMAC-SHA1 form). */
  signer?: RequestSigner;
  log?: Logger;
  fetch?: typeof fetch;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Longest Retry-After honoured; a longer one is cut to this. */
  retryAfterMaxMs?: number;
  now?: () => Date;
  /** Wait before looking an order up after a purchase whose answer was lost. */
  outcomeLookupDelayMs?: number;
  /**
   * How the PSP reads the end of a period (not published). 'inclusive' (default) sends `to − 1 ms` so
   * that `[from, to)` is covered exactly; 'exclusive' sends `to`.
   */
  periodEnd?: 'inclusive' | 'exclusive';
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export type SplitPurchaseResult = { kind: 'direct'; record: PaymentRecord } | { kind: 'hosted'; location: string };

export interface RegisterQuery {
  from: Date;
  to: Date;
  statuses?: Status[] | string[];
  methods?: Method[] | string[];
  transactionDetails?: RegisterField[] | string[];
}

export interface PspClient {
  splitPurchase(req: DirectPurchaseRequest | HostedPurchaseRequest): Promise<SplitPurchaseResult>;
  purchaseWithSubscription(req: SubscriptionPurchaseRequest): Promise<{ location: string }>;
  getTransaction(orderId: string, operation: string): Promise<PaymentRecord>;
  getOrderTransactions(orderId: string): Promise<PaymentRecord[]>;
  getSubscriptionTransactions(
    recurringId: string,
    q: { method: 'purchase' | 'refund'; status: string },
  ): Promise<unknown>;
  /** [from, to) as instants; yields each record's exact JSON text */
  periodTransactions(from: Date, to: Date): AsyncGenerator<string>;
  startRegisterReport(q: RegisterQuery): Promise<{ reportId: string; count: number }>;
  /** one fetch attempt: not ready, or the records as a stream of exact JSON texts */
  fetchRegisterReport(reportId: string): Promise<{ ready: false } | { ready: true; records: AsyncGenerator<string> }>;
  cancelPayment(orderId: string): Promise<PaymentRecord[]>;
  /**
   * Asks the PSP to send an operation's webhook again. A 2xx is the request accepted: the record when the
   * answer is one, else null (the PSP's material shows other answers to a re-send, and asking again would
   * only repeat a request already taken).
   */
  resendWebhook(orderId: string, operation: string, opts?: { transactionId?: string }): Promise<PaymentRecord | null>;
  readonly project: PspProject;
}

/** The PSP's register limit: a period of at most 31 days. */
export const MAX_REGISTER_PERIOD_MS = 31 * 24 * 3_600_000;
/** A not-ready answer is small; a body larger than this is a report and is streamed. */
const PEEK_BYTES = 64 * 1024;

interface Call {
  method: 'GET' | 'POST';
  base: 'base' | 'report';
  path: string;
  /** Path template for errors and logs (no ids). */
  endpoint: string;
  query?: Record<string, string>;
  body?: string;
  /** Safe to repeat on network errors, timeouts, 429 and 5xx. */
  retry: boolean;
  stream?: boolean;
  /** Values of this request to keep out of any error text (card number, CVV). */
  secrets?: string[];
}

interface Answer {
  status: number;
  headers: Headers;
  /** Whole body (non-stream calls, and error answers of stream calls). */
  text: string;
  /** Streamed body of a successful stream call (idle timeout applies to each chunk). */
  body?: AsyncGenerator<Uint8Array>;
  attempts: number;
}

/**
 * A path segment. `.` and `..` are refused: the URL parser collapses them (encoded or not), so the request
 * would go to another endpoint (`cancel("..")` became a POST to /pos/<pos>/cancel).
 */
const seg = (s: string) => {
  if (s === '.' || s === '..' || /^(%2e|\.){1,2}$/i.test(s))
    throw new PspError('PSP_VALIDATION', `a path segment may not be ${JSON.stringify(s)}`, {
      endpoint: 'path',
      violations: [{ field: 'order_id', message: `${JSON.stringify(s)} is not an identifier` }],
    });
  return encodeURIComponent(s);
};

/** ISO 8601 with an explicit offset, as the register start wants it ("2024-03-01T00:00:00.000+00:00"). */
export function isoWithOffset(d: Date): string {
  return DateTime.fromJSDate(d, { zone: 'utc' }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZZ");
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function retryAfterMs(value: string | null, now: Date = new Date()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
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

export function createPspClient(project: PspProject, opts: PspClientOptions = {}): PspClient {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRetries = opts.maxRetries ?? 3;
  const retryBaseMs = opts.retryBaseMs ?? 250;
  const retryMaxMs = opts.retryMaxMs ?? 10_000;
  const retryAfterMaxMs = opts.retryAfterMaxMs ?? 120_000;
  const lookupDelayMs = opts.outcomeLookupDelayMs ?? 1_000;
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const log = (opts.log ?? silentLogger).child({ component: 'psp-client', project: project.name });
  const now = opts.now ?? (() => new Date());
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = opts.random ?? Math.random;
  const secrets = [project.apiKey, project.apiSecret, project.endpointsKey];
  const endShift = (opts.periodEnd ?? 'inclusive') === 'inclusive' ? 1 : 0;

  const urlOf = (call: Call): string => {
    const root = (call.base === 'base' ? project.baseUrl : project.reportUrl).replace(/\/+$/, '');
    const u = new URL(root + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) u.searchParams.set(k, v);
    return u.toString();
  };

  const headersOf = (call: Call, url: string): Headers => {
    const h = new Headers({ Accept: 'application/json' });
    if (call.body !== undefined) h.set('Content-Type', 'application/json');
    if (opts.signer) {
      for (const [k, v] of Object.entries(opts.signer({ method: call.method, url, body: call.body, project })))
        h.set(k, v);
    } else {
      h.set('X-API-AUTH', `${project.authScheme ?? 'PAY'} ${project.apiKey}:${project.apiSecret}`);
      h.set('X-API-KEY', project.endpointsKey);
    }
    return h;
  };

  const clean = (text: string, call: Call) => cleanText(text, [...secrets, ...(call.secrets ?? [])]);

  const httpError = (call: Call, status: number, text: string, headers: Headers, attempts: number): PspError => {
    let pspCode: string | undefined;
    let pspMessage: string | undefined;
    let pspViolations: string[] = [];
    const parsed = parseJsonExact(text);
    if (parsed.ok) {
      const b = pspErrorBody.safeParse(parsed.value);
      if (b.success) {
        const f = pspErrorFields(b.data);
        pspCode = f.code === undefined ? undefined : clean(f.code, call);
        pspMessage = f.message === undefined ? undefined : clean(f.message, call);
        pspViolations = f.violations.map((v) => clean(v, call));
      }
    }
    const ra = retryAfterMs(headers.get('retry-after'), now());
    const told = [pspMessage, pspViolations.join('; ')].filter(Boolean).join(': ');
    return new PspError(
      'PSP_HTTP_ERROR',
      `PSP answered ${status} on ${call.endpoint}${pspCode ? ` (${pspCode})` : ''}${told ? `: ${told}` : ''}`,
      {
        status,
        pspCode,
        pspMessage,
        ...(pspViolations.length > 0 ? { pspViolations } : {}),
        endpoint: call.endpoint,
        attempts,
        ...(ra !== undefined ? { retryAfterMs: ra } : {}),
      },
    );
  };

  /** Reads a streamed body chunk by chunk; a silence longer than the timeout aborts it. */
  async function* idleTimed(
    body: ReadableStream<Uint8Array>,
    controller: AbortController,
    state: { timedOut: boolean; timer?: NodeJS.Timeout },
    call: Call,
  ): AsyncGenerator<Uint8Array> {
    const reader = body.getReader();
    const arm = () => {
      clearTimeout(state.timer);
      state.timer = setTimeout(() => {
        state.timedOut = true;
        controller.abort();
      }, timeoutMs);
    };
    try {
      arm();
      for (;;) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (e) {
          throw state.timedOut
            ? new PspError('PSP_TIMEOUT', `PSP stream on ${call.endpoint} was silent for more than ${timeoutMs} ms`, {
                endpoint: call.endpoint,
              })
            : new PspError('PSP_NETWORK', `PSP stream on ${call.endpoint} broke: ${networkReason(e)}`, {
                endpoint: call.endpoint,
              });
        }
        if (r.done) return;
        arm();
        yield r.value;
      }
    } finally {
      clearTimeout(state.timer);
      // Stopping early (consumer broke out) releases the connection.
      reader.cancel().catch(() => undefined);
    }
  }

  const once = async (call: Call, attempt: number): Promise<Answer> => {
    const url = urlOf(call);
    const controller = new AbortController();
    const state: { timedOut: boolean; timer?: NodeJS.Timeout } = { timedOut: false };
    state.timer = setTimeout(() => {
      state.timedOut = true;
      controller.abort();
    }, timeoutMs);
    const started = Date.now();
    try {
      const res = await fetchImpl(url, {
        method: call.method,
        headers: headersOf(call, url),
        body: call.body,
        redirect: 'manual',
        signal: controller.signal,
      });
      if (call.stream && res.ok && res.body) {
        clearTimeout(state.timer);
        log.debug('psp call', {
          endpoint: call.endpoint,
          status: res.status,
          attempt,
          ms: Date.now() - started,
          streamed: true,
        });
        return {
          status: res.status,
          headers: res.headers,
          text: '',
          body: idleTimed(res.body, controller, state, call),
          attempts: attempt,
        };
      }
      const text = await res.text();
      clearTimeout(state.timer);
      log.debug('psp call', { endpoint: call.endpoint, status: res.status, attempt, ms: Date.now() - started });
      return { status: res.status, headers: res.headers, text, attempts: attempt };
    } catch (e) {
      clearTimeout(state.timer);
      if (isPspError(e)) throw e;
      if (state.timedOut)
        throw new PspError('PSP_TIMEOUT', `PSP did not answer ${call.endpoint} within ${timeoutMs} ms`, {
          endpoint: call.endpoint,
          attempts: attempt,
        });
      throw new PspError('PSP_NETWORK', `PSP unreachable on ${call.endpoint}: ${networkReason(e)}`, {
        endpoint: call.endpoint,
        attempts: attempt,
      });
    }
  };

  const backoff = (attempt: number) => {
    const cap = Math.min(retryMaxMs, retryBaseMs * 2 ** (attempt - 1));
    // "Equal jitter": at least half the step, so retries spread out but never fire at once.
    return Math.round(cap / 2 + random() * (cap / 2));
  };

  /** One call with the retry policy; resolves to a 1xx–4xx answer or a 5xx/429 after retries ran out. */
  const send = async (call: Call): Promise<Answer> => {
    for (let attempt = 1; ; attempt++) {
      const canRetry = call.retry && attempt <= maxRetries;
      let answer: Answer;
      try {
        answer = await once(call, attempt);
      } catch (e) {
        if (canRetry && isPspError(e) && (e.code === 'PSP_TIMEOUT' || e.code === 'PSP_NETWORK')) {
          const wait = backoff(attempt);
          log.warn('psp call failed, retrying', { endpoint: call.endpoint, code: e.code, attempt, waitMs: wait });
          await sleep(wait);
          continue;
        }
        throw e;
      }
      if (canRetry && (answer.status === 429 || answer.status >= 500)) {
        const ra = retryAfterMs(answer.headers.get('retry-after'), now());
        const wait = ra !== undefined ? Math.min(ra, retryAfterMaxMs) : backoff(attempt);
        log.warn('psp answered an error, retrying', {
          endpoint: call.endpoint,
          status: answer.status,
          attempt,
          waitMs: wait,
        });
        if (answer.body) await answer.body.return(undefined);
        await sleep(wait);
        continue;
      }
      return answer;
    }
  };

  const expectOk = (call: Call, a: Answer): Answer => {
    if (a.status >= 200 && a.status < 300) return a;
    throw httpError(call, a.status, a.text, a.headers, a.attempts);
  };

  const jsonOf = (call: Call, a: Answer): unknown => {
    const p = parseJsonExact(a.text);
    if (!p.ok)
      throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${call.endpoint} is not JSON: ${p.reason}`, {
        endpoint: call.endpoint,
        status: a.status,
        attempts: a.attempts,
      });
    return p.value;
  };

  const recordOf = (call: Call, value: unknown, status: number, at = ''): PaymentRecord => {
    const r = paymentRecord.safeParse(value);
    if (r.success) return r.data;
    const issue = r.error.issues[0];
    const field = at + (issue?.path.map(String).join('.') || '(root)');
    throw new PspError(
      'PSP_BAD_RESPONSE',
      `PSP answer on ${call.endpoint} is not a payment record: ${field}: ${issue?.message ?? 'invalid'}`,
      { endpoint: call.endpoint, status, field },
    );
  };

  const recordsOf = (call: Call, value: unknown, status: number): PaymentRecord[] => {
    if (Array.isArray(value)) return value.map((v, i) => recordOf(call, v, status, `${i}.`));
    // A single record where a list was expected is read as a list of one.
    if (isPlainObject(value)) return [recordOf(call, value, status)];
    throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${call.endpoint} is not a list of payment records`, {
      endpoint: call.endpoint,
      status,
    });
  };

  const pos = () => seg(project.posId);

  const getOrderTransactions = async (orderId: string): Promise<PaymentRecord[]> => {
    const call: Call = {
      method: 'GET',
      base: 'base',
      path: `/api/v1/pos/${pos()}/orders/${seg(orderId)}`,
      endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id',
      retry: true,
    };
    const a = expectOk(call, await send(call));
    return recordsOf(call, jsonOf(call, a), a.status);
  };

  const mayHaveTakenEffect = (e: unknown): e is PspError =>
    isPspError(e) &&
    (e.code === 'PSP_TIMEOUT' || e.code === 'PSP_NETWORK' || (e.code === 'PSP_HTTP_ERROR' && (e.status ?? 0) >= 500));

  /** After a purchase whose answer was lost: look the order up, as the PSP advises. */
  const lookUpAfterLoss = async (orderId: string, cause: PspError, endpoint: string): Promise<PaymentRecord[]> => {
    log.warn('purchase outcome lost, looking the order up', { endpoint, code: cause.code, status: cause.status });
    if (lookupDelayMs > 0) await sleep(lookupDelayMs);
    try {
      return await getOrderTransactions(orderId);
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
  };

  /**
   * Sends a purchase POST once. When its outcome is lost (5xx, timeout, network), it is never sent again:
   * the order is looked up instead, as the PSP advises.
   */
  const sendPurchase = async (
    call: Call,
    orderId: string,
    endpoint: string,
  ): Promise<{ answer: Answer } | { lost: PspError; found: PaymentRecord[] }> => {
    try {
      const a = await send(call);
      if (a.status >= 500) throw httpError(call, a.status, a.text, a.headers, a.attempts);
      return { answer: a };
    } catch (e) {
      if (!mayHaveTakenEffect(e)) throw e;
      return { lost: e, found: await lookUpAfterLoss(orderId, e, endpoint) };
    }
  };

  const outcomeUnknown = (e: PspError, endpoint: string, found: PaymentRecord[], message: string): PspError =>
    new PspError('PSP_OUTCOME_UNKNOWN', message, {
      endpoint,
      status: e.status,
      pspCode: e.pspCode,
      pspMessage: e.pspMessage,
      found,
      cause: e,
    });

  const purchaseCall = (path: string, endpoint: string, req: Record<string, unknown>): Call => ({
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
  });

  const validationError = (endpoint: string, violations: Violation[]) =>
    new PspError(
      'PSP_VALIDATION',
      `request refused before sending: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`,
      { endpoint, violations },
    );

  const locationOf = (call: Call, a: Answer): string | null => {
    if (a.status < 300 || a.status >= 400) return null;
    const loc = a.headers.get('location');
    if (!loc)
      throw new PspError('PSP_BAD_RESPONSE', `PSP answered ${a.status} on ${call.endpoint} without a Location`, {
        endpoint: call.endpoint,
        status: a.status,
      });
    return new URL(loc, project.baseUrl).toString();
  };

  return {
    project,

    async splitPurchase(req) {
      const endpoint = 'POST /api/v1/split/purchase';
      const v = validatePurchase(req, { now: now() });
      if (!v.ok) throw validationError(endpoint, v.violations);
      const call = purchaseCall('/api/v1/split/purchase', endpoint, req as Record<string, unknown>);
      const sent = await sendPurchase(call, req.order_id, endpoint);
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
      const location = locationOf(call, a);
      if (location !== null) return { kind: 'hosted', location };
      expectOk(call, a);
      return { kind: 'direct', record: recordOf(call, jsonOf(call, a), a.status) };
    },

    async purchaseWithSubscription(req) {
      const endpoint = 'POST /api/v1/payment';
      const v = validateSubscriptionPurchase(req);
      if (!v.ok) throw validationError(endpoint, v.violations);
      const call = purchaseCall('/api/v1/payment', endpoint, req as Record<string, unknown>);
      const sent = await sendPurchase(call, req.order_id, endpoint);
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
      const location = locationOf(call, a);
      if (location !== null) return { location };
      expectOk(call, a);
      throw new PspError('PSP_BAD_RESPONSE', `PSP answered ${a.status} on ${endpoint}; expected 303 with a Location`, {
        endpoint,
        status: a.status,
      });
    },

    async getTransaction(orderId, operation) {
      const call: Call = {
        method: 'GET',
        base: 'base',
        path: `/api/v1/pos/${pos()}/orders/${seg(orderId)}/${seg(operation)}`,
        endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id/:operation',
        retry: true,
      };
      const a = expectOk(call, await send(call));
      return recordOf(call, jsonOf(call, a), a.status);
    },

    getOrderTransactions,

    async getSubscriptionTransactions(recurringId, q) {
      const call: Call = {
        method: 'GET',
        base: 'base',
        path: `/api/v1/pos/${pos()}/recurring/${seg(recurringId)}`,
        endpoint: 'GET /api/v1/pos/:pos_id/recurring/:recurring_id',
        query: { method: q.method, status: q.status },
        retry: true,
      };
      if (q.method !== 'purchase' && q.method !== 'refund')
        throw validationError(call.endpoint, [{ field: 'method', message: 'only purchase or refund' }]);
      const a = expectOk(call, await send(call));
      // Body not published: returned as plain JSON (numbers exact when safe, else their text).
      return toPlainJson(jsonOf(call, a));
    },

    async *periodTransactions(from, to) {
      const call: Call = {
        method: 'GET',
        base: 'base',
        path: `/api/v1/pos/${pos()}/transactions`,
        endpoint: 'GET /api/v1/pos/:pos_id/transactions',
        query: { startDate: String(from.getTime()), enddate: String(to.getTime() - endShift) },
        retry: true,
        stream: true,
      };
      if (!(from.getTime() < to.getTime()))
        throw validationError(call.endpoint, [{ field: 'enddate', message: 'the period end must be after its start' }]);
      const a = expectOk(call, await send(call));
      yield* items(call, a);
    },

    async startRegisterReport(q) {
      const endpoint = 'POST /streaming-report/start';
      const span = q.to.getTime() - q.from.getTime();
      if (!(span > 0))
        throw validationError(endpoint, [{ field: 'end_date', message: 'the period end must be after its start' }]);
      if (span > MAX_REGISTER_PERIOD_MS)
        throw validationError(endpoint, [{ field: 'end_date', message: 'the register period is at most 31 days' }]);
      const body: Record<string, unknown> = {
        project_id: project.posId,
        start_date: isoWithOffset(q.from),
        end_date: isoWithOffset(new Date(q.to.getTime() - endShift)),
      };
      if (q.statuses && q.statuses.length > 0) body.statuses = q.statuses;
      if (q.methods && q.methods.length > 0) body.methods = q.methods;
      if (q.transactionDetails && q.transactionDetails.length > 0) body.transaction_details = q.transactionDetails;
      // Starting a report moves no money: repeating it after a lost answer costs only a second report.
      const call: Call = {
        method: 'POST',
        base: 'report',
        path: '/streaming-report/start',
        endpoint,
        body: JSON.stringify(body),
        retry: true,
      };
      const a = expectOk(call, await send(call));
      const r = registerStartResponse.safeParse(jsonOf(call, a));
      if (!r.success) {
        const field = r.error.issues[0]?.path.map(String).join('.') || '(root)';
        throw new PspError(
          'PSP_BAD_RESPONSE',
          `PSP answer on ${endpoint} is not a report start: ${field}: ${r.error.issues[0]?.message}`,
          { endpoint, status: a.status, field },
        );
      }
      return { reportId: r.data.report_id, count: r.data.count };
    },

    async fetchRegisterReport(reportId) {
      const call: Call = {
        method: 'GET',
        base: 'report',
        path: `/streaming-report/fetch/${seg(reportId)}`,
        endpoint: 'GET /streaming-report/fetch/:report_id',
        retry: true,
        stream: true,
      };
      const a = await send(call);
      if (a.status < 200 || a.status >= 300) {
        // The not-ready answer's HTTP status is not published: the body decides.
        if (isNotReady(a.text)) return { ready: false };
        throw httpError(call, a.status, a.text, a.headers, a.attempts);
      }
      // Peek: a small complete body may be the not-ready object; anything larger is a report.
      const head: Uint8Array[] = [];
      let size = 0;
      let ended = true;
      const it = a.body ?? single(new TextEncoder().encode(a.text));
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        head.push(r.value);
        size += r.value.byteLength;
        if (size > PEEK_BYTES) {
          ended = false;
          break;
        }
      }
      if (ended && isNotReady(Buffer.concat(head).toString('utf8'))) return { ready: false };
      const body = ended ? single(Buffer.concat(head)) : resume(head, it);
      return { ready: true, records: items(call, { ...a, body }) };
    },

    async cancelPayment(orderId) {
      // Not repeated: a second cancel of a cancelled payment is outside the endpoint's scope (its answer is not published).
      const call: Call = {
        method: 'POST',
        base: 'base',
        path: `/api/v1/pos/${pos()}/order/${seg(orderId)}/cancel`,
        endpoint: 'POST /api/v1/pos/:pos_id/order/:order_id/cancel',
        retry: false,
      };
      const a = expectOk(call, await send(call));
      return recordsOf(call, jsonOf(call, a), a.status);
    },

    async resendWebhook(orderId, operation, o = {}) {
      const query: Record<string, string> = { callback: 'true' };
      if (o.transactionId) query.transactionId = o.transactionId;
      // Repeating it is safe: webhooks may arrive more than once by design.
      const call: Call = {
        method: 'GET',
        base: 'base',
        path: `/api/v1/pos/${pos()}/orders/${seg(orderId)}/${seg(operation)}`,
        endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id/:operation?callback=true',
        query,
        retry: true,
      };
      const a = expectOk(call, await send(call));
      const p = parseJsonExact(a.text);
      const r = p.ok ? paymentRecord.safeParse(p.value) : undefined;
      if (r?.success) return r.data;
      log.info('webhook re-send accepted; the answer is not a payment record', {
        endpoint: call.endpoint,
        status: a.status,
      });
      return null;
    },
  };

  async function* items(call: Call, a: Answer): AsyncGenerator<string> {
    try {
      yield* jsonArrayItems(a.body ?? single(new TextEncoder().encode(a.text)));
    } catch (e) {
      if (isPspError(e)) throw e;
      throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${call.endpoint}: ${(e as Error).message}`, {
        endpoint: call.endpoint,
        status: a.status,
        cause: e,
      });
    }
  }
}

function isNotReady(text: string): boolean {
  const p = parseJsonExact(text);
  return p.ok && isPlainObject(p.value) && p.value.code === 'report_not_ready';
}

async function* single(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  if (chunk.byteLength > 0) yield chunk;
}

async function* resume(head: Uint8Array[], rest: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* head;
  yield* rest;
}

function networkReason(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  // The URL is never echoed: only the system's error code or a short reason.
  return cause?.code ?? cause?.message?.slice(0, 80) ?? (e as Error).name ?? 'error';
}
