import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PspProject } from '../config/env';
import { canonicalIp } from '../config/ip-address';
import { isConnectionError } from '../db/errors';
import type { Logger } from '../log';
import { parseWebhookPayload } from '../psp/parse';
import { decodeBase64Url, verify } from '../psp/signature';
import { isStoreError } from '../store/errors';
import type { EventStore } from '../store/types';
import { createAppendBatcher, type AppendBatcher } from '../ingest/append-batcher';
import { sendJson, type Route } from './http-app';
import { recordRejected, webhookReceived } from '../ingest/observations';
import { createRejectionLimiter, type RejectionLimiter } from './rate-limit';

/**
 * The webhook receiver (section 6): `POST /webhooks/<pos_id>` with a form-urlencoded `data` (base64url
 * JSON) and `signature`. A 200 is sent only after the WebhookReceived event has committed; every
 * other answer says why nothing was stored:
 *   401 wrong/missing signature · 400 malformed form, base64, JSON or payload · 413 body too large ·
 *   404 unknown pos_id · 403 sender not allowed · 405 not POST · 429 too many rejected requests from
 *   this sender · 503 store unavailable (the PSP delivers again).
 */

export interface ReceiverOptions {
  readonly allowedIps: readonly string[];
  readonly trustProxy: boolean;
  /** with trustProxy: X-Forwarded-For only from these peers (absent or empty: from any peer) */
  readonly trustedProxies?: readonly string[];
  readonly maxBodyBytes: number;
}

export interface ReceiverDeps {
  readonly store: EventStore;
  readonly projects: readonly Pick<PspProject, 'posId' | 'apiSecret' | 'name'>[];
  readonly log: Logger;
  readonly options: ReceiverOptions;
  /** Readiness probe (e.g. `select 1`); defaults to reading the store's head. */
  readonly ready?: () => Promise<unknown>;
  /** false: answer 200 without appending (the benchmark's ceiling); never in production. */
  readonly durable?: boolean;
  readonly limiter?: RejectionLimiter;
  readonly now?: () => Date;
  /** Group commit: largest group per transaction and transactions in flight (see append-batcher.ts). */
  readonly groupCommit?: { readonly maxBatch?: number; readonly maxInFlight?: number };
}

export interface ReceiverMetrics {
  received: number;
  accepted: number;
  unauthorized: number;
  malformed: number;
  tooLarge: number;
  unknownPos: number;
  forbidden: number;
  rateLimited: number;
  unavailable: number;
  failed: number;
}

export interface WebhookReceiver {
  /** Route for createHttpApp: takes /webhooks/*, /healthz, /readyz, /metrics. */
  readonly handle: Route;
  metrics(): ReceiverMetrics;
  /** Waits for the appends queued so far. */
  drain(): Promise<void>;
}

