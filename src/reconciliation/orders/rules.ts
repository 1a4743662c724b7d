import { DateTime } from 'luxon';
import type { FeeScheduleLine, OrderAmendedData, OrderPlacedData } from '../../events/order-events';
import { discrepancyId } from '../discrepancies/id';
import type { Finding } from '../discrepancies/lifecycle';
import type { MatchedOperation, SourceItem } from '../matching';
import { PRIMARY_METHODS, applicableLine, expectedFee } from '../../order-terms';
import type { OrderDiscrepancyType } from '../discrepancies/order-types';

/**
 * Judging one order against the PSP (pure: no I/O, no wall clock). Everything that carries one order id
 * is judged together: the order's versions and every PSP payment whose records carry that order id.
 *
 * - The order as it stands is its latest placement or amendment (by its time, then commit order);
 *   a cancellation, at any time, cancels it.
 * - A payment's primary operation is its first purchase, auth or recurrent operation; the PSP's values are
 *   those of the register, else the period transactions, else the webhook (the amount requested).
 * - Matching: the payment whose primary operation is earliest (then POS, then payment id) claims the order;
 *   each payment claims at most one order (it carries one order id) and each order is claimed once. A later
 *   payment whose primary operation is `recurrent` is a charge of the same subscription order, compared with
 *   it like the first; any other later payment is money without an order of its own (payment_without_order).
 * - payment_without_order and order_not_at_psp wait for the grace period (RECON_GRACE_HOURS) after the
 *   payment's or the order's time, judged by the projection's clock (the latest time the events carry):
 *   the other side may still be on its way.
 * - Split: compared part by part (sub-merchant → part, the register's receiverAmount + receiverFee, the
 *   receiver named by the directory) once the register shows the operation.
 * - Fees: every successful operation's register parts, against the contract line in force on its day.
 */

export interface OrderVersion {
  readonly eventId: string;
  readonly commit: bigint;
  readonly prepare: bigint;
  readonly kind: 'placed' | 'amended' | 'cancelled';
  /** the version's time: createdAt, amendedAt or cancelledAt */
  readonly at: string;
  readonly data: OrderPlacedData | OrderAmendedData | { orderId: string; cancelledAt: string };
}

export interface GroupPayment {
  readonly posId: string;
  readonly paymentId: string;
  readonly ops: readonly MatchedOperation[];
}

export interface JudgeContext {
  readonly clock: number | null;
  /**
   * The earliest creation time of any order recorded (null: none yet). A payment before that order's
   * business day, or any payment while the marketplace records no orders, is not compared with orders: a
   * marketplace that does not send its orders would otherwise see all its money as payment_without_order, held.
   */
  readonly ordersSince: number | null;
  readonly graceMs: number;
  readonly timezone: string;
  readonly subMerchantOf: (receiverName: string) => string | undefined;
  readonly feeLines: readonly FeeScheduleLine[];
}

/** A finding of the order rules: the core's finding, of an order type (its POS unknown without a payment). */
export type OrderFinding = Finding<OrderDiscrepancyType>;

export interface OrderState {
  readonly orderId: string;
  readonly status: 'open' | 'cancelled';
  /** null when only a cancellation is known */
  readonly values: OrderPlacedData | null;
  readonly versions: readonly OrderVersion[];
}

export type MatchRole =
  | 'claimed'
  | 'recurring_charge'
  | 'second_payment'
  | 'no_order'
  | 'order_cancelled'
  | 'secondary_only';

export interface MatchRow {
  readonly posId: string;
  readonly paymentId: string;
  readonly role: MatchRole;
  readonly method: string | null;
  readonly status: string | null;
  readonly amount: bigint | null;
  readonly currency: string | null;
  readonly occurredAt: string | null;
  readonly eventIds: readonly string[];
}

export interface Judgement {
  readonly order: OrderState | null;
  readonly matches: MatchRow[];
  readonly findings: OrderFinding[];
  /** when the group must be judged again for its age alone (order_not_at_psp, payment_without_order), or null */
  readonly due: number | null;
  /** 'matched' | 'awaiting_psp' | 'not_at_psp' | 'cancelled' (null without an order) */
  readonly state: string | null;
}

const s = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());

