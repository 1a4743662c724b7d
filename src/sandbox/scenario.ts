import { DateTime } from 'luxon';
import { GROUND_TRUTH_TYPES } from './model';
import { createRng, hashSeed, type Rng } from './random';
import type {
  CardData,
  Distortion,
  GroundTruthEntry,
  InjectionType,
  Operation,
  Order,
  OrderKind,
  PosCredentials,
  ReceiverPart,
  SandboxMethod,
  SandboxStatus,
  SubMerchant,
} from './model';

/**
 * Deterministic scenario generator. Order i is a pure function of (seed, i), so a scenario of any size
 * is generated lazily: nothing is kept in memory but the sub-merchants and the injection plan, and any
 * order, time window or the whole month can be iterated again at will with identical results.
 */

export interface ScenarioOptions {
  readonly seed: string | number;
  /** project ids; default: one generated from the seed */
  readonly posIds?: readonly string[];
  /** number of generated projects when posIds is not given (default 1) */
  readonly posCount?: number;
  /** YYYY-MM in `timezone`; default 2025-01 (the generator never reads the clock) */
  readonly month?: string;
  /** [from, to): local days YYYY-MM-DD in `timezone` or ISO instants; overrides month */
  readonly from?: string;
  readonly to?: string;
  /** business time zone of the month and days (default UTC) */
  readonly timezone?: string;
  /** number of orders (default 300); a split operation gives one register row per receiver */
  readonly payments?: number;
  /** listed sub-merchants (default 12) */
  readonly subMerchants?: number;
  /** how many of each injection; default per type max(1, round(payments / 200)); 'none' for a clean scenario */
  readonly injections?: Partial<Record<InjectionType, number>> | 'none';
  /** weights of the order kinds */
  readonly mix?: Partial<Record<OrderKind, number>>;
  /** currencies with weights; the test currency XTS is among the defaults */
  readonly currencies?: Readonly<Record<string, number>>;
}

export interface Scenario {
  readonly seed: string;
  readonly timezone: string;
  readonly from: Date;
  readonly to: Date;
  readonly posIds: readonly string[];
  readonly credentials: readonly PosCredentials[];
  /** listed and unlisted (ghost) sub-merchants */
  readonly subMerchants: readonly SubMerchant[];
  readonly orderCount: number;
  /** local days (YYYY-MM-DD) whose register reports announce one record more than they hold */
  readonly countMismatchDays: readonly string[];
  /** injections asked for but not placed (too few eligible orders), by type */
  readonly injectionShortfall: Readonly<Partial<Record<InjectionType, number>>>;
  /** the injected disagreements, computed on first access (one pass over the orders) */
  readonly groundTruth: readonly GroundTruthEntry[];
  order(index: number): Order;
  /** orders having at least one operation in [from, to) (all orders when no range) */
  orders(range?: { from: number; to: number }): Generator<Order>;
  /** operations with `at` in [from, to), order by order */
  operations(range?: { from: number; to: number }): Generator<Operation>;
  findOrder(orderId: string): Order | undefined;
  findRecurring(recurringId: string): Order | undefined;
  /** the sub-merchant directory for recon (`sub_merchant_id,name,reserve_hold_days`), unlisted ones left out */
  subMerchantCsv(): string;
}

export { GROUND_TRUTH_TYPES };

export const INJECTION_TYPES: readonly InjectionType[] = [...GROUND_TRUTH_TYPES, 'webhook_lost_resendable'];

const DEFAULT_MIX: Record<OrderKind, number> = {
  split_purchase: 45,
  split_auth_capture: 8,
  split_auth_void: 3,
  hosted_purchase: 6,
  hosted_abandoned: 3,
  declined: 6,
  pending_3ds: 4,
  subscription: 6,
  own_purchase: 8,
};

const DEFAULT_CURRENCIES: Record<string, number> = { UAH: 50, EUR: 20, USD: 20, XTS: 10 };

