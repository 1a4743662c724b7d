import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DateTime } from 'luxon';
import type { PspProject } from '../config/env';
import { cancelOrder, completeCheckout, createLiveOrder } from './live';
import type { Operation, Order, PosCredentials, SandboxMethod, SandboxStatus } from './model';
import { createRng, hashSeed } from './random';
import {
  DEFAULT_REGISTER_FIELDS,
  jsonText,
  paymentRecord,
  periodRecord,
  REGISTER_FIELDS,
  registerRowCount,
  registerRows,
  type RegisterField,
} from './render';
import { generateScenario, type Scenario, type ScenarioOptions } from './scenario';
import {
  deliver,
  signWebhook,
  postWebhook,
  type DeliveryJob,
  type DeliveryOptions,
  type DeliveryStats,
  type WebhookTarget,
} from './webhooks';

/**
 * The sandbox PSP: a real HTTP server on 127.0.0.1 with the PSP's paths (section 4), its
 * authentication (section 5) and rules, serving a deterministic scenario, with fault knobs.
 * Main API under {baseUrl}/api/v1/..., register report under {reportUrl}/streaming-report/...
 */

export interface Faults {
  /** share of requests answered 500/502/503 */
  serverErrorRate: number;
  /** share of requests answered 429 with Retry-After */
  tooManyRequestsRate: number;
  retryAfterSeconds: number;
  /** share of requests delayed by slowMs before being handled */
  slowRate: number;
  slowMs: number;
  /** share of requests whose connection is destroyed without an answer */
  resetRate: number;
  /** share of JSON answers cut in the middle (status 200, invalid JSON) */
  truncateRate: number;
  /** fetches answered report_not_ready before a report is served */
  reportNotReadyPolls: number;
  reportNeverReady: boolean;
  /** HTTP status of the report_not_ready answer (the interface shows only its body) */
  notReadyStatus: number;
  /** from the second fetch of a report on, pending operations show as success (a late status change) */
  registerChangesBetweenFetches: boolean;
  /** which requests the rate-based faults apply to (default: all) */
  appliesTo: (req: { method: string; path: string }) => boolean;
}

export const DEFAULT_FAULTS: Faults = {
  serverErrorRate: 0,
  tooManyRequestsRate: 0,
  retryAfterSeconds: 0,
  slowRate: 0,
  slowMs: 0,
  resetRate: 0,
  truncateRate: 0,
  reportNotReadyPolls: 1,
  reportNeverReady: false,
  notReadyStatus: 200,
  registerChangesBetweenFetches: false,
  appliesTo: () => true,
};

export interface SandboxOptions {
  /** a generated scenario, or the options to generate one */
  readonly scenario: Scenario | ScenarioOptions;
  /** default 0: any free port */
  readonly port?: number;
  readonly faults?: Partial<Faults>;
  /** where scenario webhooks go (re-sends, cancellations); deliverWebhooks(target) also sets it */
  readonly webhookTarget?: WebhookTarget | string;
  /** clock for orders created over HTTP (default Date.now); the scenario itself never reads it */
  readonly now?: () => number;
  /** accepts the signed `PAY-HMAC-SHA1 key:signature` form; without it that form is refused (its algorithm is not published) */
  /**
   * How the end of a register or period query is read (the PSP does not say). 'inclusive' (default, as
   * src/psp/client.ts assumes: it sends the window's end minus 1 ms) serves [start, end]; 'exclusive' serves [start, end).
   */
  readonly periodEnd?: 'inclusive' | 'exclusive';
  readonly verifySignedAuth?: (req: {
    method: string;
    url: string;
    body: string;
    apiKey: string;
    signature: string;
    credentials: PosCredentials;
  }) => boolean;
}

export interface SandboxStats {
  requests: number;
  byRoute: Record<string, number>;
  unauthorized: number;
  faults: {
    serverErrors: number;
    tooManyRequests: number;
    resets: number;
    slow: number;
    truncated: number;
    notReady: number;
  };
  reportsStarted: number;
  reportFetches: number;
  registerRowsServed: number;
  periodRecordsServed: number;
  cancellations: number;
  webhooks: {
    sent: number;
    delivered: number;
    failed: number;
    resendRequests: number;
    resendsLostForGood: number;
    withoutTarget: number;
  };
}