export function orderState(versions: readonly OrderVersion[]): OrderState | null {
  if (versions.length === 0) return null;
  // the placement is every order's first version, whatever its time: an amendment correcting created_at to before
  // it, timed before it, sorted first and the order stayed as placed for good; the others follow by their times
  const first = (v: OrderVersion) => (v.kind === 'placed' ? 0 : 1);
  const sorted = [...versions].sort((a, b) =>
    first(a) !== first(b)
      ? first(a) - first(b)
      : a.at !== b.at
        ? a.at < b.at
          ? -1
          : 1
        : a.commit !== b.commit
          ? a.commit < b.commit
            ? -1
            : 1
          : a.prepare < b.prepare
            ? -1
            : 1,
  );
  const latest = sorted.filter((v) => v.kind !== 'cancelled').at(-1);
  let values: OrderPlacedData | null = null;
  if (latest) {
    const { amendedAt: _, ...rest } = latest.data as OrderAmendedData;
    values = rest;
  }
  return {
    orderId: versions[0]!.data.orderId,
    status: sorted.some((v) => v.kind === 'cancelled') ? 'cancelled' : 'open',
    values,
    versions: sorted,
  };
}

function pspItem(op: MatchedOperation): SourceItem | null {
  return op.register ?? op.period ?? op.webhook;
}

function primaryOf(p: GroupPayment): MatchedOperation | null {
  const ops = p.ops.filter((o) => PRIMARY_METHODS.has(o.method));
  ops.sort((a, b) =>
    (a.occurredAt ?? '~') < (b.occurredAt ?? '~') ? -1 : (a.occurredAt ?? '~') > (b.occurredAt ?? '~') ? 1 : 0,
  );
  return ops[0] ?? null;
}

const opEvidence = (op: MatchedOperation) => [
  ...new Set([...(op.register?.eventIds ?? []), ...(op.period?.eventIds ?? []), ...(op.webhook?.eventIds ?? [])]),
];

/** Whether a payment at this time is compared with the orders (from the first order's business day on). */
function comparedWithOrders(occurredAt: string | null, ctx: JudgeContext): boolean {
  if (ctx.ordersSince === null || occurredAt === null) return false;
  return Date.parse(occurredAt) >= dayStart(ctx.ordersSince, ctx.timezone);
}

/** The start of the business day of `ordersSince`, the last one asked (it changes with the first order only). */
let lastDayStart: { ms: number; timezone: string; start: number } | null = null;

function dayStart(ms: number, timezone: string): number {
  if (lastDayStart?.ms !== ms || lastDayStart.timezone !== timezone)
    lastDayStart = { ms, timezone, start: DateTime.fromMillis(ms, { zone: timezone }).startOf('day').toMillis() };
  return lastDayStart.start;
}

function withoutOrder(
  orderKey: string,
  orderId: string | null,
  order: OrderState | null,
  role: MatchRole,
  claimedBy: string | null,
  p: GroupPayment,
  op: MatchedOperation,
  orderEvidence: readonly string[],
): OrderFinding {
  const item = pspItem(op);
  return {
    id: discrepancyId('payment_without_order', `${orderKey}|${p.posId}|${p.paymentId}`),
    type: 'payment_without_order',
    posId: p.posId,
    paymentId: p.paymentId,
    orderId,
    method: op.method,
    operationKey: op.key,
    receiverName: null,
    subMerchantIds: [],
    currency: item?.currency ?? null,
    occurredAt: op.occurredAt,
    values: {
      reason: role,
      psp_amount: s(item?.amount),
      psp_currency: item?.currency ?? null,
      psp_status: item?.status ?? null,
      ...(role === 'second_payment' ? { order_claimed_by_payment: claimedBy } : {}),
      ...(role === 'order_cancelled'
        ? { order_cancelled_at: order?.versions.find((v) => v.kind === 'cancelled')?.at ?? null }
        : {}),
    },
    evidence: [...orderEvidence, ...opEvidence(op)],
  };
}

function notAtPsp(
  orderKey: string,
  v: OrderPlacedData,
  ctx: JudgeContext,
  orderEvidence: readonly string[],
): OrderFinding {
  return {
    id: discrepancyId('order_not_at_psp', orderKey),
    type: 'order_not_at_psp',
    posId: null,
    paymentId: null,
    orderId: v.orderId,
    method: null,
    operationKey: `order:${v.orderId}`,
    receiverName: null,
    subMerchantIds: v.split.map((x) => x.subMerchantId).sort(),
    currency: v.currency,
    occurredAt: v.createdAt,
    values: {
      order_amount: v.amount,
      order_currency: v.currency,
      order_created_at: v.createdAt,
      grace_hours: ctx.graceMs / 3_600_000,
    },
    evidence: [...orderEvidence],
  };
}

