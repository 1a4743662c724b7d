import { authenticate, requirePos } from './authentication';
import {
  answerJson,
  escapeHtml,
  HttpError,
  msParam,
  parseBody,
  streamArray,
  type Exchange,
  type SandboxRoute,
} from './http-answers';
import { cancelOrder, completeCheckout, createLiveOrder } from './live';
import type { Operation, Order, SandboxMethod, SandboxStatus } from './model';
import { STATUSES } from './register-reports';
import { paymentRecord, periodRecord } from './render';
import { effective, findOrder, operationsIn, sendInBackground, type SandboxWorld } from './sandbox-world';

/** The PSP's main API (section 4): purchases, the hosted checkout, cancellation and the transaction queries. */

const pathPart = (m: RegExpExecArray, k: number) => decodeURIComponent(m[k]!);

export const PAYMENT_ROUTES: readonly SandboxRoute[] = [
  {
    method: 'POST',
    pattern: /^\/api\/v1\/split\/purchase$/,
    name: 'split-purchase',
    handle: (world, ctx) => createOrder(world, ctx, 'split'),
  },
  {
    method: 'POST',
    pattern: /^\/api\/v1\/payment$/,
    name: 'subscription-purchase',
    handle: (world, ctx) => createOrder(world, ctx, 'subscription'),
  },
  {
    method: 'GET',
    pattern: /^\/api\/v1\/checkout\/([^/]+)\/form$/,
    name: 'checkout-form',
    handle: (world, ctx, m) => {
      const orderId = world.checkouts.get(m[1]!);
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
    handle: (world, ctx, m) => {
      const orderId = world.checkouts.get(m[1]!);
      const order = orderId ? world.live.get(orderId) : undefined;
      if (!order) throw HttpError(404, 'not_found', 'No such checkout');
      const outcome = ctx.url.searchParams.get('outcome') === 'failure' ? 'failure' : 'success';
      const paid = completeCheckout(order, outcome, {
        now: world.now(),
        rng: world.liveRng,
        subMerchants: world.scenario.subMerchants,
      });
      world.live.set(order.orderId, paid);
      if (paid !== order) sendInBackground(world, paid, paid.operations[0]!);
      answerJson(ctx, 200, paymentRecord(paid.operations[0]!));
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/v1\/pos\/([^/]+)\/order\/([^/]+)\/cancel$/,
    name: 'cancel',
    handle: (world, ctx, m) => cancel(world, ctx, pathPart(m, 1), pathPart(m, 2)),
  },
  {
    method: 'GET',
    pattern: /^\/api\/v1\/pos\/([^/]+)\/transactions$/,
    name: 'period-transactions',
    handle: async (world, ctx, m) => {
      const posId = pathPart(m, 1);
      requirePos(authenticate(world, ctx.req, ctx.body, true), posId);
      const from = msParam(ctx.url, 'startDate');
      const to = msParam(ctx.url, 'enddate') + world.endShift;
      if (to <= from) throw HttpError(400, 'validation_error', 'enddate must be after startDate');
      const records = (function* () {
        for (const op of operationsIn(world, posId, from, to)) {
          const rec = periodRecord(op);
          if (rec !== null) {
            world.stats.periodRecordsServed++;
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
    handle: (world, ctx, m) => subscriptionTransactions(world, ctx, pathPart(m, 1), pathPart(m, 2)),
  },
  {
    method: 'GET',
    pattern: /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)$/,
    name: 'order-transactions',
    handle: (world, ctx, m) => {
      const [posId, orderId] = [pathPart(m, 1), pathPart(m, 2)];
      requirePos(authenticate(world, ctx.req, ctx.body, true), posId);
      const order = findOrder(world, posId, orderId);
      if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
      answerJson(
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
    handle: (world, ctx, m) => transaction(world, ctx, pathPart(m, 1), pathPart(m, 2), pathPart(m, 3)),
  },
];

function createOrder(world: SandboxWorld, ctx: Exchange, kind: 'split' | 'subscription'): void {
  const { live, scenario, liveRng } = world;
  const creds = authenticate(world, ctx.req, ctx.body, true);
  const body = parseBody(ctx);
  const baseUrl = `http://${ctx.req.headers.host ?? `127.0.0.1:${world.port}`}`;
  const result = createLiveOrder(
    body,
    {
      posId: creds.posId,
      subMerchants: scenario.subMerchants,
      rng: liveRng,
      now: world.now(),
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
    world.checkouts.set(checkoutId, order.orderId);
    ctx.res.writeHead(303, { location: `${baseUrl}/api/v1/checkout/${checkoutId}/form`, 'content-length': '0' });
    ctx.res.end();
    return;
  }
  if (op.status !== 'init') sendInBackground(world, order, op);
  const request = body as Record<string, unknown>;
  answerJson(ctx, 200, {
    ...paymentRecord(op),
    split: request.split ?? null,
    validation_url: request.validation_url ?? null,
  });
}

function cancel(world: SandboxWorld, ctx: Exchange, posId: string, orderId: string): void {
  requirePos(authenticate(world, ctx.req, ctx.body, true), posId);
  const order = findOrder(world, posId, orderId);
  if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
  const at = world.now();
  const c = cancelOrder(order, at);
  if (!c.ok)
    throw HttpError(400, 'cancel_not_allowed', 'Only a hosted purchase or auth in status init can be cancelled');
  if (world.live.has(orderId)) world.live.set(orderId, c.order);
  else world.cancelledAt.set(orderId, at);
  world.stats.cancellations++;
  sendInBackground(world, c.order, c.order.operations[0]!);
  answerJson(ctx, 200, [paymentRecord(c.order.operations[0]!, { cancelled: true })]);
}

function subscriptionTransactions(world: SandboxWorld, ctx: Exchange, posId: string, recurringId: string): void {
  requirePos(authenticate(world, ctx.req, ctx.body, true), posId);
  const method = ctx.url.searchParams.get('method');
  const status = ctx.url.searchParams.get('status');
  if (method !== 'purchase' && method !== 'refund')
    throw HttpError(400, 'validation_error', 'method: purchase or refund is required');
  if (!status || !STATUSES.includes(status as SandboxStatus))
    throw HttpError(400, 'validation_error', 'status: a transaction status is required');
  const order =
    [...world.live.values()].find((o) => o.recurringId === recurringId) ?? world.scenario.findRecurring(recurringId);
  if (!order || order.posId !== posId) throw HttpError(404, 'not_found', `Subscription ${recurringId} not found`);
  const wanted = (op: Operation) =>
    (method === 'purchase' ? op.method === 'purchase' || op.method === 'recurrent' : op.method === 'refund') &&
    op.status === status;
  answerJson(
    ctx,
    200,
    effective(world, order)
      .operations.filter(wanted)
      .map((op) => paymentRecord(op)),
  );
}

/** One transaction of an order; with `callback=true`, its webhook is sent again. */
function transaction(world: SandboxWorld, ctx: Exchange, posId: string, orderId: string, operation: string): void {
  requirePos(authenticate(world, ctx.req, ctx.body, true), posId);
  const order = findOrder(world, posId, orderId);
  if (!order) throw HttpError(404, 'order_not_found', `Order ${orderId} not found`);
  const callback = ctx.url.searchParams.get('callback');
  if (callback !== null && callback !== 'true') throw HttpError(400, 'validation_error', 'callback: must be true');
  const transactionId = ctx.url.searchParams.get('transactionId');
  const op = pickOperation(order, operation, transactionId);
  if (!op) throw HttpError(404, 'transaction_not_found', `No ${operation} transaction in order ${orderId}`);
  if (callback === 'true') {
    world.stats.webhooks.resendRequests++;
    if (op.webhook === 'lost_for_good') world.stats.webhooks.resendsLostForGood++;
    else if (op.status !== 'init') sendInBackground(world, order, op);
  }
  answerJson(ctx, 200, paymentRecord(op));
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