/** Secondary operations happen at most this long after the order's first one (bounds window queries). */
export const MAX_LAG_MS = 21 * 24 * 3600_000;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

export const STATUS_TEXT = {
  success: { code: '1000', text: 'Transaction is successful' },
  pending3ds: { code: '2122', text: '3-D Secure verification required to finish' },
  cancelled: { code: '6007', text: 'Payment cancelled' },
  // Not published by the PSP: invented for the sandbox (docs/sandbox.md).
  declined: { code: '2005', text: 'Declined by issuer' },
  init: { code: '2120', text: 'Waiting for the customer' },
} as const;

const FIRST_NAMES = ['Olena', 'Taras', 'Iryna', 'Andrii', 'Marta', 'Dmytro', 'Sofiia', 'Ostap', 'Anna', 'Bohdan'];
const LAST_NAMES = ['Kovalenko', 'Shevchenko', 'Bondarenko', 'Tkachenko', 'Melnyk', 'Kravets', 'Boyko', 'Hnatiuk'];
const SHOP_WORDS = [
  'Coffee',
  'Books',
  'Ceramics',
  'Bikes',
  'Garden',
  'Tea',
  'Leather',
  'Toys',
  'Honey',
  'Prints',
  'Linen',
  'Optics',
];
const SHOP_OWNERS = [
  'Lviv',
  'Kyiv',
  'Odesa',
  'Carpathian',
  'Dnipro',
  'Poltava',
  'Harbor',
  'Northwind',
  'Maple',
  'Sunflower',
];

