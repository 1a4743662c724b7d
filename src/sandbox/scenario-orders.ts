import type {
  CardData,
  Operation,
  Order,
  OrderKind,
  ReceiverPart,
  SandboxMethod,
  SandboxStatus,
  SubMerchant,
} from './model';
import { STATUS_TEXT } from './model';
import { chargeParts, plainParts, proportionalParts, splitShares, sum } from './receiver-parts';
import { createStreamRng, type Rng } from './random';

/**
 * One order of the scenario and its operations, drawn from the order's own seeded generator: order i is a
 * pure function of (seed, i). Every draw happens in one fixed sequence, so the same seed gives the same orders.
 */

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;

const FIRST_NAMES = ['Olena', 'Taras', 'Iryna', 'Andrii', 'Marta', 'Dmytro', 'Sofiia', 'Ostap', 'Anna', 'Bohdan'];
const LAST_NAMES = ['Kovalenko', 'Shevchenko', 'Bondarenko', 'Tkachenko', 'Melnyk', 'Kravets', 'Boyko', 'Hnatiuk'];

export interface BaseContext {
  readonly seed: string;
  readonly tag: string;
  readonly n: number;
  readonly from: number;
  readonly to: number;
  readonly span: number;
  readonly posIds: readonly string[];
  readonly listed: readonly SubMerchant[];
  readonly mix: Record<OrderKind, number>;
  readonly currencies: Readonly<Record<string, number>>;
  readonly currencyList: readonly string[];
}

/** What every operation of one order shares, and the list its operations are written to. */
interface OrderDraft {
  readonly r: Rng;
  readonly to: number;
  readonly posId: string;
  readonly orderId: string;
  readonly mode: 'direct' | 'hosted';
  readonly currency: string;
  readonly own: boolean;
  readonly shares: readonly bigint[];
  readonly sms: readonly SubMerchant[];
  readonly card: CardData;
  readonly customer: Operation['customer'];
  readonly description: string;
  readonly payload: string | null;
  readonly paymentId: string;
  readonly ops: Operation[];
}

interface OperationSpec {
  paymentId: string;
  method: SandboxMethod;
  status: SandboxStatus;
  code: { code: string; text: string };
  at: number;
  amount: bigint;
  customerFee?: bigint;
  receivers: ReceiverPart[];
  ownFee?: { fixed: bigint; percent: bigint };
  secondary: boolean;
  recurring?: Operation['recurring'];
  webhook?: Operation['webhook'];
}

export function baseOrder(ctx: BaseContext, index: number): Order {
  const r = createStreamRng(ctx.seed, 'order', index);
  const posId = ctx.posIds[index % ctx.posIds.length]!;
  const orderId = `SBX-${ctx.tag}-${String(index).padStart(6, '0')}`;
  const kind = r.weighted(ctx.mix);
  const mode: 'direct' | 'hosted' =
    kind === 'hosted_purchase' || kind === 'hosted_abandoned' || kind === 'subscription' ? 'hosted' : 'direct';
  const currency = r.weighted(ctx.currencies);
  const t0 = ctx.from + Math.floor(((index + r.next()) * ctx.span) / ctx.n);
  const own = kind === 'own_purchase';
  const receiverCount = own ? 0 : r.int(1, 4);
  const sms: SubMerchant[] = [];
  while (sms.length < receiverCount) {
    const sm = r.pick(ctx.listed);
    if (!sms.includes(sm) || ctx.listed.length < receiverCount) sms.push(sm);
  }
  const total = r.bigint(500n, own ? 150000n : 500000n);
  const shares = own ? [] : splitShares(total, receiverCount, r);
  const withCustomerFee = r.chance(0.15);
  const customerFee = withCustomerFee ? 1n + (total * 150n) / 10000n : 0n;
  const card = drawCard(r, t0);
  const customer = {
    id: `cust-${r.hex(8)}`,
    fname: r.pick(FIRST_NAMES),
    lname: r.pick(LAST_NAMES),
    email: `buyer.${r.hex(6)}@example.test`,
    phone: `+38067${r.digits(7)}`,
  };
  const description = `Marketplace order ${orderId}: ${receiverCount || 1} seller(s)`;
  const payload = r.chance(0.3) ? JSON.stringify({ cart: r.hex(10) }) : null;
  const d: OrderDraft = {
    r,
    to: ctx.to,
    posId,
    orderId,
    mode,
    currency,
    own,
    shares,
    sms,
    card,
    customer,
    description,
    payload,
    paymentId: r.uuid(),
    ops: [],
  };
  const recurringId = writeOperations(d, kind, t0, total, customerFee);
  return {
    index,
    posId,
    orderId,
    kind,
    mode,
    recurringId,
    serverUrl: null,
    notificationUrl: null,
    operations: d.ops,
    injection: null,
  };
}