type Candidate = { readonly p: GroupPayment; readonly op: MatchedOperation | null };
type Claim = { readonly p: GroupPayment; readonly op: MatchedOperation };

/** A payment whose primary operation failed: no money moved (a declined card the customer paid again after). */
const declined = (c: Candidate) => c.op !== null && pspItem(c.op)?.status === 'failure';

/**
 * The payments by their primary operation's time, then POS, then payment id, a declined one after every other:
 * the first claims the order (a declined first attempt does not leave the payment that paid it without one).
 */
function candidatesOf(payments: readonly GroupPayment[]): Candidate[] {
  return payments
    .map((p) => ({ p, op: primaryOf(p) }))
    .sort((a, b) => {
      if (declined(a) !== declined(b)) return declined(a) ? 1 : -1;
      const ta = a.op?.occurredAt ?? '~';
      const tb = b.op?.occurredAt ?? '~';
      if (ta !== tb) return ta < tb ? -1 : 1;
      if (a.p.posId !== b.p.posId) return a.p.posId < b.p.posId ? -1 : 1;
      return a.p.paymentId < b.p.paymentId ? -1 : a.p.paymentId > b.p.paymentId ? 1 : 0;
    });
}

/** What judging one order's payments gathers. */
interface Matching {
  readonly order: OrderState | null;
  readonly orderKey: string;
  readonly orderId: string | null;
  readonly orderEvidence: readonly string[];
  /** the order is open with values: a payment can claim it */
  readonly live: boolean;
  readonly ctx: JudgeContext;
  readonly findings: OrderFinding[];
  readonly matches: MatchRow[];
  readonly waits: number[];
  readonly charges: Claim[];
  claimant: Claim | null;
}

/** The row of recon.order_payments of a candidate, without its role. */
function matchBase({ p, op }: Candidate): Omit<MatchRow, 'role'> {
  const item = op ? pspItem(op) : null;
  return {
    posId: p.posId,
    paymentId: p.paymentId,
    method: op?.method ?? null,
    status: item?.status ?? null,
    amount: item?.amount ?? null,
    currency: item?.currency ?? null,
    occurredAt: op?.occurredAt ?? null,
    eventIds: op ? opEvidence(op) : [],
  };
}

/** One payment: it claims the order, is a subscription's charge, or is money without an order of its own. */
function matchPaymentToOrder(m: Matching, c: Candidate): void {
  const { p, op } = c;
  const base = matchBase(c);
  if (!op) {
    m.matches.push({ ...base, role: 'secondary_only' });
    return;
  }
  if (m.live && m.claimant === null) {
    m.claimant = { p, op };
    m.matches.push({ ...base, role: 'claimed' });
    return;
  }
  // a subscription's later charges are payments of their own in the same order: each is compared with it
  if (m.live && op.method === 'recurrent') {
    m.matches.push({ ...base, role: 'recurring_charge' });
    m.charges.push({ p, op });
    return;
  }
  const { order } = m;
  const role: MatchRole =
    order === null || (order.values === null && order.status === 'open')
      ? 'no_order'
      : order.status === 'cancelled'
        ? 'order_cancelled'
        : 'second_payment';
  m.matches.push({ ...base, role });
  if (base.status === 'failure') return; // no money moved
  // the order may still be on its way (payment before order): judged once the grace period has run out
  const seenAt = op.occurredAt === null ? null : Date.parse(op.occurredAt) + m.ctx.graceMs;
  if (seenAt !== null && (m.ctx.clock === null || m.ctx.clock < seenAt)) {
    m.waits.push(seenAt);
    return;
  }
  if (role === 'no_order' && !comparedWithOrders(op.occurredAt, m.ctx)) return;
  const claimedBy = m.claimant?.p.paymentId ?? null;
  m.findings.push(withoutOrder(m.orderKey, m.orderId, order, role, claimedBy, p, op, m.orderEvidence));
}