const FORM_BODY = /^[A-Za-z0-9%&=+._~*\-!'()]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

type Outcome =
  | { status: 200 }
  | { status: 400 | 401 | 403 | 404 | 405 | 413; reason: string; metric: keyof ReceiverMetrics }
  | { status: 503; reason: string };

/** The canonical form of an address (so it meets the allow-list's); anything else as it came, never matching. */
function normalizeIp(ip: string | undefined): string {
  if (!ip) return 'unknown';
  return canonicalIp(ip) ?? ip.trim();
}

/**
 * A connection's peer in canonical form, worked out once per connection: a PSP keeps its connections open and
 * posts many webhooks on each, and the peer of a connection never changes (issue 26: the canonical form was
 * an address parse per webhook). Not kept while the address is unknown (a socket already closed).
 */
const PEERS = new WeakMap<IncomingMessage['socket'], string>();
function peerOf(socket: IncomingMessage['socket']): string {
  let peer = PEERS.get(socket);
  if (peer === undefined) {
    peer = normalizeIp(socket.remoteAddress);
    if (socket.remoteAddress) PEERS.set(socket, peer);
  }
  return peer;
}

/**
 * The sender: the socket's peer, or the address the trusted proxy appended last to X-Forwarded-For, in
 * canonical form either way (a proxy may write `::FFFF:203.0.113.10` or a full IPv6 address). With a list
 * of trusted proxies, a request that did not come through one of them is taken at its peer: otherwise
 * anyone reaching the port directly could name an allowed sender in the header.
 */
export function senderOf(req: IncomingMessage, trustProxy: boolean, trustedProxies?: ReadonlySet<string>): string {
  const peer = peerOf(req.socket);
  if (trustProxy && (!trustedProxies || trustedProxies.size === 0 || trustedProxies.has(peer))) {
    const xff = req.headers['x-forwarded-for'];
    const text = Array.isArray(xff) ? xff.join(',') : xff;
    const last = text
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .pop();
    if (last) return normalizeIp(last);
  }
  return peer;
}

/**
 * The store cannot take the webhook now, so the PSP must deliver it again: unreachable, or refusing appends
 * until an operator has moved the transaction counter on after a restore (TRANSACTION_COUNTER_BEHIND).
 */
function unavailable(e: unknown): { status: 503; reason: string } | undefined {
  if (isStoreError(e, 'TRANSACTION_COUNTER_BEHIND'))
    return {
      status: 503,
      reason: 'store refuses appends until its transaction counter is advanced (recon store advance-xid)',
    };
  return isStoreError(e, 'STORE_UNAVAILABLE') || isConnectionError(e)
    ? { status: 503, reason: 'store unavailable' }
    : undefined;
}

/**
 * A Prometheus scraper asks for its text format (Accept: text/plain or application/openmetrics-text), as
 * does `?format=prometheus`; anything else gets the JSON counters.
 */
function wantsPrometheusText(req: IncomingMessage): boolean {
  if (/[?&]format=prometheus(?:&|$)/.test(req.url ?? '')) return true;
  const accept = req.headers.accept ?? '';
  return /\b(?:text\/plain|application\/openmetrics-text)\b/.test(accept) && !/\bapplication\/json\b/.test(accept);
}

const OUTCOMES: ReadonlyArray<[keyof ReceiverMetrics, string]> = [
  ['accepted', 'accepted'],
  ['unauthorized', 'unauthorized'],
  ['malformed', 'malformed'],
  ['tooLarge', 'too_large'],
  ['unknownPos', 'unknown_pos'],
  ['forbidden', 'forbidden'],
  ['rateLimited', 'rate_limited'],
  ['unavailable', 'unavailable'],
  ['failed', 'failed'],
];

/** The counters in Prometheus's text exposition format (0.0.4). */
export function prometheusText(m: ReceiverMetrics): string {
  const lines = [
    '# HELP recon_webhooks_received_total Webhook requests received on POST /webhooks/<pos_id>.',
    '# TYPE recon_webhooks_received_total counter',
    `recon_webhooks_received_total ${m.received}`,
    '# HELP recon_webhooks_total Webhook requests answered, by outcome (accepted: stored and answered 200).',
    '# TYPE recon_webhooks_total counter',
    ...OUTCOMES.map(([k, outcome]) => `recon_webhooks_total{outcome="${outcome}"} ${m[k]}`),
  ];
  return lines.join('\n') + '\n';
}

/** Reads the body up to `max` bytes; null when it is larger. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve(null);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!over) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

type ReceiverProject = ReceiverDeps['projects'][number];

/** One receiver's settings, its batcher and its counters, shared by the steps below. */
interface Receiving {
  readonly deps: ReceiverDeps;
  readonly secrets: ReadonlyMap<string, ReceiverProject>;
  readonly batcher: AppendBatcher;
  readonly limiter: RejectionLimiter;
  readonly now: () => Date;
  readonly durable: boolean;
  readonly log: Logger;
  readonly m: ReceiverMetrics;
  readonly ready: () => Promise<unknown>;
  readonly allowed: ReadonlySet<string>;
  readonly proxies: ReadonlySet<string>;
}

export function createWebhookReceiver(deps: ReceiverDeps): WebhookReceiver {
  const r: Receiving = {
    deps,
    secrets: new Map(deps.projects.map((p) => [p.posId.toLowerCase(), p])),
    batcher: createAppendBatcher(deps.store, deps.groupCommit),
    limiter: deps.limiter ?? createRejectionLimiter(),
    now: deps.now ?? (() => new Date()),
    durable: deps.durable ?? true,
    log: deps.log.child({ module: 'webhooks' }),
    m: {
      received: 0,
      accepted: 0,
      unauthorized: 0,
      malformed: 0,
      tooLarge: 0,
      unknownPos: 0,
      forbidden: 0,
      rateLimited: 0,
      unavailable: 0,
      failed: 0,
    },
    ready: deps.ready ?? (() => deps.store.headPosition()),
    // The list as written may spell an address otherwise than the sender's canonical form: compare canonical forms.
    allowed: new Set(deps.options.allowedIps.map((ip) => canonicalIp(ip) ?? ip)),
    proxies: new Set((deps.options.trustedProxies ?? []).map((ip) => canonicalIp(ip) ?? ip)),
  };
  const handle: Route = (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && serveProbe(r, req, res, path)) return true;
    const match = /^\/webhooks\/([^/]+)\/?$/.exec(path);
    if (!match) return false;
    r.m.received++;
    const sender = senderOf(req, deps.options.trustProxy, r.proxies);
    let posId = match[1]!;
    try {
      posId = decodeURIComponent(posId);
    } catch {
      // an undecodable id is simply unknown (404)
    }
    receive(r, req, posId, sender).then(
      (o) => answer(r, req, res, posId, sender, o),
      (e) => {
        r.m.failed++;
        r.log.error('webhook handling failed', { posId, sender, error: e });
        sendJson(res, 500, { error: 'internal_error' });
      },
    );
    return true;
  };
  return { handle, metrics: () => ({ ...r.m }), drain: () => r.batcher.drain() };
}

