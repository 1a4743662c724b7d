import { DateTime } from 'luxon';
import { buildGroundTruth } from './ground-truth';
import { eligible, inject, INJECTION_TYPES } from './injections';
import { GROUND_TRUTH_TYPES } from './model';
import { createRng, createStreamRng, hashSeed } from './random';
import type {
  GroundTruthEntry,
  InjectionType,
  Operation,
  Order,
  OrderKind,
  PosCredentials,
  SubMerchant,
} from './model';
import { baseOrder, DAY, type BaseContext } from './scenario-orders';

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
export const MAX_LAG_MS = 21 * DAY;

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

/** The options resolved: the range, the projects and their credentials, the sub-merchants, what is injected. */
interface ScenarioSetup {
  readonly seed: string;
  readonly timezone: string;
  readonly from: Date;
  readonly to: Date;
  readonly n: number;
  readonly tag: string;
  readonly posIds: readonly string[];
  readonly credentials: readonly PosCredentials[];
  readonly listed: readonly SubMerchant[];
  readonly ghosts: readonly SubMerchant[];
  readonly requested: Partial<Record<InjectionType, number>>;
  readonly ctx: BaseContext;
}

export function generateScenario(opts: ScenarioOptions): Scenario {
  const setup = scenarioSetup(opts);
  const { seed, timezone, from, to, n, posIds, listed } = setup;
  const { plan, shortfall, countMismatchDays } = planInjections(
    setup.ctx,
    setup.requested,
    localDays(from, to, timezone),
  );
  const source = orderSource(setup, plan);
  let truth: GroundTruthEntry[] | undefined;
  return {
    seed,
    timezone,
    from,
    to,
    posIds,
    credentials: setup.credentials,
    subMerchants: [...listed, ...setup.ghosts],
    orderCount: n,
    countMismatchDays,
    injectionShortfall: shortfall,
    get groundTruth(): readonly GroundTruthEntry[] {
      truth ??= buildGroundTruth(
        [...plan.keys()].sort((a, b) => a - b).map(source.order),
        countMismatchDays,
        posIds,
        timezone,
      );
      return truth;
    },
    ...source,
    subMerchantCsv() {
      const lines = ['sub_merchant_id,name,reserve_hold_days'];
      for (const s of listed) lines.push(`${s.id},${csvField(s.name)},${s.holdDays ?? ''}`);
      return lines.join('\n') + '\n';
    },
  };
}

function scenarioSetup(opts: ScenarioOptions): ScenarioSetup {
  const seed = String(opts.seed);
  const timezone = opts.timezone ?? 'UTC';
  const { from, to } = resolveRange(opts, timezone);
  const n = opts.payments ?? 300;
  if (!Number.isInteger(n) || n < 1) throw new RangeError('payments must be a positive integer');
  const currencies = opts.currencies ?? DEFAULT_CURRENCIES;
  const tag = hashSeed(seed, 'tag').toString(16).padStart(8, '0').slice(0, 6).toUpperCase();
  const posIds = opts.posIds?.length
    ? [...opts.posIds]
    : Array.from({ length: opts.posCount ?? 1 }, (_, k) => createRng(hashSeed(seed, 'pos', k)).uuid());
  const listed = makeSubMerchants(seed, opts.subMerchants ?? 12);
  const requested = resolveInjections(opts.injections, n);
  const ctx: BaseContext = {
    seed,
    tag,
    n,
    from: from.getTime(),
    to: to.getTime(),
    span: to.getTime() - from.getTime(),
    posIds,
    listed,
    mix: { ...DEFAULT_MIX, ...(opts.mix ?? {}) },
    currencies,
    currencyList: Object.keys(currencies).sort(),
  };
  return {
    seed,
    timezone,
    from,
    to,
    n,
    tag,
    posIds,
    credentials: makeCredentials(seed, posIds),
    listed,
    ghosts: makeGhosts(seed, requested.unknown_sub_merchant ?? 0),
    requested,
    ctx,
  };
}

type OrderSource = Pick<Scenario, 'order' | 'orders' | 'operations' | 'findOrder' | 'findRecurring'>;

/**
 * The orders, each a pure function of (seed, index) with its planned injection: by index, by time window
 * (only the orders whose slot can reach it), by order or subscription id. Nothing is kept but the index of
 * subscriptions, built on first use.
 */
function orderSource(setup: ScenarioSetup, plan: InjectionPlan['plan']): OrderSource {
  const { seed, n, ctx, tag, ghosts } = setup;
  const order = (index: number): Order => {
    if (!Number.isInteger(index) || index < 0 || index >= n) throw new RangeError(`no order ${index}`);
    const base = baseOrder(ctx, index);
    const planned = plan.get(index);
    return planned ? inject(base, planned.type, ghosts[planned.ordinal], createStreamRng(seed, 'inject', index)) : base;
  };

  function* orders(range?: { from: number; to: number }): Generator<Order> {
    let first = 0;
    let last = n - 1;
    if (range) {
      // Order i starts in its slot of the range; its operations follow within MAX_LAG_MS.
      first = Math.max(0, Math.floor(((range.from - MAX_LAG_MS - ctx.from) * n) / ctx.span) - 1);
      last = Math.min(n - 1, Math.ceil(((range.to - ctx.from) * n) / ctx.span) + 1);
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
  return {
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
  };
}

// ---------------------------------------------------------------------------------------------------
interface InjectionPlan {
  /** order index → the injection it carries (and its ordinal among those of its type) */
  readonly plan: Map<number, { type: InjectionType; ordinal: number }>;
  readonly shortfall: Partial<Record<InjectionType, number>>;
  readonly countMismatchDays: string[];
}

/** Which order carries which injection: placed by a seeded draw among eligible orders. */
function planInjections(
  ctx: BaseContext,
  requested: Partial<Record<InjectionType, number>>,
  days: readonly string[],
): InjectionPlan {
  const { seed, n } = ctx;
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
  const countMismatchDays: string[] = [];
  const wantDays = Math.min(requested.report_count_mismatch ?? 0, days.length);
  while (countMismatchDays.length < wantDays) {
    const d = planRng.pick(days);
    if (!countMismatchDays.includes(d)) countMismatchDays.push(d);
  }
  countMismatchDays.sort();

  return { plan, shortfall, countMismatchDays };
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

function makeCredentials(seed: string, posIds: readonly string[]): PosCredentials[] {
  return posIds.map((posId, k) => {
    const r = createRng(hashSeed(seed, 'credentials', k));
    return {
      posId,
      apiKey: `pk_sandbox_${r.hex(16)}`,
      apiSecret: `sk_sandbox_${r.hex(32)}`,
      endpointsKey: `ek_sandbox_${r.hex(16)}`,
    };
  });
}

/** Sub-merchants missing from the directory, each paid in one order (the `unknown_sub_merchant` injection). */
function makeGhosts(seed: string, count: number): SubMerchant[] {
  return Array.from({ length: count }, (_, k) => {
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

/** A CSV field, quoted when it must be. */
export function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
