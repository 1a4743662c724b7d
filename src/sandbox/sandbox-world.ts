import type { Faults } from './faults';
import { cancelOrder } from './live';
import type { Operation, Order, PosCredentials } from './model';
import type { Rng } from './random';
import type { RegisterField } from './render';
import type { Scenario } from './scenario';
import { postWebhook, signWebhook, type WebhookTarget } from './webhooks';

/**
 * What a running sandbox knows besides its scenario: orders made and cancelled over HTTP, checkouts, register
 * reports started, webhooks in flight, the fault knobs and the counters. Shared by the request handlers.
 */

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
    /**
     * The webhooks sent in the background (re-sends, live orders) that no 2xx answered: the stand-in PSP does not
     * deliver again (docs/sandbox.md), so for recon they never arrived.
     */
    notDelivered: Array<{ paymentId: string; method: string; transactionId: string; error: string }>;
  };
}

/** A register report started by `streaming-report/start`, served by its fetches. */
export interface Report {
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

export type SignedAuthCheck = (req: {
  method: string;
  url: string;
  body: string;
  apiKey: string;
  signature: string;
  credentials: PosCredentials;
}) => boolean;

export interface SandboxWorld {
  readonly scenario: Scenario;
  readonly now: () => number;
  faults: Faults;
  /** draws for orders, checkouts and reports made over HTTP */
  readonly liveRng: Rng;
  target: WebhookTarget | undefined;
  /** 1 when a query's end is inclusive: queries are served as [from, to) internally */
  readonly endShift: number;
  readonly verifySignedAuth: SignedAuthCheck | undefined;
  /** the port listened on, known once the server listens */
  port: number;
  readonly live: Map<string, Order>;
  /** checkout id → order id */
  readonly checkouts: Map<string, string>;
  /** scenario orders cancelled over HTTP, with the time of the cancellation */
  readonly cancelledAt: Map<string, number>;
  readonly reports: Map<string, Report>;
  readonly pending: Set<Promise<unknown>>;
  readonly stats: SandboxStats;
}

export function emptyStats(): SandboxStats {
  return {
    requests: 0,
    byRoute: {},
    unauthorized: 0,
    faults: { serverErrors: 0, tooManyRequests: 0, resets: 0, slow: 0, truncated: 0, notReady: 0 },
    reportsStarted: 0,
    reportFetches: 0,
    registerRowsServed: 0,
    periodRecordsServed: 0,
    cancellations: 0,
    webhooks: {
      sent: 0,
      delivered: 0,
      failed: 0,
      resendRequests: 0,
      resendsLostForGood: 0,
      withoutTarget: 0,
      notDelivered: [],
    },
  };
}

/** The order as it stands now: a scenario order cancelled over HTTP shows its cancellation. */
export function effective(world: SandboxWorld, order: Order): Order {
  const at = world.cancelledAt.get(order.orderId);
  if (at === undefined) return order;
  const c = cancelOrder(order, at);
  return c.ok ? c.order : order;
}

export function findOrder(world: SandboxWorld, posId: string, orderId: string): Order | undefined {
  const o = world.live.get(orderId) ?? world.scenario.findOrder(orderId);
  return o && o.posId === posId ? effective(world, o) : undefined;
}

/** every operation of a project with `at` in [from, to): the scenario's, then those made over HTTP */
export function* operationsIn(world: SandboxWorld, posId: string, from: number, to: number): Generator<Operation> {
  for (const o of world.scenario.orders({ from, to })) {
    if (o.posId !== posId) continue;
    for (const op of effective(world, o).operations) if (op.at >= from && op.at < to) yield op;
  }
  for (const o of world.live.values()) {
    if (o.posId !== posId) continue;
    for (const op of o.operations) if (op.at >= from && op.at < to) yield op;
  }
}

export const credentialsOf = (world: SandboxWorld, posId: string): PosCredentials =>
  world.scenario.credentials.find((c) => c.posId === posId)!;

/** sends one operation's webhook in the background (tracked by settled()) */
export function sendInBackground(world: SandboxWorld, order: Order, op: Operation): void {
  const { stats, pending } = world;
  const kind = op.recurring && op.method === 'recurrent' ? 'recurring' : 'payment';
  const url =
    order.index < 0
      ? kind === 'recurring'
        ? (order.notificationUrl ?? order.serverUrl)
        : order.serverUrl
      : world.target?.(order.posId, { kind, orderId: order.orderId });
  if (!url) {
    stats.webhooks.withoutTarget++;
    return;
  }
  const signed = signWebhook(op, credentialsOf(world, order.posId).apiSecret);
  stats.webhooks.sent++;
  const p = postWebhook(url, signed.form, 10_000).then((out) => {
    if (out.ok) stats.webhooks.delivered++;
    else {
      stats.webhooks.failed++;
      const { paymentId, method, transactionId } = op;
      stats.webhooks.notDelivered.push({ paymentId, method, transactionId, error: out.error });
    }
  });
  pending.add(p);
  void p.finally(() => pending.delete(p));
}
