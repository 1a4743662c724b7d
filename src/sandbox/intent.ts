import { parseFeeContract } from '../ingest/fee-contract';
import { PRIMARY_METHODS, applicableLine, expectedFee } from '../order-terms';
import type { InjectedBy } from '../reconciliation/discrepancies/registry';
import type { Operation, Order, SubMerchant } from './model';
import { mainOperation } from './injections';
import { csvField, type Scenario } from './scenario';

/**
 * The marketplace's side of the sandbox's world (issue 17): the orders it placed (CSV and NDJSON, the
 * formats of `recon orders import`) and its fee contract with the PSP (`recon fees import`), with injected
 * differences from what the PSP's data shows, and their ground truth:
 *   order_not_at_psp           an order the PSP never saw (not in the PSP's world)
 *   payment_without_order      a payment whose order is left out of the file
 *   split_differs_from_order   an order naming another receiver than the one paid; one with two parts off by 1.00
 *   fee_above_contract / fee_below_contract
 *                              a contract line 0.01 below / above what the PSP charges, on a sub-merchant,
 *                              method and currency that only one operation of the world has
 * The contract otherwise states the sandbox's fee model exactly (percent of the part, rounded down, plus
 * the fixed fee, never more than the part). Pure and deterministic: a function of the scenario only.
 * Exact only for a scenario without PSP-side injections (`injections: 'none'`): a register row distorted
 * there (split_mismatch, unknown_sub_merchant) also differs from the order (pspSideOrderTruth gives those).
 */

export interface IntentTruth {
  /** a type the registry says the intent injects (src/reconciliation/discrepancies/registry.ts) */
  readonly type: InjectedBy<'intent'>;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly subMerchantId: string | null;
}

export interface OrderRecord {
  readonly order_id: string;
  readonly amount: string;
  readonly currency: string;
  readonly created_at: string;
  readonly split: readonly { sub_merchant_id: string; amount: string }[];
  readonly customer_reference: string | null;
}

/**
 * The intent's orders are generated again on each call, order by order from the scenario (nothing of a large
 * month is held); `orders`, `ordersCsv()` and `ordersNdjson()` gather them all, for a small scenario.
 */
export interface SandboxIntent {
  readonly orders: readonly OrderRecord[];
  /** how many orders the order file holds */
  readonly orderCount: number;
  orderRecords(): Generator<OrderRecord>;
  /** whether the order file holds this order */
  isOrdered(orderId: string): boolean;
  readonly groundTruth: readonly IntentTruth[];
  ordersCsvLines(): Generator<string>;
  ordersNdjsonLines(): Generator<string>;
  ordersCsv(): string;
  ordersNdjson(): string;
  feeContractCsv(): string;
}

const CONTRACT_METHODS = ['purchase', 'capture', 'recurrent'] as const;
const decimal = (minor: bigint) =>
  `${minor < 0n ? '-' : ''}${(minor < 0n ? -minor : minor) / 100n}.${String((minor < 0n ? -minor : minor) % 100n).padStart(2, '0')}`;
const percentText = (bp: number) => (bp / 100).toString();

/** The order the marketplace placed for a PSP order: its first purchase, auth or recurrent operation. */
function primaryOf(order: Order): Operation | undefined {
  return order.operations.find((op) => op.method === 'purchase' || op.method === 'auth' || op.method === 'recurrent');
}

function recordOf(order: Order, op: Operation): OrderRecord {
  const parts = new Map<string, bigint>();
  for (const r of op.receivers) parts.set(r.subMerchantId, (parts.get(r.subMerchantId) ?? 0n) + r.share);
  return {
    order_id: order.orderId,
    amount: decimal(op.originalAmount),
    currency: op.currency,
    created_at: new Date(op.at - 60_000).toISOString(),
    split: [...parts].map(([id, share]) => ({ sub_merchant_id: id, amount: decimal(share) })),
    customer_reference: op.customer.id,
  };
}

interface Chosen {
  order: Order;
  op: Operation;
}

type Charge = Chosen & { subMerchantId: string };

/**
 * What the injections choose from, gathered in one pass over the orders and keeping only the few orders an
 * injection may land on (a month of 1M payments is never held): the orders placed, counted; the first split
 * purchases each order injection may take and the last one; per contract line its charges, counted, and the first.
 */
interface IntentWorld {
  /** orders with a primary operation: each one line of the order file */
  orderCount: number;
  /** the first eligible split purchases naming not every listed receiver, then those with two distinct parts */
  readonly naming: Chosen[];
  readonly twoParts: Chosen[];
  /** the last eligible split purchase (the payment left without its order) */
  last: Chosen | undefined;
  /** sub-merchant|method|currency → the successful charges on that contract line: how many, and the first */
  readonly triples: Map<string, { count: number; first: Charge }>;
  readonly currencies: Set<string>;
}