export function generateScenario(opts: ScenarioOptions): Scenario {
  const seed = String(opts.seed);
  const timezone = opts.timezone ?? 'UTC';
  const { from, to } = resolveRange(opts, timezone);
  const n = opts.payments ?? 300;
  if (!Number.isInteger(n) || n < 1) throw new RangeError('payments must be a positive integer');
  const mix = { ...DEFAULT_MIX, ...(opts.mix ?? {}) };
  const currencies = opts.currencies ?? DEFAULT_CURRENCIES;
  const currencyList = Object.keys(currencies).sort();
  const tag = hashSeed(seed, 'tag').toString(16).padStart(8, '0').slice(0, 6).toUpperCase();

  const posIds = opts.posIds?.length
    ? [...opts.posIds]
    : Array.from({ length: opts.posCount ?? 1 }, (_, k) => createRng(hashSeed(seed, 'pos', k)).uuid());
  const credentials = posIds.map((posId, k) => {
    const r = createRng(hashSeed(seed, 'credentials', k));
    return {
      posId,
      apiKey: `pk_sandbox_${r.hex(16)}`,
      apiSecret: `sk_sandbox_${r.hex(32)}`,
      endpointsKey: `ek_sandbox_${r.hex(16)}`,
    };
  });

  const listed = makeSubMerchants(seed, opts.subMerchants ?? 12);
  const requested = resolveInjections(opts.injections, n);
  const ghostCount = requested.unknown_sub_merchant ?? 0;
  const ghosts: SubMerchant[] = Array.from({ length: ghostCount }, (_, k) => {
    const r = createRng(hashSeed(seed, 'ghost', k));
    return {
      id: r.uuid(),
      name: `Unlisted Seller ${k + 1}`,
      listed: false,
      reserveBp: 0,
      holdDays: null,
      fixedFee: 50n,
      percentBp: 200,
      refundFee: 0n,
    };
  });
  const subMerchants = [...listed, ...ghosts];

  const span = to.getTime() - from.getTime();
  const ctx: BaseContext = {
    seed,
    tag,
    n,
    from: from.getTime(),
    to: to.getTime(),
    span,
    posIds,
    listed,
    mix,
    currencies,
    currencyList,
  };

  // The plan: which order carries which injection. Placed by a seeded draw among eligible orders.
  const planRng = createRng(hashSeed(seed, 'plan'));
  const plan = new Map<number, { type: InjectionType; ordinal: number }>();
  const shortfall: Partial<Record<InjectionType, number>> = {};
  for (const type of INJECTION_TYPES) {
    if (type === 'report_count_mismatch') continue;
    const want = requested[type] ?? 0;
    let placed = 0;
    for (let attempt = 0; placed < want && attempt < 200 * want; attempt++) {
      const i = planRng.int(0, n - 1);
      if (plan.has(i)) continue;
      if (!eligible(type, baseOrder(ctx, i))) continue;
      plan.set(i, { type, ordinal: placed });
      placed++;
    }
    if (placed < want) shortfall[type] = want - placed;
  }
  const days = localDays(from, to, timezone);
  const countMismatchDays: string[] = [];
  const wantDays = Math.min(requested.report_count_mismatch ?? 0, days.length);
  while (countMismatchDays.length < wantDays) {
    const d = planRng.pick(days);
    if (!countMismatchDays.includes(d)) countMismatchDays.push(d);
  }
  countMismatchDays.sort();

  const order = (index: number): Order => {
    if (!Number.isInteger(index) || index < 0 || index >= n) throw new RangeError(`no order ${index}`);
    const base = baseOrder(ctx, index);
    const planned = plan.get(index);
    return planned
      ? inject(base, planned.type, ghosts[planned.ordinal], createRng(hashSeed(seed, 'inject', index)))
      : base;
  };

  function* orders(range?: { from: number; to: number }): Generator<Order> {
    let first = 0;
    let last = n - 1;
    if (range) {
      // Order i starts in its slot of the range; its operations follow within MAX_LAG_MS.
      first = Math.max(0, Math.floor(((range.from - MAX_LAG_MS - ctx.from) * n) / span) - 1);
      last = Math.min(n - 1, Math.ceil(((range.to - ctx.from) * n) / span) + 1);
    }
    for (let i = first; i <= last; i++) {
      const o = order(i);
      if (!range || o.operations.some((op) => op.at >= range.from && op.at < range.to)) yield o;
    }
  }

  function* operations(range?: { from: number; to: number }): Generator<Operation> {
    for (const o of orders(range)) {
      for (const op of o.operations) if (!range || (op.at >= range.from && op.at < range.to)) yield op;
    }
  }

  let recurringIndex: Map<string, number> | undefined;
  let truth: GroundTruthEntry[] | undefined;

  const scenario: Scenario = {
    seed,
    timezone,
    from,
    to,
    posIds,
    credentials,
    subMerchants,
    orderCount: n,
    countMismatchDays,
    injectionShortfall: shortfall,
    get groundTruth(): readonly GroundTruthEntry[] {
      truth ??= buildGroundTruth(
        [...plan.keys()].sort((a, b) => a - b).map(order),
        countMismatchDays,
        posIds,
        timezone,
      );
      return truth;
    },
    order,
    orders,
    operations,
    findOrder(orderId) {
      const m = /^SBX-([0-9A-F]{6})-(\d{6,})$/.exec(orderId);
      if (!m || m[1] !== tag) return undefined;
      const i = Number(m[2]);
      return i < n ? order(i) : undefined;
    },
    findRecurring(recurringId) {
      if (!recurringIndex) {
        recurringIndex = new Map();
        for (let i = 0; i < n; i++) {
          const o = baseOrder(ctx, i);
          if (o.recurringId) recurringIndex.set(o.recurringId, i);
        }
      }
      const i = recurringIndex.get(recurringId);
      return i === undefined ? undefined : order(i);
    },
    subMerchantCsv() {
      const lines = ['sub_merchant_id,name,reserve_hold_days'];
      for (const s of listed) lines.push(`${s.id},${csvField(s.name)},${s.holdDays ?? ''}`);
      return lines.join('\n') + '\n';
    },
  };
  return scenario;
}

// ---------------------------------------------------------------------------------------------------

