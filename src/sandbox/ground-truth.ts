import { DateTime } from 'luxon';
import { type HoldPolicy, holdRuleOf, materialityOf } from '../config/hold-policy';
import type { Distortion, GroundTruthEntry, InjectionType, Operation, Order, SubMerchant } from './model';
import { sum } from './receiver-parts';

/** The scenario's ground truth: each injected disagreement as recon should report it. */

export function buildGroundTruth(
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
    const entry = injectedTruth(order, order.injection, op);
    if (entry) out.push(entry);
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

type TruthBase = Pick<GroundTruthEntry, 'posId' | 'orderId' | 'paymentId' | 'transactionId' | 'method'>;

function injectedTruth(order: Order, injection: InjectionType, op: Operation): GroundTruthEntry | undefined {
  const base: TruthBase = {
    posId: order.posId,
    orderId: order.orderId,
    paymentId: op.paymentId,
    transactionId: op.transactionId,
    method: op.method,
  };
  const d = op.distortion;
  switch (injection) {
    case 'missing_in_report':
    case 'missing_in_period':
      return { ...base, type: injection, detail: { source: d?.kind === 'omit' ? d.source : null } };
    case 'missing_webhook':
    case 'webhook_lost_resendable':
      return { ...base, type: 'missing_webhook', detail: { lostForGood: injection === 'missing_webhook' } };
    case 'status_mismatch':
    case 'amount_mismatch':
    case 'currency_mismatch':
    case 'fee_mismatch':
      return valueTruth(base, injection, op, d);
    case 'split_mismatch':
    case 'duplicate':
    case 'unknown_sub_merchant':
      return receiverTruth(base, injection, op, d);
    case 'report_count_mismatch':
      return undefined;
  }
}

/** A source reporting another value of the operation than the truth. */
function valueTruth(
  base: TruthBase,
  injection: 'status_mismatch' | 'amount_mismatch' | 'currency_mismatch' | 'fee_mismatch',
  op: Operation,
  d: Distortion | null,
): GroundTruthEntry | undefined {
  if (injection === 'status_mismatch' && d?.kind === 'status')
    return { ...base, type: injection, detail: { source: d.source, expected: op.status, reported: d.value } };
  if (injection === 'amount_mismatch' && d?.kind === 'amount')
    return {
      ...base,
      type: injection,
      detail: { source: d.source, expected: op.originalAmount.toString(), reported: d.value.toString() },
    };
  if (injection === 'currency_mismatch' && d?.kind === 'currency')
    return { ...base, type: injection, detail: { source: d.source, expected: op.currency, reported: d.value } };
  if (injection === 'fee_mismatch' && d?.kind === 'fee')
    return {
      ...base,
      type: injection,
      detail: {
        source: d.source,
        field: d.source === 'webhook' ? 'fee.amount' : 'merchantFee',
        expected: op.merchantFee.toString(),
        reported: d.value.toString(),
      },
    };
  return undefined;
}

/** A register row of one receiver that disagrees: its amount, a second copy of it, or a receiver not listed. */
function receiverTruth(
  base: TruthBase,
  injection: 'split_mismatch' | 'duplicate' | 'unknown_sub_merchant',
  op: Operation,
  d: Distortion | null,
): GroundTruthEntry | undefined {
  if (injection === 'split_mismatch' && d?.kind === 'receiver_amount') {
    const x = op.receivers[d.receiverIndex]!;
    const shares = sum(op.receivers.map((p) => p.share)) + (d.value - x.amount);
    return {
      ...base,
      type: injection,
      receiverName: x.name,
      detail: { source: 'register', originalAmount: op.originalAmount.toString(), sharesSum: shares.toString() },
    };
  }
  if (injection === 'duplicate' && d?.kind === 'duplicate_row')
    return {
      ...base,
      type: injection,
      receiverName: op.receivers[d.receiverIndex]!.name,
      detail: { source: 'register', differingFields: 'cardMask,payway,rrnCode' },
    };
  if (injection === 'unknown_sub_merchant') {
    const x = op.receivers.find((p) => p.name.startsWith('Unlisted Seller'))!;
    return {
      ...base,
      type: injection,
      receiverName: x.name,
      detail: { source: 'register', subMerchantId: x.subMerchantId },
    };
  }
  return undefined;
}

/**
 * What the statements of the scenario's month should hold and ask to pay, per currency (issue 25), from the
 * sandbox's own picture of the PSP's data and the injected breaks, by the hold policy's rules
 * (src/config/hold-policy.ts), computed here without recon's journal or discrepancies: `recon demo` checks
 * its statements against it (src/cli/demo-payout-check.ts).
 *   a receiver's net for a payment   a success sale's share − fee − reserve, + the reserve when its release
 *                                    (holdDays local days later) falls in the month; a refund or a chargeback
 *                                    − share − fee; as the register shows them (a distorted part as distorted,
 *                                    a row left out of the register not at all, a duplicated row once)
 *   held                             per break: its payment's net (all receivers, or the one it names) or at
 *                                    most its difference (material only), each payment held once; a receiver
 *                                    not in the directory: all it is owed
 *   due                              the month's net − held, per receiver
 */

export interface HoldWorld {
  readonly timezone: string;
  readonly from: Date;
  readonly to: Date;
  readonly subMerchants: readonly SubMerchant[];
  readonly groundTruth: readonly GroundTruthEntry[];
  orders(): Iterable<Order>;
}

/** An order break as the intent's ground truth gives it; a fee's difference as the contract gives it. */
export interface OrderBreak {
  readonly type: string;
  readonly paymentId: string | null;
  readonly subMerchantId: string | null;
  /** minor units (fee types) */
  readonly difference?: bigint;
}

export interface PayoutTruth {
  readonly currency: string;
  /** what the receivers' month adds up to */
  readonly net: bigint;
  readonly held: bigint;
  readonly due: bigint;
}

interface Claim {
  readonly paymentId: string;
  readonly receiverName: string | null;
  readonly currency: string | null;
  readonly atMost: bigint | null;
}

const DEFAULT_HOLD_DAYS = 90;
const SETTLING: Record<string, 'sale' | 'refund' | undefined> = {
  purchase: 'sale',
  capture: 'sale',
  recurrent: 'sale',
  refund: 'refund',
  dispute: 'refund',
};

type Net = { receiver: string; currency: string; payment: string; net: bigint };

/**
 * The month's flows as the register shows the operations, in one pass: each (receiver, currency)'s net over
 * the month, and each (payment, receiver, currency)'s net for the payments asked for only (a month of 1M
 * payments is not held per payment).
 */
function monthFlows(
  world: HoldWorld,
  payments: ReadonlySet<string>,
): { flows: Map<string, bigint>; nets: Map<string, Net> } {
  const holdDays = new Map(world.subMerchants.map((s) => [s.name, s.holdDays ?? DEFAULT_HOLD_DAYS]));
  const flows = new Map<string, bigint>(); // receiver \0 currency → net
  const nets = new Map<string, Net>();
  const from = world.from.getTime();
  const to = world.to.getTime();
  for (const order of world.orders())
    for (const op of order.operations) {
      const kind = SETTLING[op.method];
      const d = op.distortion;
      if (!kind || op.status !== 'success' || op.at < from || op.at >= to) continue;
      if (d?.kind === 'omit' && d.source === 'register') continue;
      op.receivers.forEach((r, i) => {
        const amount = d?.kind === 'receiver_amount' && d.receiverIndex === i ? d.value : r.amount;
        const share = amount + r.fee;
        let net = kind === 'sale' ? share - r.fee - r.reserve : -share - r.fee;
        if (kind === 'sale' && r.reserve !== 0n) {
          const day = DateTime.fromMillis(op.at, { zone: world.timezone }).startOf('day');
          const release = day.plus({ days: holdDays.get(r.name) ?? DEFAULT_HOLD_DAYS }).toMillis();
          if (Math.max(release, op.at + 1) < to) net += r.reserve;
        }
        const rk = `${r.name}\u0000${op.currency}`;
        flows.set(rk, (flows.get(rk) ?? 0n) + net);
        if (!payments.has(op.paymentId)) return;
        const key = `${op.paymentId}\u0000${r.name}\u0000${op.currency}`;
        const prior = nets.get(key);
        nets.set(key, {
          receiver: r.name,
          currency: op.currency,
          payment: op.paymentId,
          net: (prior?.net ?? 0n) + net,
        });
      });
    }
  return { flows, nets };
}

const abs = (v: bigint) => (v < 0n ? -v : v);

/** What each injected break claims under the policy (nothing for a type that holds nothing or a gap below it). */
function claimsOf(world: HoldWorld, orderBreaks: readonly OrderBreak[], policy: HoldPolicy): Claim[] {
  const nameOf = new Map(world.subMerchants.map((s) => [s.id, s.name]));
  // the currency of the breaks' payments only (their last operation's, as a pass over every payment had it)
  const wanted = new Set<string>();
  for (const g of world.groundTruth) if (g.paymentId) wanted.add(g.paymentId);
  for (const b of orderBreaks) if (b.paymentId) wanted.add(b.paymentId);
  const currencyOf = new Map<string, string>();
  for (const order of world.orders())
    for (const op of order.operations) if (wanted.has(op.paymentId)) currencyOf.set(op.paymentId, op.currency);
  const out: Claim[] = [];
  const add = (type: string, paymentId: string | null, receiverName: string | null, difference: bigint | null) => {
    const rule = holdRuleOf(policy, type);
    const currency = paymentId ? currencyOf.get(paymentId) : undefined;
    if (rule === 'none' || !paymentId || !currency) return;
    if (rule === 'payment') out.push({ paymentId, receiverName, currency: null, atMost: null });
    else if (difference !== null && difference > 0n && difference >= materialityOf(policy, currency))
      out.push({ paymentId, receiverName, currency, atMost: difference });
  };
  for (const g of world.groundTruth) {
    // a break of a receiver's row names it; one of the payment's values concerns all of its receivers
    const named = g.type === 'duplicate' || g.type === 'unknown_sub_merchant' ? (g.receiverName ?? null) : null;
    const fee =
      g.type === 'fee_mismatch' ? abs(BigInt(String(g.detail.expected)) - BigInt(String(g.detail.reported))) : null;
    add(g.type, g.paymentId, named, fee);
  }
  for (const b of orderBreaks) {
    const fee = b.type === 'fee_above_contract' || b.type === 'fee_below_contract';
    if (fee && b.subMerchantId === null) continue; // a receiver not in the directory is held whole anyway
    add(b.type, b.paymentId, fee ? (nameOf.get(b.subMerchantId!) ?? null) : null, b.difference ?? null);
  }
  return out;
}

export interface ExpectedHold {
  readonly paymentId: string;
  readonly receiverName: string;
  readonly currency: string;
  readonly amount: bigint;
}

/** The holds the breaks claim of the month's nets: whole payments first, then differences; each payment once. */
export function expectedHolds(
  world: HoldWorld,
  orderBreaks: readonly OrderBreak[],
  policy: HoldPolicy,
): ExpectedHold[] {
  return holdsAndFlows(world, orderBreaks, policy).holds;
}

/** The holds (see expectedHolds) and the month's flows per receiver and currency, in one pass over the month. */
function holdsAndFlows(
  world: HoldWorld,
  orderBreaks: readonly OrderBreak[],
  policy: HoldPolicy,
): { holds: ExpectedHold[]; flows: Map<string, bigint> } {
  const claims = claimsOf(world, orderBreaks, policy).sort(
    (a, b) => Number(a.atMost !== null) - Number(b.atMost !== null),
  );
  const { flows, nets } = monthFlows(world, new Set(claims.map((c) => c.paymentId)));
  const left = new Map([...nets].map(([k, v]) => [k, v.net > 0n ? v.net : 0n]));
  // each payment's keys, in the order of all keys sorted
  const keysOf = new Map<string, string[]>();
  for (const k of [...nets.keys()].sort()) {
    const payment = nets.get(k)!.payment;
    keysOf.set(payment, [...(keysOf.get(payment) ?? []), k]);
  }
  const holds: ExpectedHold[] = [];
  for (const c of claims) {
    let budget = c.atMost;
    for (const k of keysOf.get(c.paymentId) ?? []) {
      const n = nets.get(k)!;
      if (c.receiverName !== null && n.receiver !== c.receiverName) continue;
      if (c.currency !== null && n.currency !== c.currency) continue;
      const available = left.get(k)!;
      const amount = budget === null || budget > available ? available : budget;
      if (amount <= 0n) continue;
      left.set(k, available - amount);
      if (budget !== null) budget -= amount;
      holds.push({ paymentId: n.payment, receiverName: n.receiver, currency: n.currency, amount });
    }
  }
  return { holds, flows };
}

export function payoutTruth(world: HoldWorld, orderBreaks: readonly OrderBreak[], policy: HoldPolicy): PayoutTruth[] {
  const { holds, flows } = holdsAndFlows(world, orderBreaks, policy);
  const heldOf = new Map<string, bigint>(); // receiver \0 currency → held
  for (const h of holds) {
    const rk = `${h.receiverName}\u0000${h.currency}`;
    heldOf.set(rk, (heldOf.get(rk) ?? 0n) + h.amount);
  }
  const listed = new Set(world.subMerchants.filter((s) => s.listed).map((s) => s.name));
  const byCurrency = new Map<string, { net: bigint; held: bigint; due: bigint }>();
  for (const [rk, flow] of flows) {
    const [receiver, currency] = rk.split('\u0000') as [string, string];
    // a receiver the directory does not know is never due: all it is owed is held
    const held = listed.has(receiver) ? (heldOf.get(rk) ?? 0n) : flow > 0n ? flow : 0n;
    const t = byCurrency.get(currency) ?? { net: 0n, held: 0n, due: 0n };
    byCurrency.set(currency, { net: t.net + flow, held: t.held + held, due: t.due + flow - held });
  }
  return [...byCurrency].sort(([a], [b]) => (a < b ? -1 : 1)).map(([currency, t]) => ({ currency, ...t }));
}