/** The order's side once its payments are matched: never paid (after the grace), or compared with its payments. */
function judgeOrderSide(m: Matching): string | null {
  const { order } = m;
  let state: string | null = order === null ? null : order.status === 'cancelled' ? 'cancelled' : 'awaiting_psp';
  if (m.live && m.claimant === null) {
    const v = order!.values!;
    const dueAt = Date.parse(v.createdAt) + m.ctx.graceMs;
    if (m.ctx.clock !== null && m.ctx.clock >= dueAt) {
      state = 'not_at_psp';
      m.findings.push(notAtPsp(m.orderKey, v, m.ctx, m.orderEvidence));
    } else m.waits.push(dueAt);
  }
  if (m.live && m.claimant !== null) {
    state = 'matched';
    for (const c of [m.claimant, ...m.charges])
      m.findings.push(...compareWithOrder(m.orderKey, order!.values!, c, m.orderEvidence, m.ctx));
  }
  return state;
}

export function judgeOrder(
  orderKey: string,
  versions: readonly OrderVersion[],
  payments: readonly GroupPayment[],
  ctx: JudgeContext,
): Judgement {
  const order = orderState(versions);
  const orderId = order?.orderId ?? payments.flatMap((p) => p.ops).find((o) => o.orderId !== null)?.orderId ?? null;
  const m: Matching = {
    order,
    orderKey,
    orderId,
    orderEvidence: order?.versions.map((v) => v.eventId) ?? [],
    live: order !== null && order.status === 'open' && order.values !== null,
    ctx,
    findings: [],
    matches: [],
    waits: [],
    charges: [],
    claimant: null,
  };
  for (const c of candidatesOf(payments)) matchPaymentToOrder(m, c);
  const state = judgeOrderSide(m);
  for (const p of payments) for (const op of p.ops) m.findings.push(...feeFindings(orderId, op, ctx));
  const due = m.waits.length ? Math.min(...m.waits) : null;
  return { order, matches: m.matches, findings: m.findings, due, state };
}

/** The columns every finding comparing one payment with its order shares. */
type Common = Omit<OrderFinding, 'id' | 'type' | 'subMerchantIds' | 'values'>;

function amountDiffers(orderKey: string, v: OrderPlacedData, { p, op }: Claim, common: Common): OrderFinding[] {
  const item = pspItem(op)!;
  const orderAmount = BigInt(v.amount);
  if (item.amount === orderAmount && item.currency === v.currency) return [];
  return [
    {
      ...common,
      id: discrepancyId('amount_differs_from_order', `${orderKey}|${p.posId}|${p.paymentId}`),
      type: 'amount_differs_from_order',
      subMerchantIds: [],
      values: {
        order_amount: v.amount,
        order_currency: v.currency,
        psp_amount: s(item.amount),
        psp_currency: item.currency,
        psp_source: item.source,
        difference:
          item.amount === null || item.currency !== v.currency ? null : (item.amount - orderAmount).toString(),
      },
    },
  ];
}

/** The parts of a split that differ from the order's, by sub-merchant (an unknown receiver by its name). */
function differingParts(
  v: OrderPlacedData,
  receivers: NonNullable<MatchedOperation['register']>['receivers'],
  ctx: JudgeContext,
): Record<string, unknown>[] {
  const ordered = new Map(v.split.map((x) => [x.subMerchantId, BigInt(x.amount)]));
  const paid = new Map<string, { amount: bigint; name: string; known: boolean }>();
  for (const r of receivers) {
    const id = ctx.subMerchantOf(r.receiverName);
    const key = id ?? `(unknown receiver) ${r.receiverName}`;
    const prior = paid.get(key);
    paid.set(key, { amount: (prior?.amount ?? 0n) + r.share, name: r.receiverName, known: id !== undefined });
  }
  const parts: Record<string, unknown>[] = [];
  for (const key of [...new Set([...ordered.keys(), ...paid.keys()])].sort()) {
    const o = ordered.get(key) ?? null;
    const q = paid.get(key) ?? null;
    if (o !== null && q !== null && o === q.amount) continue;
    parts.push({
      sub_merchant_id: q && !q.known ? null : key,
      receiver_name: q?.name ?? null,
      issue: o === null ? 'not_ordered' : q === null ? 'not_paid' : 'part_amount',
      order_amount: s(o),
      psp_amount: s(q?.amount),
      difference: ((q?.amount ?? 0n) - (o ?? 0n)).toString(),
    });
  }
  return parts;
}