function drawCard(r: Rng, t0: number): CardData {
  const bin = r.pick(['444111', '535522', '411111', '557799']);
  const payway = r.weighted({ card: 70, apple_pay: 15, google_pay: 15 });
  return {
    mask: `${bin}******${r.digits(4)}`,
    token: r.uuid(),
    tokenExpiration: new Date(t0 + 3 * 365 * DAY).toISOString().slice(0, 19),
    payway,
    paymentSystem: bin.startsWith('4') ? 'visa' : 'mastercard',
    tokenizationKind: payway === 'card' ? null : payway,
  };
}

/** The order's operations by its kind, written to `d.ops`; returns the subscription's id, if any. */
function writeOperations(d: OrderDraft, kind: OrderKind, t0: number, total: bigint, cf: bigint): string | null {
  const { shares, sms, paymentId } = d;
  const unsettled = (status: SandboxStatus, code: { code: string; text: string }) =>
    d.ops.push(
      operation(d, {
        paymentId,
        method: 'purchase',
        status,
        code,
        at: t0,
        amount: total,
        receivers: plainParts(shares, sms),
        secondary: false,
      }),
    );
  switch (kind) {
    case 'split_purchase':
    case 'hosted_purchase':
    case 'own_purchase':
      d.ops.push(
        operation(d, {
          paymentId,
          method: 'purchase',
          status: 'success',
          code: STATUS_TEXT.success,
          at: t0,
          amount: total,
          customerFee: cf,
          receivers: d.own ? [] : chargeParts(shares, sms),
          ownFee: d.own ? ownFee(total) : undefined,
          secondary: false,
        }),
      );
      refundsAndDisputes(d, t0, total);
      return null;
    case 'split_auth_capture':
    case 'split_auth_void':
      authorization(d, kind, t0, total);
      return null;
    case 'hosted_abandoned':
      unsettled('init', STATUS_TEXT.init);
      return null;
    case 'declined':
      unsettled('failure', STATUS_TEXT.declined);
      return null;
    case 'pending_3ds':
      unsettled('pending', STATUS_TEXT.pending3ds);
      return null;
    case 'subscription':
      return subscription(d, t0, total, cf);
  }
}

const ownFee = (amount: bigint) => ({ fixed: 30n, percent: (amount * 250n) / 10000n });

/** An authorization, then its capture (with refunds and disputes after it) or its void. */
function authorization(d: OrderDraft, kind: 'split_auth_capture' | 'split_auth_void', t0: number, total: bigint) {
  const { r, shares, sms, paymentId } = d;
  const success = { paymentId, status: 'success' as const, code: STATUS_TEXT.success, amount: total };
  d.ops.push(
    operation(d, { ...success, method: 'auth', at: t0, receivers: plainParts(shares, sms), secondary: false }),
  );
  const t1 = t0 + r.int(10 * 60_000, 48 * HOUR);
  if (t1 >= d.to) return;
  if (kind === 'split_auth_void') {
    d.ops.push(
      operation(d, { ...success, method: 'void', at: t1, receivers: plainParts(shares, sms), secondary: true }),
    );
  } else {
    d.ops.push(
      operation(d, { ...success, method: 'capture', at: t1, receivers: chargeParts(shares, sms), secondary: true }),
    );
    refundsAndDisputes(d, t1, total);
  }
}