/** The changes of the order file: the orders left out, and those written otherwise than the PSP saw them. */
interface OrderChanges {
  readonly dropped: Set<string>;
  readonly changed: Map<string, OrderRecord>;
}

// Enough candidates that the payment left without its order (taken first) and the other injection never
// exhaust a list: each injection takes one order not taken before.
const CANDIDATES = 3;

const intents = new WeakMap<Scenario, SandboxIntent>();

/** The scenario's intent, made once per scenario (a pass over a large month is not repeated for the same answer). */
export function sandboxIntentOf(scenario: Scenario): SandboxIntent {
  let intent = intents.get(scenario);
  if (!intent) intents.set(scenario, (intent = sandboxIntent(scenario)));
  return intent;
}

export function sandboxIntent(scenario: Scenario): SandboxIntent {
  const listed = scenario.subMerchants.filter((s) => s.listed);
  const world = intentWorld(scenario, listed);
  const truth: IntentTruth[] = [];
  const changes = injectOrderDifferences(world, listed, truth);
  // an order the PSP never saw
  const neverPaid: OrderRecord = {
    order_id: `intent-never-paid-${scenario.seed}`,
    amount: '42.00',
    currency: [...world.currencies].sort()[0] ?? 'EUR',
    created_at: new Date(scenario.from.getTime() + 86_400_000).toISOString(),
    split: [{ sub_merchant_id: listed[0]!.id, amount: '40.00' }],
    customer_reference: null,
  };
  truth.push({ type: 'order_not_at_psp', orderId: neverPaid.order_id, paymentId: null, subMerchantId: null });
  const adjust = injectFeeDifferences(scenario, world, truth);
  const records = () => orderRecords(scenario, changes, neverPaid);
  return {
    get orders() {
      return [...records()];
    },
    orderCount: world.orderCount - changes.dropped.size + 1,
    orderRecords: records,
    isOrdered: (orderId) =>
      orderId === neverPaid.order_id ||
      (!changes.dropped.has(orderId) && primaryOf(scenario.findOrder(orderId) ?? NO_ORDER) !== undefined),
    groundTruth: truth,
    ordersCsvLines: () => ordersCsvLines(records()),
    ordersNdjsonLines: () => ordersNdjsonLines(records()),
    ordersCsv: () => [...ordersCsvLines(records())].join(''),
    ordersNdjson: () => [...ordersNdjsonLines(records())].join(''),
    feeContractCsv: () => feeContractCsv(listed, [...world.currencies].sort(), adjust),
  };
}

const NO_ORDER = { operations: [] as Operation[] } as unknown as Order;

/** The order file's records in the scenario's order, the changes applied, the order the PSP never saw last. */
function* orderRecords(scenario: Scenario, changes: OrderChanges, neverPaid: OrderRecord): Generator<OrderRecord> {
  for (const order of scenario.orders()) {
    const op = primaryOf(order);
    if (!op || changes.dropped.has(order.orderId)) continue;
    yield changes.changed.get(order.orderId) ?? recordOf(order, op);
  }
  yield neverPaid;
}

function intentWorld(scenario: Scenario, listed: readonly SubMerchant[]): IntentWorld {
  const world: IntentWorld = {
    orderCount: 0,
    naming: [],
    twoParts: [],
    last: undefined,
    triples: new Map(),
    currencies: new Set(),
  };
  for (const order of scenario.orders()) {
    const op = primaryOf(order);
    if (!op) continue;
    world.orderCount++;
    for (const o of order.operations) {
      world.currencies.add(o.currency);
      if (o.status !== 'success' || !(CONTRACT_METHODS as readonly string[]).includes(o.method)) continue;
      for (const r of o.receivers) {
        const k = `${r.subMerchantId}|${o.method}|${o.currency}`;
        const seen = world.triples.get(k);
        if (seen) seen.count++;
        else world.triples.set(k, { count: 1, first: { order, op: o, subMerchantId: r.subMerchantId } });
      }
    }
    const main = mainOperation(order);
    if (order.kind === 'split_purchase' && main && main === op && op.receivers.length >= 2) {
      const chosen = { order, op };
      world.last = chosen;
      if (world.naming.length < CANDIDATES && namesNotEveryone(chosen, listed)) world.naming.push(chosen);
      if (world.twoParts.length < CANDIDATES && twoDistinctParts(chosen)) world.twoParts.push(chosen);
    }
  }
  return world;
}

