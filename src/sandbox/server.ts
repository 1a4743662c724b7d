import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PspProject } from '../config/env';
import { DEFAULT_FAULTS, type Faults } from './faults';
import { answerFailure, HttpError, readBody, type Exchange, type SandboxRoute } from './http-answers';
import { PAYMENT_ROUTES } from './payment-routes';
import { createRng, hashSeed, type Rng } from './random';
import { REGISTER_ROUTES } from './register-reports';
import {
  credentialsOf,
  effective,
  emptyStats,
  type SandboxStats,
  type SandboxWorld,
  type SignedAuthCheck,
} from './sandbox-world';
import { generateScenario, type Scenario, type ScenarioOptions } from './scenario';
import { deliver, type DeliveryJob, type DeliveryOptions, type DeliveryStats, type WebhookTarget } from './webhooks';

/**
 * The sandbox PSP: a real HTTP server on 127.0.0.1 with the PSP's paths (section 4), its
 * authentication (section 5) and rules, serving a deterministic scenario, with fault knobs.
 * Main API under {baseUrl}/api/v1/..., register report under {reportUrl}/streaming-report/...
 */

export { DEFAULT_FAULTS, type Faults, type SandboxStats };

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
  /**
   * How the end of a register or period query is read (the PSP does not say). 'inclusive' (default, as
   * src/psp/client.ts assumes: it sends the window's end minus 1 ms) serves [start, end]; 'exclusive' serves [start, end).
   */
  readonly periodEnd?: 'inclusive' | 'exclusive';
  /** accepts the signed `PAY-HMAC-SHA1 key:signature` form; without it that form is refused (its algorithm is not published) */
  readonly verifySignedAuth?: SignedAuthCheck;
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

const ROUTES: readonly SandboxRoute[] = [...PAYMENT_ROUTES, ...REGISTER_ROUTES];