interface BaseContext {
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

function resolveRange(opts: ScenarioOptions, zone: string): { from: Date; to: Date } {
  const parse = (text: string, name: string): DateTime => {
    const dt = /^\d{4}-\d{2}-\d{2}$/.test(text)
      ? DateTime.fromISO(text, { zone })
      : DateTime.fromISO(text, { setZone: true });
    if (!dt.isValid) throw new RangeError(`${name}: not a date or instant: ${text}`);
    return dt;
  };
  let from: DateTime;
  let to: DateTime;
  if (opts.from || opts.to) {
    if (!opts.from || !opts.to) throw new RangeError('from and to go together');
    from = parse(opts.from, 'from');
    to = parse(opts.to, 'to');
  } else {
    const month = opts.month ?? '2025-01';
    if (!/^\d{4}-\d{2}$/.test(month)) throw new RangeError(`month: expected YYYY-MM, got ${month}`);
    from = DateTime.fromISO(`${month}-01`, { zone });
    if (!from.isValid) throw new RangeError(`month/timezone not valid: ${month} ${zone}`);
    to = from.plus({ months: 1 });
  }
  if (to <= from) throw new RangeError('the range is empty: to must be after from');
  return { from: from.toJSDate(), to: to.toJSDate() };
}

function localDays(from: Date, to: Date, zone: string): string[] {
  const out: string[] = [];
  let d = DateTime.fromJSDate(from, { zone }).startOf('day');
  const end = to.getTime();
  while (d.toMillis() < end) {
    // a day counts when its middle lies in the range
    if (d.plus({ hours: 12 }).toMillis() >= from.getTime()) out.push(d.toISODate()!);
    d = d.plus({ days: 1 });
  }
  return out;
}

function resolveInjections(given: ScenarioOptions['injections'], n: number): Partial<Record<InjectionType, number>> {
  if (given === 'none') return {};
  const each = Math.max(1, Math.round(n / 200));
  const out: Partial<Record<InjectionType, number>> = {};
  for (const t of INJECTION_TYPES) out[t] = t === 'report_count_mismatch' || t === 'unknown_sub_merchant' ? 1 : each;
  if (given) for (const [k, v] of Object.entries(given)) out[k as InjectionType] = v;
  return out;
}

function makeSubMerchants(seed: string, count: number): SubMerchant[] {
  const r = createRng(hashSeed(seed, 'sub-merchants'));
  const out: SubMerchant[] = [];
  const used = new Set<string>();
  for (let k = 0; k < count; k++) {
    let name = `${r.pick(SHOP_OWNERS)} ${r.pick(SHOP_WORDS)}`;
    // one name with a comma so that the directory CSV needs quoting
    if (k === 1) name = `${name}, Ltd`;
    while (used.has(name)) name = `${name} ${k}`;
    used.add(name);
    const reserve = r.chance(0.35);
    out.push({
      id: r.uuid(),
      name,
      listed: true,
      reserveBp: reserve ? r.pick([500, 1000]) : 0,
      holdDays: reserve ? r.pick([30, 60, null]) : r.pick([90, null]),
      fixedFee: r.pick([0n, 0n, 25n, 50n, 100n]),
      percentBp: r.pick([150, 200, 250, 290, 350]),
      refundFee: r.pick([0n, 0n, 0n, 20n]),
    });
  }
  return out;
}

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** An amount split into n shares of at least 1.00 each, summing exactly to the total. */
function splitShares(total: bigint, count: number, r: Rng): bigint[] {
  const min = 100n;
  const rest = total - min * BigInt(count);
  const weights = Array.from({ length: count }, () => BigInt(r.int(1, 100)));
  const wsum = weights.reduce((a, b) => a + b, 0n);
  const shares = weights.map((w) => min + (rest * w) / wsum);
  shares[0] = shares[0]! + (total - shares.reduce((a, b) => a + b, 0n));
  return shares;
}

/** Settlement parts of a money-moving operation (purchase, capture, recurrent). */
export function chargeParts(shares: readonly bigint[], sms: readonly SubMerchant[]): ReceiverPart[] {
  return shares.map((share, j) => {
    const sm = sms[j]!;
    const fixedFee = sm.fixedFee < share ? sm.fixedFee : share;
    let percentFee = (share * BigInt(sm.percentBp)) / 10000n;
    if (fixedFee + percentFee > share) percentFee = share - fixedFee;
    const amount = share - fixedFee - percentFee;
    let reserve = (share * BigInt(sm.reserveBp)) / 10000n;
    if (reserve > amount) reserve = amount;
    return {
      subMerchantId: sm.id,
      name: sm.name,
      share,
      fee: fixedFee + percentFee,
      fixedFee,
      percentFee,
      amount,
      reserve,
    };
  });
}

/** auth and void: no fee, no reserve. */
export function plainParts(shares: readonly bigint[], sms: readonly SubMerchant[]): ReceiverPart[] {
  return shares.map((share, j) => ({
    subMerchantId: sms[j]!.id,
    name: sms[j]!.name,
    share,
    fee: 0n,
    fixedFee: 0n,
    percentFee: 0n,
    amount: share,
    reserve: 0n,
  }));
}

/** A refund or dispute of `amount`, spread over the receivers in proportion to their shares. */
export function proportionalParts(
  amount: bigint,
  shares: readonly bigint[],
  sms: readonly SubMerchant[],
  feeOf: (sm: SubMerchant) => bigint,
): ReceiverPart[] {
  const total = shares.reduce((a, b) => a + b, 0n);
  const parts = shares.map((s) => (amount * s) / total);
  parts[0] = parts[0]! + (amount - parts.reduce((a, b) => a + b, 0n));
  return parts.map((share, j) => {
    const sm = sms[j]!;
    const fee = feeOf(sm) < share ? feeOf(sm) : share;
    return {
      subMerchantId: sm.id,
      name: sm.name,
      share,
      fee,
      fixedFee: fee,
      percentFee: 0n,
      amount: share - fee,
      reserve: 0n,
    };
  });
}

const sum = (values: readonly bigint[]): bigint => values.reduce((a, b) => a + b, 0n);

function baseOrder(ctx: BaseContext, index: number): Order {
  const r = createRng(hashSeed(ctx.seed, 'order', index));
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
  const customerFeeOf = (amount: bigint): bigint => (withCustomerFee ? 1n + (amount * 150n) / 10000n : 0n);

  const bin = r.pick(['444111', '535522', '411111', '557799']);
  const payway = r.weighted({ card: 70, apple_pay: 15, google_pay: 15 });
  const card: CardData = {
    mask: `${bin}******${r.digits(4)}`,
    token: r.uuid(),
    tokenExpiration: new Date(t0 + 3 * 365 * DAY).toISOString().slice(0, 19),
    payway,
    paymentSystem: bin.startsWith('4') ? 'visa' : 'mastercard',
    tokenizationKind: payway === 'card' ? null : payway,
  };
  const customer = {
    id: `cust-${r.hex(8)}`,
    fname: r.pick(FIRST_NAMES),
    lname: r.pick(LAST_NAMES),
    email: `buyer.${r.hex(6)}@example.test`,
    phone: `+38067${r.digits(7)}`,
  };
  const description = `Marketplace order ${orderId}: ${receiverCount || 1} seller(s)`;
  const payload = r.chance(0.3) ? JSON.stringify({ cart: r.hex(10) }) : null;
  const ops: Operation[] = [];
  const inRange = (t: number) => t < ctx.to;

  const make = (o: {
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
  }): Operation => {
    const fixedFee = o.ownFee ? o.ownFee.fixed : sum(o.receivers.map((x) => x.fixedFee));
    const percentFee = o.ownFee ? o.ownFee.percent : sum(o.receivers.map((x) => x.percentFee));
    const final = o.status === 'success' || o.status === 'failure';
    return {
      posId,
      orderId,
      paymentId: o.paymentId,
      transactionId: r.digits(12),
      operationId: o.secondary ? r.uuid() : null,
      mode,
      method: o.method,
      status: o.status,
      statusCode: o.code.code,
      statusDescription: o.code.text,
      currency,
      originalAmount: o.amount,
      customerFee: o.customerFee ?? 0n,
      merchantFee: fixedFee + percentFee,
      fixedFee,
      percentFee,
      receivers: o.receivers,
      at: o.at,
      processedAt: final ? o.at + r.int(200, 5000) : o.at,
      blankPeriodDateTime: !final && r.chance(0.5),
      card,
      authCode: o.status === 'success' ? r.digits(6) : null,
      rrnCode: final ? r.digits(12) : null,
      description,
      payload,
      customer,
      recurring: o.recurring ?? null,
      userActionUrl: o.status === 'pending' ? `https://sandbox.psp.invalid/3ds/${r.hex(16)}` : null,
      distortion: null,
      webhook: o.webhook ?? (o.status === 'init' ? 'none' : 'sent'),
    };
  };

  const ownFee = (amount: bigint) => ({ fixed: 30n, percent: (amount * 250n) / 10000n });
  const paymentId = r.uuid();
  let recurringId: string | null = null;

  /** refunds and disputes after a settled operation at time `at` */
  const afterSettlement = (at: number, amount: bigint) => {
    if (r.chance(0.18)) {
      const full = r.chance(0.4);
      let left = amount;
      let t = at;
      const count = full ? 1 : r.int(1, 3);
      for (let k = 0; k < count && left >= 100n; k++) {
        t += r.int(HOUR, 5 * DAY);
        if (!inRange(t)) break;
        const refund = full ? left : clampBig(100n, left, (amount * BigInt(r.int(5, 30))) / 100n);
        left -= refund;
        const receivers = own ? [] : proportionalParts(refund, shares, sms, (sm) => sm.refundFee);
        ops.push(
          make({
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
      if (inRange(t)) {
        const receivers = own ? [] : proportionalParts(amount, shares, sms, () => 500n);
        ops.push(
          make({
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
  };

  switch (kind) {
    case 'split_purchase':
    case 'hosted_purchase':
    case 'own_purchase': {
      const cf = customerFeeOf(total);
      const receivers = own ? [] : chargeParts(shares, sms);
      ops.push(
        make({
          paymentId,
          method: 'purchase',
          status: 'success',
          code: STATUS_TEXT.success,
          at: t0,
          amount: total,
          customerFee: cf,
          receivers,
          ownFee: own ? ownFee(total) : undefined,
          secondary: false,
        }),
      );
      afterSettlement(t0, total);
      break;
    }
    case 'split_auth_capture':
    case 'split_auth_void': {
      ops.push(
        make({
          paymentId,
          method: 'auth',
          status: 'success',
          code: STATUS_TEXT.success,
          at: t0,
          amount: total,
          receivers: plainParts(shares, sms),
          secondary: false,
        }),
      );
      const t1 = t0 + r.int(10 * 60_000, 48 * HOUR);
      if (!inRange(t1)) break;
      if (kind === 'split_auth_void') {
        ops.push(
          make({
            paymentId,
            method: 'void',
            status: 'success',
            code: STATUS_TEXT.success,
            at: t1,
            amount: total,
            receivers: plainParts(shares, sms),
            secondary: true,
          }),
        );
      } else {
        ops.push(
          make({
            paymentId,
            method: 'capture',
            status: 'success',
            code: STATUS_TEXT.success,
            at: t1,
            amount: total,
            receivers: chargeParts(shares, sms),
            secondary: true,
          }),
        );
        afterSettlement(t1, total);
      }
      break;
    }
    case 'hosted_abandoned':
      ops.push(
        make({
          paymentId,
          method: 'purchase',
          status: 'init',
          code: STATUS_TEXT.init,
          at: t0,
          amount: total,
          receivers: plainParts(shares, sms),
          secondary: false,
        }),
      );
      break;
    case 'declined':
      ops.push(
        make({
          paymentId,
          method: 'purchase',
          status: 'failure',
          code: STATUS_TEXT.declined,
          at: t0,
          amount: total,
          receivers: plainParts(shares, sms),
          secondary: false,
        }),
      );
      break;
    case 'pending_3ds':
      ops.push(
        make({
          paymentId,
          method: 'purchase',
          status: 'pending',
          code: STATUS_TEXT.pending3ds,
          at: t0,
          amount: total,
          receivers: plainParts(shares, sms),
          secondary: false,
        }),
      );
      break;
    case 'subscription': {
      recurringId = r.uuid();
      const recurring = { id: recurringId, status: 'active' as const };
      const cf = customerFeeOf(total);
      ops.push(
        make({
          paymentId,
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
        if (t - t0 > 20 * DAY || !inRange(t)) break;
        // each charge is a payment of its own in the same order and subscription
        const failed = r.chance(0.1);
        ops.push(
          make({
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
      break;
    }
  }
  return {
    index,
    posId,
    orderId,
    kind,
    mode,
    recurringId,
    serverUrl: null,
    notificationUrl: null,
    operations: ops,
    injection: null,
  };
}

function clampBig(min: bigint, max: bigint, v: bigint): bigint {
  return v < min ? min : v > max ? max : v;
}

/** The operation an injection lands on: the order's first settled, successful money-moving one. */
export function mainOperation(order: Order): Operation | undefined {
  return order.operations.find(
    (op) => op.status === 'success' && (op.method === 'purchase' || op.method === 'capture'),
  );
}

function eligible(type: InjectionType, order: Order): boolean {
  const op = mainOperation(order);
  if (!op) return false;
  switch (type) {
    case 'split_mismatch':
    case 'duplicate':
      return op.receivers.length > 0;
    case 'unknown_sub_merchant':
      return order.kind === 'split_purchase' && order.operations.length === 1;
    default:
      return true;
  }
}

function inject(order: Order, type: InjectionType, ghost: SubMerchant | undefined, r: Rng): Order {
  const op = mainOperation(order)!;
  const side = (): 'period' | 'webhook' => r.pick(['period', 'webhook'] as const);
  let changed: Operation = op;
  const distort = (d: Distortion) => (changed = { ...op, distortion: d });
  switch (type) {
    case 'missing_in_report':
      distort({ kind: 'omit', source: 'register' });
      break;
    case 'missing_in_period':
      distort({ kind: 'omit', source: 'period' });
      break;
    case 'missing_webhook':
      changed = { ...op, webhook: 'lost_for_good' };
      break;
    case 'webhook_lost_resendable':
      changed = { ...op, webhook: 'lost_resendable' };
      break;
    case 'status_mismatch':
      distort({ kind: 'status', source: side(), value: 'failure', statusCode: STATUS_TEXT.declined.code });
      break;
    case 'amount_mismatch':
      distort({ kind: 'amount', source: side(), value: op.originalAmount + BigInt(r.int(1, 20)) * 50n });
      break;
    case 'currency_mismatch': {
      const other = ['EUR', 'USD', 'UAH', 'XTS', 'PLN'].filter((c) => c !== op.currency);
      distort({ kind: 'currency', source: side(), value: r.pick(other) });
      break;
    }
    case 'fee_mismatch':
      distort({ kind: 'fee', source: side(), value: op.merchantFee + BigInt(r.int(1, 10)) * 10n });
      break;
    case 'split_mismatch': {
      const j = r.int(0, op.receivers.length - 1);
      distort({ kind: 'receiver_amount', receiverIndex: j, value: op.receivers[j]!.amount + 100n });
      break;
    }
    case 'duplicate':
      distort({ kind: 'duplicate_row', receiverIndex: r.int(0, op.receivers.length - 1) });
      break;
    case 'unknown_sub_merchant': {
      if (!ghost) return order;
      const receivers = op.receivers.map((x, j) => (j === 0 ? { ...x, subMerchantId: ghost.id, name: ghost.name } : x));
      changed = { ...op, receivers };
      break;
    }
    case 'report_count_mismatch':
      return order;
  }
  return { ...order, injection: type, operations: order.operations.map((o) => (o === op ? changed : o)) };
}

function buildGroundTruth(
  injected: Order[],
  countMismatchDays: readonly string[],
  posIds: readonly string[],
  zone: string,
): GroundTruthEntry[] {
  const out: GroundTruthEntry[] = [];
  for (const order of injected) {
    const op = order.operations.find(
      (o) =>
        o.distortion ||
        o.webhook === 'lost_for_good' ||
        o.webhook === 'lost_resendable' ||
        o.receivers.some((x) => x.name.startsWith('Unlisted Seller')),
    );
    if (!op || !order.injection) continue;
    const base = {
      posId: order.posId,
      orderId: order.orderId,
      paymentId: op.paymentId,
      transactionId: op.transactionId,
      method: op.method,
    };
    const d = op.distortion;
    switch (order.injection) {
      case 'missing_in_report':
      case 'missing_in_period':
        out.push({ ...base, type: order.injection, detail: { source: d?.kind === 'omit' ? d.source : null } });
        break;
      case 'missing_webhook':
      case 'webhook_lost_resendable':
        out.push({ ...base, type: 'missing_webhook', detail: { lostForGood: order.injection === 'missing_webhook' } });
        break;
      case 'status_mismatch':
        if (d?.kind === 'status')
          out.push({
            ...base,
            type: 'status_mismatch',
            detail: { source: d.source, expected: op.status, reported: d.value },
          });
        break;
      case 'amount_mismatch':
        if (d?.kind === 'amount')
          out.push({
            ...base,
            type: 'amount_mismatch',
            detail: { source: d.source, expected: op.originalAmount.toString(), reported: d.value.toString() },
          });
        break;
      case 'currency_mismatch':
        if (d?.kind === 'currency')
          out.push({
            ...base,
            type: 'currency_mismatch',
            detail: { source: d.source, expected: op.currency, reported: d.value },
          });
        break;
      case 'fee_mismatch':
        if (d?.kind === 'fee')
          out.push({
            ...base,
            type: 'fee_mismatch',
            detail: {
              source: d.source,
              field: d.source === 'webhook' ? 'fee.amount' : 'merchantFee',
              expected: op.merchantFee.toString(),
              reported: d.value.toString(),
            },
          });
        break;
      case 'split_mismatch':
        if (d?.kind === 'receiver_amount') {
          const x = op.receivers[d.receiverIndex]!;
          const shares = sum(op.receivers.map((p) => p.share)) + (d.value - x.amount);
          out.push({
            ...base,
            type: 'split_mismatch',
            receiverName: x.name,
            detail: { source: 'register', originalAmount: op.originalAmount.toString(), sharesSum: shares.toString() },
          });
        }
        break;
      case 'duplicate':
        if (d?.kind === 'duplicate_row')
          out.push({
            ...base,
            type: 'duplicate',
            receiverName: op.receivers[d.receiverIndex]!.name,
            detail: { source: 'register', differingFields: 'cardMask,payway,rrnCode' },
          });
        break;
      case 'unknown_sub_merchant': {
        const x = op.receivers.find((p) => p.name.startsWith('Unlisted Seller'))!;
        out.push({
          ...base,
          type: 'unknown_sub_merchant',
          receiverName: x.name,
          detail: { source: 'register', subMerchantId: x.subMerchantId },
        });
        break;
      }
      case 'report_count_mismatch':
        break;
    }
  }
  for (const day of countMismatchDays) {
    for (const posId of posIds) {
      out.push({
        type: 'report_count_mismatch',
        posId,
        orderId: null,
        paymentId: null,
        transactionId: null,
        method: null,
        detail: { source: 'register', day, timezone: zone, extraAnnounced: 1 },
      });
    }
  }
  return out;
}