function splitDiffers(
  orderKey: string,
  v: OrderPlacedData,
  { p, op }: Claim,
  common: Common,
  ctx: JudgeContext,
): OrderFinding[] {
  const register = op.register;
  if (!register) return [];
  const parts = differingParts(v, register.receivers, ctx);
  if (!parts.length) return [];
  return [
    {
      ...common,
      id: discrepancyId('split_differs_from_order', `${orderKey}|${p.posId}|${p.paymentId}`),
      type: 'split_differs_from_order',
      subMerchantIds: [
        ...new Set(parts.map((x) => x.sub_merchant_id).filter((x): x is string => typeof x === 'string')),
      ].sort(),
      values: {
        parts,
        order_split: v.split.map((x) => ({ sub_merchant_id: x.subMerchantId, amount: x.amount })),
        psp_split: register.receivers.map((r) => ({
          receiver_name: r.receiverName,
          sub_merchant_id: ctx.subMerchantOf(r.receiverName) ?? null,
          amount: r.share.toString(),
        })),
      },
    },
  ];
}

/** A payment that claims the order (or a subscription's charge), compared with it: the amount, then the split. */
function compareWithOrder(
  orderKey: string,
  v: OrderPlacedData,
  claim: Claim,
  orderEvidence: readonly string[],
  ctx: JudgeContext,
): OrderFinding[] {
  const { p, op } = claim;
  const common: Common = {
    posId: p.posId,
    paymentId: p.paymentId,
    orderId: v.orderId,
    method: op.method,
    operationKey: op.key,
    receiverName: null,
    currency: v.currency,
    occurredAt: op.occurredAt,
    evidence: [...orderEvidence, ...opEvidence(op)],
  };
  return [...amountDiffers(orderKey, v, claim, common), ...splitDiffers(orderKey, v, claim, common, ctx)];
}

/** localDay's answers by time zone and instant: an operation's day is asked again at each judgement of its order. */
const localDays = new Map<string, string>();

/** The business day (RECON_TIMEZONE) of an operation's time, parsed by luxon once per spelling. */
function localDay(occurredAt: string, timezone: string): string {
  const k = `${timezone}\u0000${occurredAt}`;
  let day = localDays.get(k);
  if (day === undefined) {
    day = DateTime.fromISO(occurredAt, { zone: 'utc' }).setZone(timezone).toISODate()!;
    // bounded: a cache, never a store (the month's times are many)
    if (localDays.size >= 50_000) localDays.clear();
    localDays.set(k, day);
  }
  return day;
}

function feeFindings(orderId: string | null, op: MatchedOperation, ctx: JudgeContext): OrderFinding[] {
  const register = op.register;
  if (register?.status !== 'success' || op.occurredAt === null || ctx.feeLines.length === 0) return [];
  const day = localDay(op.occurredAt, ctx.timezone);
  const out: OrderFinding[] = [];
  for (const r of register.receivers) {
    if (r.receiverFee === null) continue;
    const sub = ctx.subMerchantOf(r.receiverName) ?? null;
    const line = applicableLine(ctx.feeLines, sub, op.method, register.currency, day);
    if (!line) continue;
    const expected = expectedFee(line, r.share);
    const charged = r.receiverFee < 0n ? -r.receiverFee : r.receiverFee;
    if (charged === expected) continue;
    const type = charged > expected ? 'fee_above_contract' : 'fee_below_contract';
    out.push({
      id: discrepancyId(type, `${op.key}|${r.receiverName}`),
      type,
      posId: op.posId,
      paymentId: op.paymentId,
      orderId,
      method: op.method,
      operationKey: op.key,
      receiverName: r.receiverName,
      subMerchantIds: sub ? [sub] : [],
      currency: register.currency,
      occurredAt: op.occurredAt,
      values: {
        part: r.share.toString(),
        expected_fee: expected.toString(),
        charged_fee: charged.toString(),
        difference: (charged - expected).toString(),
        schedule: line.subMerchantId,
        percent: line.percent,
        fixed: line.fixed,
        rounding: line.rounding,
        effective_from: line.effectiveFrom,
      },
      evidence: r.row.versions.map((x) => x.eventId),
    });
  }
  return out;
}