export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const scenario = 'order' in opts.scenario ? opts.scenario : generateScenario(opts.scenario);
  const world = newWorld(scenario, opts);
  const faultRng = createRng(hashSeed(scenario.seed, 'faults'));
  let deliveries = 0;

  const server: Server = createServer((req, res) => {
    void handle(world, faultRng, req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  world.port = port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const reportUrl = `${baseUrl}/reports`;

  const projects = sandboxProjects(scenario, baseUrl, reportUrl);

  return {
    baseUrl,
    reportUrl,
    port,
    scenario,
    projects,
    stats: world.stats,
    get faults() {
      return world.faults;
    },
    setFaults(f) {
      world.faults = { ...world.faults, ...f };
    },
    async deliverWebhooks(to, dopts = {}) {
      world.target = toTarget(to);
      const out = await deliver(
        scenarioWebhooks(world, world.target!, dopts),
        `${scenario.seed}:${deliveries++}`,
        dopts,
      );
      world.stats.webhooks.sent += out.attempted;
      world.stats.webhooks.delivered += out.delivered;
      world.stats.webhooks.failed += out.failed;
      return out;
    },
    async settled() {
      while (world.pending.size) await Promise.allSettled([...world.pending]);
    },
    async close() {
      await Promise.allSettled([...world.pending]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The sandbox's state: the scenario, its clock and faults, and what requests created (live orders, reports). */
function newWorld(scenario: Scenario, opts: SandboxOptions): SandboxWorld {
  return {
    scenario,
    now: opts.now ?? (() => Date.now()),
    faults: { ...DEFAULT_FAULTS, ...(opts.faults ?? {}) },
    liveRng: createRng(hashSeed(scenario.seed, 'live')),
    target: toTarget(opts.webhookTarget),
    // queries are served as [from, to) internally; an inclusive end covers its last millisecond too
    endShift: (opts.periodEnd ?? 'inclusive') === 'inclusive' ? 1 : 0,
    verifySignedAuth: opts.verifySignedAuth,
    port: 0,
    live: new Map(),
    checkouts: new Map(),
    cancelledAt: new Map(),
    reports: new Map(),
    pending: new Set(),
    stats: emptyStats(),
  };
}

/** One project per set of credentials, ready for createPspClient. */
function sandboxProjects(scenario: Scenario, baseUrl: string, reportUrl: string): PspProject[] {
  return scenario.credentials.map((c, k) => ({
    name: scenario.credentials.length === 1 ? 'sandbox' : `sandbox-${k + 1}`,
    posId: c.posId,
    baseUrl,
    reportUrl,
    apiKey: c.apiKey,
    apiSecret: c.apiSecret,
    endpointsKey: c.endpointsKey,
  }));
}

/** The request loop: the faults drawn for the request, then its route. */
async function handle(world: SandboxWorld, faultRng: Rng, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { stats } = world;
  stats.requests++;
  const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  const body = await readBody(req);
  const method = req.method ?? 'GET';
  const applies = world.faults.appliesTo({ method, path: url.pathname });
  // Always draw the same numbers per request, so that the fault sequence depends on the seed only.
  const [uReset, u429, u5xx, uSlow, uTrunc] = [
    faultRng.next(),
    faultRng.next(),
    faultRng.next(),
    faultRng.next(),
    faultRng.next(),
  ];
  const ctx: Exchange = {
    req,
    res,
    url,
    body: body ?? '',
    truncate: applies && uTrunc < world.faults.truncateRate,
    stats,
  };
  try {
    if (body === undefined) throw HttpError(413, 'payload_too_large', 'Request body too large');
    if (applies && uSlow < world.faults.slowRate) {
      stats.faults.slow++;
      await new Promise((r) => setTimeout(r, world.faults.slowMs));
    }
    if (applies && uReset < world.faults.resetRate) {
      stats.faults.resets++;
      req.socket.destroy();
      return;
    }
    if (applies && u429 < world.faults.tooManyRequestsRate) {
      stats.faults.tooManyRequests++;
      throw HttpError(429, 'too_many_requests', 'Too many requests', world.faults.retryAfterSeconds);
    }
    if (applies && u5xx < world.faults.serverErrorRate) {
      stats.faults.serverErrors++;
      throw HttpError([500, 502, 503][Math.floor(u5xx * 1e6) % 3]!, 'internal_error', 'Internal server error');
    }
    for (const route of ROUTES) {
      const m = route.pattern.exec(url.pathname);
      if (!m) continue;
      if (route.method !== method) throw HttpError(405, 'method_not_allowed', `${method} is not allowed here`);
      stats.byRoute[route.name] = (stats.byRoute[route.name] ?? 0) + 1;
      await route.handle(world, ctx, m);
      return;
    }
    throw HttpError(404, 'not_found', 'Not found');
  } catch (e) {
    answerFailure(res, e);
  }
}

/** The scenario's webhooks in a range, those the scenario loses counted as lost. */
function* scenarioWebhooks(
  world: SandboxWorld,
  target: WebhookTarget,
  dopts: DeliveryOptions,
): Generator<DeliveryJob | { lost: true }> {
  const range = dopts.range ? { from: +dopts.range.from, to: +dopts.range.to } : undefined;
  for (const o of world.scenario.orders(range)) {
    const order = effective(world, o);
    for (const op of order.operations) {
      if (range && (op.at < range.from || op.at >= range.to)) continue;
      if (op.webhook === 'none') continue;
      if (op.webhook !== 'sent') {
        yield { lost: true };
        continue;
      }
      const kind = op.recurring && op.method === 'recurrent' ? 'recurring' : 'payment';
      const url = target(order.posId, { kind, orderId: order.orderId });
      if (url) yield { op, url, secret: credentialsOf(world, order.posId).apiSecret };
    }
  }
}

function toTarget(t: WebhookTarget | string | undefined): WebhookTarget | undefined {
  if (t === undefined) return undefined;
  if (typeof t === 'function') return t;
  // a URL; "{posId}" in it is replaced by the project's id
  return (posId) => t.replace('{posId}', encodeURIComponent(posId));
}