export interface Sandbox {
  readonly baseUrl: string;
  readonly reportUrl: string;
  readonly port: number;
  readonly scenario: Scenario;
  /** one per project, ready for createPspClient (sandbox credentials) */
  readonly projects: readonly PspProject[];
  readonly stats: SandboxStats;
  readonly faults: Readonly<Faults>;
  setFaults(f: Partial<Faults>): void;
  /** sends the scenario's webhooks (those not lost by the scenario) with the delivery knobs */
  deliverWebhooks(target: WebhookTarget | string, opts?: DeliveryOptions): Promise<DeliveryStats>;
  /** resolves when the webhooks triggered by requests (re-sends, purchases, cancellations) are sent */
  settled(): Promise<void>;
  close(): Promise<void>;
}

interface Report {
  readonly id: string;
  readonly posId: string;
  readonly from: number;
  readonly to: number;
  readonly statuses: readonly string[] | null;
  readonly methods: readonly string[] | null;
  readonly fields: readonly RegisterField[];
  readonly count: number;
  polls: number;
  fetches: number;
}

/** An answer with the PSP's error body `{ message, args: { code } }`, thrown by the handlers. */
interface HttpFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfter?: number;
}
const HTTP_FAILURE = Symbol('sandbox http failure');
function HttpError(status: number, code: string, message: string, retryAfter?: number): HttpFailure {
  return Object.assign(new Error(message), { status, code, retryAfter, [HTTP_FAILURE]: true });
}
const isHttpFailure = (e: unknown): e is HttpFailure => typeof e === 'object' && e !== null && HTTP_FAILURE in e;

const STATUSES: readonly SandboxStatus[] = ['init', 'pending', 'success', 'failure'];
const METHODS = ['auth', 'purchase', 'capture', 'void', 'p2p', 'credit', 'lookup', 'refund', 'dispute', 'recurrent'];
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const MAX_PERIOD_MS = 31 * 24 * 3600_000;
const MAX_BODY = 1 << 20;

