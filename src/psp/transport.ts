import type { PspProject } from '../config/env';
import { silentLogger, type Logger } from '../log';
import { cleanText, isPspError, PspError } from './errors';
import { isPlainObject, jsonArrayItems, parseJsonExact } from './json';
import { paymentRecord, pspErrorBody, pspErrorFields, type PaymentRecord } from './schemas';
import type { Violation } from './validate';

/**
 * What every call to the PSP goes through, whichever client makes it: the URL, the signed headers, the
 * timeout (for streamed bodies, of each silence), bounded retries of the calls that are safe to repeat, and
 * typed errors that never hold a secret or card data. The reading client (client.ts) and the purchase
 * client (purchase-client.ts) are built on one of these. See docs/psp.md for each decision.
 */

export type RequestSigner = (req: {
  method: string;
  url: string;
  body: string | undefined;
  project: PspProject;
}) => Record<string, string>;

/** Options of either client; each reads its own (the period end, the look-up after a lost purchase). */
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

export interface Call {
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

export interface Answer {
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
export const seg = (s: string): string => {
  if (s === '.' || s === '..' || /^(%2e|\.){1,2}$/i.test(s))
    throw new PspError('PSP_VALIDATION', `a path segment may not be ${JSON.stringify(s)}`, {
      endpoint: 'path',
      violations: [{ field: 'order_id', message: `${JSON.stringify(s)} is not an identifier` }],
    });
  return encodeURIComponent(s);
};

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function retryAfterMs(value: string | null, now: Date = new Date()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** The calls of one project, as both clients make them. */
export interface PspTransport {
  readonly project: PspProject;
  readonly log: Logger;
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /** The project's POS id as a path segment. */
  pos(): string;
  /** One call with the retry policy; resolves to a 1xx–4xx answer or a 5xx/429 after retries ran out. */
  send(call: Call): Promise<Answer>;
  httpError(call: Call, status: number, text: string, headers: Headers, attempts: number): PspError;
  /** The answer when 2xx, else its error. */
  expectOk(call: Call, a: Answer): Answer;
  jsonOf(call: Call, a: Answer): unknown;
  recordOf(call: Call, value: unknown, status: number, at?: string): PaymentRecord;
  recordsOf(call: Call, value: unknown, status: number): PaymentRecord[];
  /** The items of a JSON array body (streamed or whole), each as its exact text. */
  items(call: Call, a: Answer): AsyncGenerator<string>;
  validationError(endpoint: string, violations: Violation[]): PspError;
}

/** A project's settings, resolved once from its options; every step below reads them. */
interface Settings {
  readonly project: PspProject;
  readonly signer: RequestSigner | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly retryAfterMaxMs: number;
  readonly fetchImpl: typeof fetch;
  readonly log: Logger;
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  /** Values to keep out of any error text. */
  readonly secrets: readonly string[];
}

/**
 * One transport per project holding its settings (timeouts, retries, signer, secrets to keep out of errors);
 * the steps (URL, headers, one attempt, back-off, the retry loop, answer checks) are the functions below.
 */
export function createPspTransport(project: PspProject, opts: PspClientOptions = {}): PspTransport {
  const s = settingsOf(project, opts);
  return {
    project,
    log: s.log,
    now: s.now,
    sleep: s.sleep,
    pos: () => seg(project.posId),
    send: (call) => send(s, call),
    httpError: (call, status, text, headers, attempts) => httpError(s, call, status, text, headers, attempts),
    expectOk: (call, a) => expectOk(s, call, a),
    jsonOf,
    recordOf,
    recordsOf,
    items,
    validationError,
  };
}

function settingsOf(project: PspProject, opts: PspClientOptions): Settings {
  return {
    project,
    signer: opts.signer,
    timeoutMs: opts.timeoutMs ?? 30_000,
    maxRetries: opts.maxRetries ?? 3,
    retryBaseMs: opts.retryBaseMs ?? 250,
    retryMaxMs: opts.retryMaxMs ?? 10_000,
    retryAfterMaxMs: opts.retryAfterMaxMs ?? 120_000,
    fetchImpl: opts.fetch ?? globalThis.fetch,
    log: (opts.log ?? silentLogger).child({ component: 'psp-client', project: project.name }),
    now: opts.now ?? (() => new Date()),
    sleep: opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    random: opts.random ?? Math.random,
    secrets: [project.apiKey, project.apiSecret, project.endpointsKey],
  };
}

function urlOf(s: Settings, call: Call): string {
  const root = (call.base === 'base' ? s.project.baseUrl : s.project.reportUrl).replace(/\/+$/, '');
  const u = new URL(root + call.path);
  for (const [k, v] of Object.entries(call.query ?? {})) u.searchParams.set(k, v);
  return u.toString();
}

function headersOf(s: Settings, call: Call, url: string): Headers {
  const { project } = s;
  const h = new Headers({ Accept: 'application/json' });
  if (call.body !== undefined) h.set('Content-Type', 'application/json');
  if (s.signer) {
    for (const [k, v] of Object.entries(s.signer({ method: call.method, url, body: call.body, project }))) h.set(k, v);
  } else {
    h.set('X-API-AUTH', `${project.authScheme ?? 'PAY'} ${project.apiKey}:${project.apiSecret}`);
    h.set('X-API-KEY', project.endpointsKey);
  }
  return h;
}

function clean(s: Settings, text: string, call: Call): string {
  return cleanText(text, [...s.secrets, ...(call.secrets ?? [])]);
}

function httpError(
  s: Settings,
  call: Call,
  status: number,
  text: string,
  headers: Headers,
  attempts: number,
): PspError {
  let pspCode: string | undefined;
  let pspMessage: string | undefined;
  let pspViolations: string[] = [];
  const parsed = parseJsonExact(text);
  if (parsed.ok) {
    const b = pspErrorBody.safeParse(parsed.value);
    if (b.success) {
      const f = pspErrorFields(b.data);
      pspCode = f.code === undefined ? undefined : clean(s, f.code, call);
      pspMessage = f.message === undefined ? undefined : clean(s, f.message, call);
      pspViolations = f.violations.map((v) => clean(s, v, call));
    }
  }
  const ra = retryAfterMs(headers.get('retry-after'), s.now());
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
}

/** The timer of one attempt: it aborts the request when it fires. */
interface AttemptTimer {
  timedOut: boolean;
  timer?: NodeJS.Timeout;
}

/** Reads a streamed body chunk by chunk; a silence longer than the timeout aborts it. */
async function* idleTimed(
  s: Settings,
  body: ReadableStream<Uint8Array>,
  controller: AbortController,
  state: AttemptTimer,
  call: Call,
): AsyncGenerator<Uint8Array> {
  const { timeoutMs } = s;
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

/** One attempt: the request, then the whole body, or (streamed call answered 2xx) the body read as it comes. */
async function once(s: Settings, call: Call, attempt: number): Promise<Answer> {
  const { timeoutMs, log } = s;
  const url = urlOf(s, call);
  const controller = new AbortController();
  const state: AttemptTimer = { timedOut: false };
  state.timer = setTimeout(() => {
    state.timedOut = true;
    controller.abort();
  }, timeoutMs);
  const started = Date.now();
  try {
    const res = await s.fetchImpl(url, {
      method: call.method,
      headers: headersOf(s, call, url),
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
        body: idleTimed(s, res.body, controller, state, call),
        attempts: attempt,
      };
    }
    const text = await res.text();
    clearTimeout(state.timer);
    log.debug('psp call', { endpoint: call.endpoint, status: res.status, attempt, ms: Date.now() - started });
    return { status: res.status, headers: res.headers, text, attempts: attempt };
  } catch (e) {
    clearTimeout(state.timer);
    throw attemptError(s, call, attempt, state, e);
  }
}

/** What a failed attempt throws: its own PspError, a timeout, or the network's reason. */
function attemptError(s: Settings, call: Call, attempt: number, state: AttemptTimer, e: unknown): unknown {
  if (isPspError(e)) return e;
  if (state.timedOut)
    return new PspError('PSP_TIMEOUT', `PSP did not answer ${call.endpoint} within ${s.timeoutMs} ms`, {
      endpoint: call.endpoint,
      attempts: attempt,
    });
  return new PspError('PSP_NETWORK', `PSP unreachable on ${call.endpoint}: ${networkReason(e)}`, {
    endpoint: call.endpoint,
    attempts: attempt,
  });
}

function backoff(s: Settings, attempt: number): number {
  const cap = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** (attempt - 1));
  // "Equal jitter": at least half the step, so retries spread out but never fire at once.
  return Math.round(cap / 2 + s.random() * (cap / 2));
}

/** One call with the retry policy: network errors and timeouts back off; 429 and 5xx honour Retry-After. */
async function send(s: Settings, call: Call): Promise<Answer> {
  const { log } = s;
  for (let attempt = 1; ; attempt++) {
    const canRetry = call.retry && attempt <= s.maxRetries;
    let answer: Answer;
    try {
      answer = await once(s, call, attempt);
    } catch (e) {
      if (canRetry && isPspError(e) && (e.code === 'PSP_TIMEOUT' || e.code === 'PSP_NETWORK')) {
        const wait = backoff(s, attempt);
        log.warn('psp call failed, retrying', { endpoint: call.endpoint, code: e.code, attempt, waitMs: wait });
        await s.sleep(wait);
        continue;
      }
      throw e;
    }
    if (canRetry && (answer.status === 429 || answer.status >= 500)) {
      const ra = retryAfterMs(answer.headers.get('retry-after'), s.now());
      const wait = ra !== undefined ? Math.min(ra, s.retryAfterMaxMs) : backoff(s, attempt);
      log.warn('psp answered an error, retrying', {
        endpoint: call.endpoint,
        status: answer.status,
        attempt,
        waitMs: wait,
      });
      if (answer.body) await answer.body.return(undefined);
      await s.sleep(wait);
      continue;
    }
    return answer;
  }
}

function expectOk(s: Settings, call: Call, a: Answer): Answer {
  if (a.status >= 200 && a.status < 300) return a;
  throw httpError(s, call, a.status, a.text, a.headers, a.attempts);
}

function jsonOf(call: Call, a: Answer): unknown {
  const p = parseJsonExact(a.text);
  if (!p.ok)
    throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${call.endpoint} is not JSON: ${p.reason}`, {
      endpoint: call.endpoint,
      status: a.status,
      attempts: a.attempts,
    });
  return p.value;
}

function recordOf(call: Call, value: unknown, status: number, at = ''): PaymentRecord {
  const r = paymentRecord.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = at + (issue?.path.map(String).join('.') || '(root)');
  throw new PspError(
    'PSP_BAD_RESPONSE',
    `PSP answer on ${call.endpoint} is not a payment record: ${field}: ${issue?.message ?? 'invalid'}`,
    { endpoint: call.endpoint, status, field },
  );
}

function recordsOf(call: Call, value: unknown, status: number): PaymentRecord[] {
  if (Array.isArray(value)) return value.map((v, i) => recordOf(call, v, status, `${i}.`));
  // A single record where a list was expected is read as a list of one.
  if (isPlainObject(value)) return [recordOf(call, value, status)];
  throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${call.endpoint} is not a list of payment records`, {
    endpoint: call.endpoint,
    status,
  });
}

function validationError(endpoint: string, violations: Violation[]): PspError {
  return new PspError(
    'PSP_VALIDATION',
    `request refused before sending: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`,
    { endpoint, violations },
  );
}

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

export async function* single(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  if (chunk.byteLength > 0) yield chunk;
}

function networkReason(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  // The URL is never echoed: only the system's error code or a short reason.
  return cause?.code ?? cause?.message?.slice(0, 80) ?? (e as Error).name ?? 'error';
}