const namesNotEveryone = (p: Chosen, listed: readonly SubMerchant[]) =>
  listed.some((s) => !p.op.receivers.some((r) => r.subMerchantId === s.id));
const twoDistinctParts = (p: Chosen) =>
  p.op.receivers[1]!.share > 200n && new Set(p.op.receivers.map((r) => r.subMerchantId)).size === p.op.receivers.length;

/** A payment without its order, an order naming another receiver, and one with two parts off by 1.00. */
function injectOrderDifferences(
  world: IntentWorld,
  listed: readonly SubMerchant[],
  truth: IntentTruth[],
): OrderChanges {
  const changes: OrderChanges = { dropped: new Set(), changed: new Map() };
  const used = new Set<string>();
  const take = (candidates: readonly Chosen[]) => {
    const p = candidates.find((x) => !used.has(x.order.orderId));
    if (p) used.add(p.order.orderId);
    return p;
  };
  const found = (p: Chosen, type: InjectedBy<'intent'>) =>
    truth.push({ type, orderId: p.order.orderId, paymentId: p.op.paymentId, subMerchantId: null });

  // a payment whose order is not in the file: the latest eligible one, since recon compares payments with
  // orders only from the first recorded order's day on
  const orphan = world.last;
  if (orphan) {
    used.add(orphan.order.orderId);
    changes.dropped.add(orphan.order.orderId);
    found(orphan, 'payment_without_order');
  }
  // another receiver than the one paid
  const wrong = take(world.naming);
  if (wrong) {
    const other = listed.find((s) => !wrong.op.receivers.some((r) => r.subMerchantId === s.id))!;
    const rec = recordOf(wrong.order, wrong.op);
    changes.changed.set(wrong.order.orderId, {
      ...rec,
      split: rec.split.map((p, i) => (i === 0 ? { ...p, sub_merchant_id: other.id } : p)),
    });
    found(wrong, 'split_differs_from_order');
  }
  // two parts off by 1.00, the total unchanged
  const off = take(world.twoParts);
  if (off) {
    const rec = recordOf(off.order, off.op);
    const shift = (amount: string, d: bigint) => decimal(BigInt(amount.replace('.', '')) + d);
    changes.changed.set(off.order.orderId, {
      ...rec,
      split: rec.split.map((p, i) =>
        i === 0 ? { ...p, amount: shift(p.amount, 100n) } : i === 1 ? { ...p, amount: shift(p.amount, -100n) } : p,
      ),
    });
    found(off, 'split_differs_from_order');
  }
  return changes;
}

/**
 * Fee lines off by 0.01 on a sub-merchant, method and currency only one operation has; returns the change
 * of each contract line's fixed fee (sub-merchant|method|currency → minor units).
 */