/** GET /healthz, /readyz and /metrics; false for any other path. */
function serveProbe(r: Receiving, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  if (path === '/healthz') {
    sendJson(res, 200, { status: 'ok' });
    return true;
  }
  if (path === '/readyz') {
    r.ready().then(
      () => sendJson(res, 200, { status: 'ready' }),
      (e) => {
        r.log.warn('not ready', { error: e });
        sendJson(res, 503, { status: 'unavailable' });
      },
    );
    return true;
  }
  if (path === '/metrics') {
    if (wantsPrometheusText(req)) {
      const text = prometheusText(r.m);
      res.writeHead(200, {
        'content-type': 'text/plain; version=0.0.4; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    } else sendJson(res, 200, { webhooks: { ...r.m } });
    return true;
  }
  return false;
}

async function rejectPayload(
  r: Receiving,
  posId: string,
  field: string,
  reason: string,
  raw: string,
  sender: string,
): Promise<Outcome> {
  // Authentic (signed) but unusable: keep it for inspection, then tell the sender why.
  try {
    await r.batcher.append(
      recordRejected(posId, 'webhook', field, reason, raw, {
        receivedAt: r.now().toISOString(),
        remoteAddress: sender,
      }),
    );
  } catch (e) {
    const out = unavailable(e);
    if (out) return out;
    throw e;
  }
  return { status: 400, reason: `${field}: ${reason}`, metric: 'malformed' };
}

/** A webhook request checked (sender, pos_id, method, size, type, form, signature), then its payload stored. */
async function receive(r: Receiving, req: IncomingMessage, posId: string, sender: string): Promise<Outcome> {
  const addressed = checkRequest(r, req, posId, sender);
  if ('status' in addressed) return addressed;
  const { project } = addressed;
  const read = await readForm(r, req);
  if ('status' in read) return read;
  const { datas, signatures } = read.form;
  if (datas.length !== 1 || datas[0] === '')
    return { status: 400, reason: 'form field data missing or repeated', metric: 'malformed' };
  if (signatures.length !== 1 || !verify(project.apiSecret, datas[0]!, signatures[0]!)) {
    return {
      status: 401,
      reason: signatures.length === 0 ? 'signature missing' : 'signature invalid',
      metric: 'unauthorized',
    };
  }
  return storePayload(r, project, datas[0]!, sender);
}

/** What is known before the body is read: the sender allowed, the pos_id known, a POST of a form not too large. */
function checkRequest(
  r: Receiving,
  req: IncomingMessage,
  posId: string,
  sender: string,
): Outcome | { project: ReceiverProject } {
  if (r.allowed.size > 0 && !r.allowed.has(sender)) {
    return { status: 403, reason: 'sender not allowed', metric: 'forbidden' };
  }
  const project = r.secrets.get(posId.toLowerCase());
  if (!project) return { status: 404, reason: 'unknown pos_id', metric: 'unknownPos' };
  if (req.method !== 'POST') return { status: 405, reason: 'use POST', metric: 'malformed' };
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > r.deps.options.maxBodyBytes)
    return { status: 413, reason: `body over ${r.deps.options.maxBodyBytes} bytes`, metric: 'tooLarge' };
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return { status: 400, reason: 'expected content-type application/x-www-form-urlencoded', metric: 'malformed' };
  return { project };
}

/** The values of the two fields a webhook's form carries, each as often as it was given. */
export interface WebhookForm {
  readonly datas: readonly string[];
  readonly signatures: readonly string[];
}

/** The body read (up to the limit) as a form. */
async function readForm(r: Receiving, req: IncomingMessage): Promise<Outcome | { form: WebhookForm }> {
  const body = await readBody(req, r.deps.options.maxBodyBytes);
  if (body === null)
    return { status: 413, reason: `body over ${r.deps.options.maxBodyBytes} bytes`, metric: 'tooLarge' };
  const text = body.toString('latin1');
  if (!FORM_BODY.test(text)) return { status: 400, reason: 'malformed form body', metric: 'malformed' };
  try {
    return { form: webhookForm(text) };
  } catch {
    return { status: 400, reason: 'malformed form body', metric: 'malformed' };
  }
}

/**
 * The `data` and `signature` fields of a form body, as URLSearchParams reads them (`+` is a space, then
 * percent-decoding as UTF-8), without building one per webhook (issue 26: it cost more than verifying the
 * signature). A part decodeURIComponent refuses (a stray `%`, bytes that are not UTF-8), which
 * URLSearchParams reads leniently, sends the whole body through URLSearchParams.
 */
export function webhookForm(text: string): WebhookForm {
  const datas: string[] = [];
  const signatures: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    if (end > start) {
      let eq = text.indexOf('=', start);
      if (eq < 0 || eq > end) eq = end;
      const name = formDecoded(text.slice(start, eq));
      const list = name === 'data' ? datas : name === 'signature' ? signatures : undefined;
      const value = list && formDecoded(eq < end ? text.slice(eq + 1, end) : '');
      if (name === undefined || (list && value === undefined)) return viaSearchParams(text);
      list?.push(value!);
    }
    start = end + 1;
  }
  return { datas, signatures };
}

function formDecoded(part: string): string | undefined {
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function viaSearchParams(text: string): WebhookForm {
  const form = new URLSearchParams(text);
  return { datas: form.getAll('data'), signatures: form.getAll('signature') };
}

/** A signed payload decoded and parsed, then stored: as received, or as rejected with the reason. */
async function storePayload(r: Receiving, project: ReceiverProject, data: string, sender: string): Promise<Outcome> {
  const bytes = decodeBase64Url(data);
  // a signed payload refused before it is JSON is kept decoded as far as it goes (a byte that is not UTF-8 as
  // U+FFFD), never as its encoding: card numbers and tokens inside are masked only in a text that shows them
  if (bytes === null)
    return rejectPayload(
      r,
      project.posId,
      'data',
      'not base64url',
      Buffer.from(data, 'base64').toString('utf8'),
      sender,
    );
  let json: string;
  try {
    json = utf8.decode(bytes);
  } catch {
    return rejectPayload(
      r,
      project.posId,
      'data',
      'decoded data is not UTF-8',
      Buffer.from(bytes).toString('utf8'),
      sender,
    );
  }
  const parsed = parseWebhookPayload(json);
  if (!parsed.ok) return rejectPayload(r, project.posId, parsed.field, parsed.reason, json, sender);
  const claimedPos = parsed.value.other['pos_id'];
  if (typeof claimedPos === 'string' && claimedPos.toLowerCase() !== project.posId.toLowerCase()) {
    return rejectPayload(r, project.posId, 'pos_id', 'differs from the pos_id of the address', json, sender);
  }
  if (!r.durable) return { status: 200 };
  try {
    await r.batcher.append(
      webhookReceived(project.posId, json, parsed.value, { receivedAt: r.now().toISOString(), remoteAddress: sender }),
    );
  } catch (e) {
    const out = unavailable(e);
    if (out) return out;
    throw e;
  }
  return { status: 200 };
}

function answer(r: Receiving, req: IncomingMessage, res: ServerResponse, posId: string, sender: string, o: Outcome) {
  const { m, log } = r;
  if (o.status === 200) {
    m.accepted++;
    sendJson(res, 200, { status: 'accepted' });
    return;
  }
  if (o.status === 503) {
    m.unavailable++;
    log.error(`webhook not stored: ${o.reason}`, { posId, sender });
    sendJson(res, 503, { error: 'unavailable', reason: o.reason }, { 'retry-after': '5' });
    return;
  }
  // A rejection: spend the sender's budget; once spent, answer a bare 429 and log nothing more.
  const close: Record<string, string> = o.status === 413 ? { connection: 'close' } : {};
  if (!r.limiter.take(sender)) {
    m.rateLimited++;
    if (!req.complete) req.resume();
    sendJson(res, 429, { error: 'too_many_rejected_requests' }, { 'retry-after': '1', connection: 'close' });
    return;
  }
  m[o.metric]++;
  log.warn('webhook rejected', { posId, sender, status: o.status, reason: o.reason });
  if (!req.complete) req.resume();
  sendJson(res, o.status, { error: o.reason }, close);
}