export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const scenario = 'order' in opts.scenario ? opts.scenario : generateScenario(opts.scenario);
  const now = opts.now ?? (() => Date.now());
  let faults: Faults = { ...DEFAULT_FAULTS, ...(opts.faults ?? {}) };
  const faultRng = createRng(hashSeed(scenario.seed, 'faults'));
  const liveRng = createRng(hashSeed(scenario.seed, 'live'));
  let target: WebhookTarget | undefined = toTarget(opts.webhookTarget);
  let deliveries = 0;
  // queries are served as [from, to) internally; an inclusive end covers its last millisecond too
  const endShift = (opts.periodEnd ?? 'inclusive') === 'inclusive' ? 1 : 0;

  const live = new Map<string, Order>();
  const checkouts = new Map<string, string>(); // checkout id → order id
  const cancelledAt = new Map<string, number>(); // scenario orders cancelled over HTTP
  const reports = new Map<string, Report>();
  const pending = new Set<Promise<unknown>>();
  const stats: SandboxStats = {
    requests: 0,
    byRoute: {},
    unauthorized: 0,
    faults: { serverErrors: 0, tooManyRequests: 0, resets: 0, slow: 0, truncated: 0, notReady: 0 },
    reportsStarted: 0,
    reportFetches: 0,
    registerRowsServed: 0,
    periodRecordsServed: 0,
    cancellations: 0,
    webhooks: { sent: 0, delivered: 0, failed: 0, resendRequests: 0, resendsLostForGood: 0, withoutTarget: 0 },
  };

  const effective = (order: Order): Order => {
    const at = cancelledAt.get(order.orderId);
    if (at === undefined) return order;
    const c = cancelOrder(order, at);
    return c.ok ? c.order : order;
  };
  const findOrder = (posId: string, orderId: string): Order | undefined => {
    const o = live.get(orderId) ?? scenario.findOrder(orderId);
    return o && o.posId === posId ? effective(o) : undefined;
  };
  /** every operation of a project with `at` in [from, to): the scenario's, then those made over HTTP */
  function* operationsIn(posId: string, from: number, to: number): Generator<Operation> {
    for (const o of scenario.orders({ from, to })) {
      if (o.posId !== posId) continue;
      for (const op of effective(o).operations) if (op.at >= from && op.at < to) yield op;
    }
    for (const o of live.values()) {
      if (o.posId !== posId) continue;
      for (const op of o.operations) if (op.at >= from && op.at < to) yield op;
    }
  }
  const credentialsOf = (posId: string) => scenario.credentials.find((c) => c.posId === posId)!;

  /** sends one operation's webhook in the background (tracked by settled()) */
  const sendInBackground = (order: Order, op: Operation) => {
    const kind = op.recurring && op.method === 'recurrent' ? 'recurring' : 'payment';
    const url =
      order.index < 0
        ? kind === 'recurring'
          ? (order.notificationUrl ?? order.serverUrl)
          : order.serverUrl
        : target?.(order.posId, { kind, orderId: order.orderId });
    if (!url) {
      stats.webhooks.withoutTarget++;
      return;
    }
    const signed = signWebhook(op, credentialsOf(order.posId).apiSecret);
    stats.webhooks.sent++;
    const p = postWebhook(url, signed.form, 10_000).then((out) => {
      if (out.ok) stats.webhooks.delivered++;
      else stats.webhooks.failed++;
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  // -------------------------------------------------------------------------------------------------
  // Authentication (section 5)

  const authenticate = (req: IncomingMessage, body: string, requireEndpointsKey: boolean): PosCredentials => {
    const header = req.headers['x-api-auth'];
    const m = typeof header === 'string' ? /^(PAY|PAY-HMAC-SHA1) ([^:\s]+):(\S+)$/.exec(header.trim()) : null;
    const deny = (why: string): never => {
      stats.unauthorized++;
      throw HttpError(401, 'unauthorized', `Authentication failed: ${why}`);
    };
    if (!m) return deny('X-API-AUTH missing or malformed');
    const creds = scenario.credentials.find((c) => c.apiKey === m[2]);
    if (!creds) return deny('unknown API key');
    if (m[1] === 'PAY') {
      if (m[3] !== creds.apiSecret) return deny('wrong API secret');
    } else if (
      !opts.verifySignedAuth?.({
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        apiKey: m[2]!,
        signature: m[3]!,
        credentials: creds,
      })
    ) {
      return deny('signed form not accepted by this sandbox');
    }
    const key = req.headers['x-api-key'];
    if (requireEndpointsKey && key !== creds.endpointsKey) return deny('X-API-KEY missing or wrong');
    return creds;
  };
  const requirePos = (creds: PosCredentials, posId: string) => {
    if (creds.posId !== posId) throw HttpError(403, 'forbidden', 'These credentials do not belong to this pos_id');
  };

  // -------------------------------------------------------------------------------------------------
  // Routes

  type Ctx = { req: IncomingMessage; res: ServerResponse; url: URL; body: string; truncate: boolean };
  type Route = {
    method: string;
    pattern: RegExp;
    name: string;
    handle: (ctx: Ctx, m: RegExpExecArray) => Promise<void> | void;
  };

  const json = (ctx: Ctx, status: number, value: unknown, headers: Record<string, string> = {}) => {
    let text = jsonText(value);
    if (ctx.truncate && status === 200) {
      stats.faults.truncated++;
      text = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
    }
    ctx.res.writeHead(status, { 'content-type': 'application/json', ...headers });
    ctx.res.end(text);
  };
  const parseBody = (ctx: Ctx): unknown => {
    if (!ctx.body) return undefined;
    try {
      return JSON.parse(ctx.body);
    } catch {
      throw HttpError(400, 'invalid_json', 'The request body is not valid JSON');
    }
  };

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/api\/v1\/split\/purchase$/,
      name: 'split-purchase',
      handle: (ctx) => createOrder(ctx, 'split'),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v1\/payment$/,
      name: 'subscription-purchase',
      handle: (ctx) => createOrder(ctx, 'subscription'),
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/checkout\/([^/]+)\/form$/,
      name: 'checkout-form',
      handle: (ctx, m) => {
        const orderId = checkouts.get(m[1]!);
        if (!orderId) throw HttpError(404, 'not_found', 'No such checkout');
        const action = (o: string) =>
          `<form method="post" action="/api/v1/checkout/${m[1]}/pay?outcome=${o}"><button>${o === 'success' ? 'Pay' : 'Fail the payment'}</button></form>`;
        ctx.res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        ctx.res.end(
          `<!doctype html><title>Sandbox checkout</title><h1>Sandbox checkout</h1><p>Order ${escapeHtml(orderId)}</p>${action('success')}${action('failure')}`,
        );
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/v1\/checkout\/([^/]+)\/pay$/,
      name: 'checkout-pay',
      handle: (ctx, m) => {
        const orderId = checkouts.get(m[1]!);
        const order = orderId ? live.get(orderId) : undefined;
        if (!order) throw HttpError(404, 'not_found', 'No such checkout');
        const outcome = ctx.url.searchParams.get('outcome') === 'failure' ? 'failure' : 'success';
        const paid = completeCheckout(order, outcome, {
          now: now(),
          rng: liveRng,
          subMerchants: scenario.subMerchants,
        });
        live.set(order.orderId, paid);
        if (paid !== order) sendInBackground(paid, paid.operations[0]!);
        json(ctx, 200, paymentRecord(paid.operations[0]!));
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/v1\/pos\/([^/]+)\/order\/([^/]+)\/cancel$/,
      name: 'cancel',
      handle: (ctx, m) => {
        const [posId, orderId] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
        requirePos(authenticate(ctx.req, ctx.body, true), posId);
        const order = findOrder(posId, orderId);
        if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
        const at = now();
        const c = cancelOrder(order, at);
        if (!c.ok)
          throw HttpError(400, 'cancel_not_allowed', 'Only a hosted purchase or auth in status init can be cancelled');
        if (live.has(orderId)) live.set(orderId, c.order);
        else cancelledAt.set(orderId, at);
        stats.cancellations++;
        sendInBackground(c.order, c.order.operations[0]!);
        json(ctx, 200, [paymentRecord(c.order.operations[0]!, { cancelled: true })]);
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/pos\/([^/]+)\/transactions$/,
      name: 'period-transactions',
      handle: async (ctx, m) => {
        const posId = decodeURIComponent(m[1]!);
        requirePos(authenticate(ctx.req, ctx.body, true), posId);
        const from = msParam(ctx.url, 'startDate');
        const to = msParam(ctx.url, 'enddate') + endShift;
        if (to <= from) throw HttpError(400, 'validation_error', 'enddate must be after startDate');
        const records = (function* () {
          for (const op of operationsIn(posId, from, to)) {
            const rec = periodRecord(op);
            if (rec !== null) {
              stats.periodRecordsServed++;
              yield rec;
            }
          }
        })();
        await streamArray(ctx, records);
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/pos\/([^/]+)\/recurring\/([^/]+)$/,
      name: 'subscription-transactions',
      handle: (ctx, m) => {
        const [posId, recurringId] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
        requirePos(authenticate(ctx.req, ctx.body, true), posId);
        const method = ctx.url.searchParams.get('method');
        const status = ctx.url.searchParams.get('status');
        if (method !== 'purchase' && method !== 'refund')
          throw HttpError(400, 'validation_error', 'method: purchase or refund is required');
        if (!status || !STATUSES.includes(status as SandboxStatus))
          throw HttpError(400, 'validation_error', 'status: a transaction status is required');
        const order =
          [...live.values()].find((o) => o.recurringId === recurringId) ?? scenario.findRecurring(recurringId);
        if (!order || order.posId !== posId) throw HttpError(404, 'not_found', `Subscription ${recurringId} not found`);
        const wanted = (op: Operation) =>
          (method === 'purchase' ? op.method === 'purchase' || op.method === 'recurrent' : op.method === 'refund') &&
          op.status === status;
        json(
          ctx,
          200,
          effective(order)
            .operations.filter(wanted)
            .map((op) => paymentRecord(op)),
        );
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)$/,
      name: 'order-transactions',
      handle: (ctx, m) => {
        const [posId, orderId] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
        requirePos(authenticate(ctx.req, ctx.body, true), posId);
        const order = findOrder(posId, orderId);
        if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
        json(
          ctx,
          200,
          order.operations.map((op) => paymentRecord(op, { listing: true })),
        );
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)\/([^/]+)$/,
      name: 'transaction',
      handle: (ctx, m) => {
        const [posId, orderId, operation] = [
          decodeURIComponent(m[1]!),
          decodeURIComponent(m[2]!),
          decodeURIComponent(m[3]!),
        ];
        requirePos(authenticate(ctx.req, ctx.body, true), posId);
        const order = findOrder(posId, orderId);
        if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
        const callback = ctx.url.searchParams.get('callback');
        if (callback !== null && callback !== 'true')
          throw HttpError(400, 'validation_error', 'callback: must be true');
        const transactionId = ctx.url.searchParams.get('transactionId');
        const op = pickOperation(order, operation, transactionId);
        if (!op) throw HttpError(404, 'transaction_not_found', `No ${operation} transaction in order ${orderId}`);
        if (callback === 'true') {
          stats.webhooks.resendRequests++;
          if (op.webhook === 'lost_for_good') stats.webhooks.resendsLostForGood++;
          else if (op.status !== 'init') sendInBackground(order, op);
        }
        json(ctx, 200, paymentRecord(op));
      },
    },
    {
      method: 'POST',
      pattern: /^\/reports\/streaming-report\/start$/,
      name: 'register-start',
      handle: (ctx) => {
        const creds = authenticate(ctx.req, ctx.body, false);
        const report = startReport(creds, parseBody(ctx));
        reports.set(report.id, report);
        stats.reportsStarted++;
        json(ctx, 200, { report_id: report.id, count: report.count });
      },
    },
    {
      method: 'GET',
      pattern: /^\/reports\/streaming-report\/fetch\/([^/]+)$/,
      name: 'register-fetch',
      handle: async (ctx, m) => {
        const creds = authenticate(ctx.req, ctx.body, false);
        const report = reports.get(decodeURIComponent(m[1]!));
        if (!report || report.posId !== creds.posId) throw HttpError(404, 'report_not_found', 'No such report');
        stats.reportFetches++;
        if (faults.reportNeverReady || report.polls < faults.reportNotReadyPolls) {
          report.polls++;
          stats.faults.notReady++;
          json(ctx, faults.notReadyStatus, { message: 'Report is not ready yet', code: 'report_not_ready' });
          return;
        }
        report.fetches++;
        const lateStatusChange = faults.registerChangesBetweenFetches && report.fetches >= 2;
        const projectName = `sandbox-${report.posId.slice(0, 8)}`;
        const rows = (function* () {
          for (const op of operationsIn(report.posId, report.from, report.to)) {
            if (!reportWants(report, op)) continue;
            for (const row of registerRows(op, {
              fields: report.fields,
              projectName,
              entityName: 'Sandbox Marketplace LLC',
              lateStatusChange,
            })) {
              stats.registerRowsServed++;
              yield row;
            }
          }
        })();
        await streamArray(ctx, rows);
      },
    },
  ];

  const reportWants = (report: Report, op: Operation) =>
    (!report.statuses || report.statuses.includes(op.status)) &&
    (!report.methods || report.methods.includes(op.method));

  const startReport = (creds: PosCredentials, body: unknown): Report => {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw HttpError(400, 'validation_error', 'A JSON object is required');
    const b = body as Record<string, unknown>;
    if (typeof b.project_id !== 'string' || !b.project_id)
      throw HttpError(400, 'validation_error', 'project_id: required');
    if (b.project_id !== creds.posId)
      throw HttpError(403, 'forbidden', 'project_id does not belong to these credentials');
    const instant = (name: string): number => {
      const v = b[name];
      if (typeof v !== 'string' || !ISO_WITH_OFFSET.test(v) || Number.isNaN(Date.parse(v)))
        throw HttpError(400, 'validation_error', `${name}: ISO 8601 timestamp with offset required`);
      return Date.parse(v);
    };
    const from = instant('start_date');
    const to = instant('end_date');
    if (to <= from) throw HttpError(400, 'validation_error', 'end_date must be after start_date');
    if (to - from > MAX_PERIOD_MS) throw HttpError(400, 'period_too_long', 'The report period must not exceed 31 days');
    const list = (name: string, allowed: readonly string[]): string[] | null => {
      const v = b[name];
      if (v === undefined || v === null) return null;
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !allowed.includes(x)))
        throw HttpError(400, 'validation_error', `${name}: array of ${allowed.join(', ')}`);
      return v as string[];
    };
    const statuses = list('statuses', STATUSES);
    const methods = list('methods', METHODS);
    const details = list('transaction_details', REGISTER_FIELDS);
    const fields = details && details.length ? (details as RegisterField[]) : DEFAULT_REGISTER_FIELDS;
    const partial: Omit<Report, 'count'> = {
      id: liveRng.uuid(),
      posId: creds.posId,
      from,
      to: to + endShift,
      statuses,
      methods,
      fields,
      polls: 0,
      fetches: 0,
    };
    let count = 0;
    for (const op of operationsIn(creds.posId, from, partial.to))
      if (reportWants(partial as Report, op)) count += registerRowCount(op);
    // Fault from the scenario's ground truth: reports covering these days announce one record too many.
    for (const day of scenario.countMismatchDays) {
      const noon = dayNoon(day, scenario.timezone);
      if (noon >= from && noon < partial.to) count++;
    }
    return { ...partial, count };
  };

  const createOrder = (ctx: Ctx, kind: 'split' | 'subscription') => {
    const creds = authenticate(ctx.req, ctx.body, true);
    const body = parseBody(ctx);
    const baseUrl = originOf(ctx.req);
    const result = createLiveOrder(
      body,
      {
        posId: creds.posId,
        subMerchants: scenario.subMerchants,
        rng: liveRng,
        now: now(),
        baseUrl,
        orderExists: (id) => live.has(id) || scenario.findOrder(id) !== undefined,
      },
      kind,
    );
    if (!result.ok) throw HttpError(result.status, result.code, result.message);
    const order = result.order;
    live.set(order.orderId, order);
    const op = order.operations[0]!;
    if (order.mode === 'hosted') {
      const checkoutId = liveRng.hex(24);
      checkouts.set(checkoutId, order.orderId);
      ctx.res.writeHead(303, { location: `${baseUrl}/api/v1/checkout/${checkoutId}/form`, 'content-length': '0' });
      ctx.res.end();
      return;
    }
    if (op.status !== 'init') sendInBackground(order, op);
    const request = body as Record<string, unknown>;
    json(ctx, 200, {
      ...paymentRecord(op),
      split: request.split ?? null,
      validation_url: request.validation_url ?? null,
    });
  };

  // -------------------------------------------------------------------------------------------------
  // Request loop with faults

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const applies = faults.appliesTo({ method, path: url.pathname });
    // Always draw the same numbers per request, so that the fault sequence depends on the seed only.
    const [uReset, u429, u5xx, uSlow, uTrunc] = [
      faultRng.next(),
      faultRng.next(),
      faultRng.next(),
      faultRng.next(),
      faultRng.next(),
    ];
    const ctx: Ctx = { req, res, url, body: body ?? '', truncate: applies && uTrunc < faults.truncateRate };
    try {
      if (body === undefined) throw HttpError(413, 'payload_too_large', 'Request body too large');
      if (applies && uSlow < faults.slowRate) {
        stats.faults.slow++;
        await new Promise((r) => setTimeout(r, faults.slowMs));
      }
      if (applies && uReset < faults.resetRate) {
        stats.faults.resets++;
        req.socket.destroy();
        return;
      }
      if (applies && u429 < faults.tooManyRequestsRate) {
        stats.faults.tooManyRequests++;
        throw HttpError(429, 'too_many_requests', 'Too many requests', faults.retryAfterSeconds);
      }
      if (applies && u5xx < faults.serverErrorRate) {
        stats.faults.serverErrors++;
        throw HttpError([500, 502, 503][Math.floor(u5xx * 1e6) % 3]!, 'internal_error', 'Internal server error');
      }
      for (const route of routes) {
        const m = route.pattern.exec(url.pathname);
        if (!m) continue;
        if (route.method !== method) throw HttpError(405, 'method_not_allowed', `${method} is not allowed here`);
        stats.byRoute[route.name] = (stats.byRoute[route.name] ?? 0) + 1;
        await route.handle(ctx, m);
        return;
      }
      throw HttpError(404, 'not_found', 'Not found');
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const err = isHttpFailure(e) ? e : HttpError(500, 'internal_error', (e as Error).message);
      const retryAfter = err.retryAfter;
      res.writeHead(err.status, {
        'content-type': 'application/json',
        ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
      });
      res.end(JSON.stringify({ message: err.message, args: { code: err.code } }));
    }
  };

  /** writes a JSON array from items in 64 KiB chunks, waiting for the socket to drain */
  const streamArray = async (ctx: Ctx, items: Iterable<string>) => {
    const { res } = ctx;
    res.writeHead(200, { 'content-type': 'application/json' });
    let buf = '[';
    let n = 0;
    const cutAt = ctx.truncate ? 1 : Infinity;
    for (const item of items) {
      buf += n === 0 ? item : `,${item}`;
      n++;
      if (n > cutAt) {
        // truncated JSON: cut inside the second record and end the response
        stats.faults.truncated++;
        res.end(buf.slice(0, buf.length - Math.ceil(item.length / 2)));
        return;
      }
      if (buf.length >= 65536) {
        if (res.destroyed) return;
        const flushed = res.write(buf);
        buf = '';
        if (!flushed) await drained(res);
      }
    }
    res.end(`${buf}]`);
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const reportUrl = `${baseUrl}/reports`;
  const originOf = (req: IncomingMessage) => `http://${req.headers.host ?? `127.0.0.1:${port}`}`;

  const projects: PspProject[] = scenario.credentials.map((c, k) => ({
    name: scenario.credentials.length === 1 ? 'sandbox' : `sandbox-${k + 1}`,
    posId: c.posId,
    baseUrl,
    reportUrl,
    apiKey: c.apiKey,
    apiSecret: c.apiSecret,
    endpointsKey: c.endpointsKey,
  }));

  return {
    baseUrl,
    reportUrl,
    port,
    scenario,
    projects,
    stats,
    get faults() {
      return faults;
    },
    setFaults(f) {
      faults = { ...faults, ...f };
    },
    async deliverWebhooks(to, dopts = {}) {
      target = toTarget(to);
      const t = target!;
      const range = dopts.range ? { from: +dopts.range.from, to: +dopts.range.to } : undefined;
      function* jobs(): Generator<DeliveryJob | { lost: true }> {
        for (const o of scenario.orders(range)) {
          const order = effective(o);
          for (const op of order.operations) {
            if (range && (op.at < range.from || op.at >= range.to)) continue;
            if (op.webhook === 'none') continue;
            if (op.webhook !== 'sent') {
              yield { lost: true };
              continue;
            }
            const kind = op.recurring && op.method === 'recurrent' ? 'recurring' : 'payment';
            const url = t(order.posId, { kind, orderId: order.orderId });
            if (url) yield { op, url, secret: credentialsOf(order.posId).apiSecret };
          }
        }
      }
      const out = await deliver(jobs(), `${scenario.seed}:${deliveries++}`, dopts);
      stats.webhooks.sent += out.attempted;
      stats.webhooks.delivered += out.delivered;
      stats.webhooks.failed += out.failed;
      return out;
    },
    async settled() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    async close() {
      await Promise.allSettled([...pending]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------------

function toTarget(t: WebhookTarget | string | undefined): WebhookTarget | undefined {
  if (t === undefined) return undefined;
  if (typeof t === 'function') return t;
  // a URL; "{posId}" in it is replaced by the project's id
  return (posId) => t.replace('{posId}', encodeURIComponent(posId));
}

/** Section 4.3/4.9: the operation of an order named by its method; for subscriptions, by transactionId or the latest. */
function pickOperation(order: Order, operation: string, transactionId: string | null): Operation | undefined {
  if (transactionId) return order.operations.find((op) => op.transactionId === transactionId);
  const sameMethod = (op: Operation) =>
    op.method === (operation as SandboxMethod) ||
    (order.recurringId !== null && operation === 'purchase' && op.method === 'recurrent');
  const matching = order.operations.filter(sameMethod);
  return matching[matching.length - 1];
}

function msParam(url: URL, name: string): number {
  const v = url.searchParams.get(name);
  if (v === null || !/^\d{1,16}$/.test(v))
    throw HttpError(400, 'validation_error', `${name}: Unix time in milliseconds required`);
  return Number(v);
}

function dayNoon(day: string, zone: string): number {
  return DateTime.fromISO(day, { zone }).set({ hour: 12 }).toMillis();
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