function injectFeeDifferences(scenario: Scenario, world: IntentWorld, truth: IntentTruth[]): Map<string, bigint> {
  const byId = new Map(scenario.subMerchants.map((s) => [s.id, s]));
  const adjust = new Map<string, bigint>();
  const single = [...world.triples]
    .filter(([, t]) => t.count === 1)
    .map(([k, t]) => [k, t.first] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const charged = (p: Charge) => p.op.receivers.find((r) => r.subMerchantId === p.subMerchantId)!;
  // the cap at the part must not hide the change: a part well above its fee
  // and a sub-merchant the contract has lines for (an unlisted receiver has none of its own);
  // and the fee must reach recon: a receiver's fee is read from its register row, so never on an operation
  // whose register row a PSP-side injection leaves out (a fee break no data shows)
  const clear = (p: Charge) =>
    byId.get(p.subMerchantId)!.listed &&
    charged(p).share > charged(p).fee + 100n &&
    byId.get(p.subMerchantId)!.fixedFee >= 1n &&
    registerShowsFees(p.op);
  const above = single.find(([, p]) => clear(p));
  const below = single.find(([k, p]) => k !== above?.[0] && clear(p));
  for (const [entry, type, delta] of [
    [above, 'fee_above_contract', -1n],
    [below, 'fee_below_contract', 1n],
  ] as const) {
    if (!entry) continue;
    const p = entry[1];
    adjust.set(entry[0], delta);
    truth.push({ type, orderId: p.order.orderId, paymentId: p.op.paymentId, subMerchantId: p.subMerchantId });
  }
  return adjust;
}

/**
 * The operation's register rows are in the reports, so recon reads its receivers' fees: a row left out
 * (missing_in_report) hides them. A duplicated row or an altered receiver amount still shows the fee (the demo
 * finds a fee break on a duplicated row: seeds fee-breaks-0 and -2 of test/sandbox/fee-injection.test.ts).
 */
function registerShowsFees(op: Operation): boolean {
  const d = op.distortion;
  return !(d?.kind === 'omit' && d.source === 'register');
}

/** The order file as CSV, line by line (each with its newline). */
function* ordersCsvLines(orders: Iterable<OrderRecord>): Generator<string> {
  yield 'order_id,amount,currency,created_at,split,customer_reference\n';
  for (const o of orders) {
    const split = o.split.map((p) => `${p.sub_merchant_id}:${p.amount}`).join(';');
    yield `${[o.order_id, o.amount, o.currency, o.created_at, split, o.customer_reference ?? ''].map(csvField).join(',')}\n`;
  }
}

/** The same orders as NDJSON, line by line. */
function* ordersNdjsonLines(orders: Iterable<OrderRecord>): Generator<string> {
  for (const o of orders) yield `${JSON.stringify(o)}\n`;
}

function feeContractCsv(
  listed: readonly SubMerchant[],
  currencies: readonly string[],
  adjust: ReadonlyMap<string, bigint>,
): string {
  const lines = ['sub_merchant_id,method,currency,percent,fixed,effective_from,rounding'];
  for (const c of currencies) for (const m of CONTRACT_METHODS) lines.push(`*,${m},${c},2,0.50,2000-01-01,half_up`);
  for (const s of listed) {
    for (const m of CONTRACT_METHODS) {
      for (const c of currencies) {
        const fixed = s.fixedFee + (adjust.get(`${s.id}|${m}|${c}`) ?? 0n);
        lines.push(`${s.id},${m},${c},${percentText(s.percentBp)},${decimal(fixed)},2000-01-01,down`);
      }
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * The order discrepancies the scenario's PSP-side injections cause besides the intent's own ground truth: a
 * register row whose split is distorted also differs from its order (split_differs_from_order), and the
 * distorted part may be charged another fee than the contract allows on it: split_mismatch shows a part 1.00
 * larger under the same fee (its sub-merchant's line); unknown_sub_merchant shows a receiver the directory
 * does not know (the default schedule, no sub-merchant). Derived from both ground truths and the contract,
 * so `recon demo` can compare what it finds with what was injected.
 */
export function pspSideOrderTruth(scenario: Scenario, intent: SandboxIntent): IntentTruth[] {
  const contract = parseFeeContract(intent.feeContractCsv(), 'fee-contract.csv');
  if (!contract.ok) throw new Error('the sandbox fee contract is invalid');
  const key = (t: IntentTruth) => `${t.type}|${t.paymentId}|${t.subMerchantId}`;
  const seen = new Set(intent.groundTruth.map(key));
  // by transaction: a payment's operations (purchase, then refund or dispute) share its payment id
  const operation = (orderId: string, transactionId: string) =>
    scenario.findOrder(orderId)?.operations.find((op) => op.transactionId === transactionId);
  const byId = new Map(scenario.subMerchants.map((s) => [s.id, s]));
  const out: IntentTruth[] = [];
  const add = (t: IntentTruth) => {
    if (!seen.has(key(t))) out.push(t);
    seen.add(key(t));
  };
  for (const g of scenario.groundTruth) {
    if (g.type !== 'split_mismatch' && g.type !== 'unknown_sub_merchant') continue;
    if (!g.orderId || !g.paymentId || !g.transactionId) continue;
    const op = operation(g.orderId, g.transactionId);
    // recon compares an order with its payment's primary operation (docs/orders.md): a split distorted on a
    // capture is that capture's split_mismatch, not a difference from the order (the authorization, compared, agrees);
    // a payment whose order is not in the file is payment_without_order, with no split to compare
    if (intent.isOrdered(g.orderId) && (g.type === 'unknown_sub_merchant' || PRIMARY_METHODS.has(g.method ?? '')))
      add({ type: 'split_differs_from_order', orderId: g.orderId, paymentId: g.paymentId, subMerchantId: null });
    // the fee is judged on every successful operation against the contract, whether or not its order is known
    const part = op?.receivers.find((r) => r.name === g.receiverName);
    if (!op || !part) continue;
    const listed = byId.get(part.subMerchantId)?.listed === true;
    const subMerchantId = listed ? part.subMerchantId : null;
    const share = g.type === 'split_mismatch' ? part.share + 100n : part.share;
    const day = new Date(op.at).toISOString().slice(0, 10);
    const line = applicableLine(contract.lines, subMerchantId, op.method, op.currency, day);
    if (!line) continue;
    const allowed = expectedFee(line, share);
    if (allowed === part.fee) continue;
    const type = part.fee > allowed ? 'fee_above_contract' : 'fee_below_contract';
    add({ type, orderId: g.orderId, paymentId: g.paymentId, subMerchantId });
  }
  return out;
}