/** The first purchase of a subscription and up to four recurrent charges, each a payment of its own. */
function subscription(d: OrderDraft, t0: number, total: bigint, cf: bigint): string {
  const { r, shares, sms } = d;
  const recurringId = r.uuid();
  const recurring = { id: recurringId, status: 'active' as const };
  d.ops.push(
    operation(d, {
      paymentId: d.paymentId,
      method: 'purchase',
      status: 'success',
      code: STATUS_TEXT.success,
      at: t0,
      amount: total,
      customerFee: cf,
      receivers: chargeParts(shares, sms),
      secondary: false,
      recurring,
    }),
  );
  const interval = r.pick([DAY, 2 * DAY, 3 * DAY, 7 * DAY]);
  const charges = r.int(1, 4);
  for (let k = 1; k <= charges; k++) {
    const t = t0 + k * interval;
    if (t - t0 > 20 * DAY || t >= d.to) break;
    const failed = r.chance(0.1);
    d.ops.push(
      operation(d, {
        paymentId: r.uuid(),
        method: 'recurrent',
        status: failed ? 'failure' : 'success',
        code: failed ? STATUS_TEXT.declined : STATUS_TEXT.success,
        at: t,
        amount: total,
        customerFee: failed ? 0n : cf,
        receivers: failed ? plainParts(shares, sms) : chargeParts(shares, sms),
        secondary: false,
        recurring,
      }),
    );
  }
  return recurringId;
}

/** Refunds (full, or one to three partial ones) or a dispute after a settled operation at time `at`. */
function refundsAndDisputes(d: OrderDraft, at: number, amount: bigint): void {
  const { r, own, shares, sms, paymentId } = d;
  if (r.chance(0.18)) {
    const full = r.chance(0.4);
    let left = amount;
    let t = at;
    const count = full ? 1 : r.int(1, 3);
    for (let k = 0; k < count && left >= 100n; k++) {
      t += r.int(HOUR, 5 * DAY);
      if (t >= d.to) break;
      const refund = full ? left : clampBig(100n, left, (amount * BigInt(r.int(5, 30))) / 100n);
      left -= refund;
      const receivers = own ? [] : proportionalParts(refund, shares, sms, (sm) => sm.refundFee);
      d.ops.push(
        operation(d, {
          paymentId,
          method: 'refund',
          status: 'success',
          code: STATUS_TEXT.success,
          at: t,
          amount: refund,
          receivers,
          secondary: true,
        }),
      );
    }
  } else if (r.chance(0.04)) {
    const t = at + r.int(3 * DAY, 20 * DAY);
    if (t < d.to) {
      const receivers = own ? [] : proportionalParts(amount, shares, sms, () => 500n);
      d.ops.push(
        operation(d, {
          paymentId,
          method: 'dispute',
          status: 'success',
          code: STATUS_TEXT.success,
          at: t,
          amount,
          receivers,
          ownFee: own ? { fixed: 500n, percent: 0n } : undefined,
          secondary: true,
        }),
      );
    }
  }
}

function operation(d: OrderDraft, o: OperationSpec): Operation {
  const { r } = d;
  const fixedFee = o.ownFee ? o.ownFee.fixed : sum(o.receivers.map((x) => x.fixedFee));
  const percentFee = o.ownFee ? o.ownFee.percent : sum(o.receivers.map((x) => x.percentFee));
  const final = o.status === 'success' || o.status === 'failure';
  return {
    posId: d.posId,
    orderId: d.orderId,
    paymentId: o.paymentId,
    transactionId: r.digits(12),
    operationId: o.secondary ? r.uuid() : null,
    mode: d.mode,
    method: o.method,
    status: o.status,
    statusCode: o.code.code,
    statusDescription: o.code.text,
    currency: d.currency,
    originalAmount: o.amount,
    customerFee: o.customerFee ?? 0n,
    merchantFee: fixedFee + percentFee,
    fixedFee,
    percentFee,
    receivers: o.receivers,
    at: o.at,
    processedAt: final ? o.at + r.int(200, 5000) : o.at,
    blankPeriodDateTime: !final && r.chance(0.5),
    card: d.card,
    authCode: o.status === 'success' ? r.digits(6) : null,
    rrnCode: final ? r.digits(12) : null,
    description: d.description,
    payload: d.payload,
    customer: d.customer,
    recurring: o.recurring ?? null,
    userActionUrl: o.status === 'pending' ? `https://sandbox.psp.invalid/3ds/${r.hex(16)}` : null,
    distortion: null,
    webhook: o.webhook ?? (o.status === 'init' ? 'none' : 'sent'),
  };
}

function clampBig(min: bigint, max: bigint, v: bigint): bigint {
  return v < min ? min : v > max ? max : v;
}
