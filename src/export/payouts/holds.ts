import type { Sql } from '../../db/connect';
import { isSqlState } from '../../db/errors';
import {
  type Decision,
  DiscrepancyAccepted,
  DiscrepancyAcceptanceRevoked,
  discrepancyStream,
} from '../../events/audit-events';
import { dataOf, isEvent } from '../../events/catalog';
import { holdReasonsOf } from '../../reconciliation/discrepancies/registry';
import { allDiscrepancies } from '../../reconciliation/discrepancy-queries';
import {
  type HoldPolicy,
  holdingTypesOf,
  holdPolicyFromEnv,
  holdRuleOf,
  materialityOf,
} from '../../config/hold-policy';
import { readStreamsAt } from '../../store/read-streams-at';
import { comparePositions, type EventStore, type Position } from '../../store/types';
import { quarantinedPaymentsAt } from './quarantine-holds';
import { growthKeyOf, growthsOf, heldOnce, onSale, operationKeyOf, paymentGrowth, type Seen } from './payment-growth';

/**
 * Money held on the statements (docs/discrepancies.md, "What is held"): what a discrepancy puts in doubt, by
 * the hold policy of its type (src/config/hold-policy.ts), while it is open or accepted with the decision to
 * withhold it. The amount is never more than what its payment adds to the statement, in that currency, for
 * that receiver: the payment's net in the journal booked before the period ends (its sale less its refunds,
 * fees and the reserve withheld, plus a reserve released within the period), never below zero. A payment
 * under two discrepancies is held once: a claim on the whole payment first, then the differences, each up to
 * what is left of the payment (allocateHolds, pure).
 */

export interface HeldItem {
  /** the discrepancy the money is held for ('' for a receiver the directory does not know) */
  readonly discrepancyId: string;
  /** why, in plain words: statements leave the company */
  readonly reason: string;
  readonly receiverName: string;
  readonly currency: string;
  readonly amount: bigint;
  /** the discrepancy's type ('' when none) */
  readonly type?: string;
  readonly orderId?: string | null;
  readonly paymentId?: string | null;
  /** when the payment was made */
  readonly occurredAt?: Date | null;
}

/**
 * What one discrepancy (or any other source of doubt, e.g. an event held in quarantine) claims of a payment:
 * its whole net contribution (atMost null) or at most an amount of it.
 */
export interface HoldClaim {
  readonly id: string;
  readonly type: string;
  readonly reason: string;
  readonly posId: string;
  readonly paymentId: string;
  readonly orderId: string | null;
  readonly occurredAt: Date | null;
  /** null: every receiver of the payment */
  readonly receiverName: string | null;
  /** null: every currency the payment is booked in */
  readonly currency: string | null;
  readonly atMost: bigint | null;
}

/** A payment's net on one receiver's payable in one currency, booked before the period's end, at the cut. */
export interface PaymentNet {
  readonly posId: string;
  readonly paymentId: string;
  readonly receiverName: string;
  readonly currency: string;
  readonly net: bigint;
}

/** Why money is held, by type: the registry's reasons (src/reconciliation/discrepancies/registry.ts). */
const REASONS: Record<string, string> = {
  ...holdReasonsOf('en'),
  quarantined_event: 'a record of the payment could not be processed: under investigation',
};

/** The id of a held item for a payment whose event a projection set aside (quarantine-holds.ts). */
/** The id of a hold on a payment with an event set aside: this prefix and the event's id. */
export const QUARANTINE_ID = 'quarantine:';

export const UNREGISTERED_REASON = 'the receiver is not registered as a sub-merchant: nothing is paid until it is';
export const reasonOf = (type: string): string => REASONS[type] ?? 'under investigation';

/** Every reason a held item can give (each is translated for statements: src/export/i18n/labels.ts). */
export const HOLD_REASON_TEXTS: readonly string[] = [
  ...Object.values(REASONS),
  UNREGISTERED_REASON,
  'under investigation',
];

const keyOf = (n: Pick<PaymentNet, 'posId' | 'paymentId' | 'receiverName' | 'currency'>) =>
  [n.posId, n.paymentId, n.receiverName, n.currency].join('\u001f');
const paymentKeyOf = (n: Pick<PaymentNet, 'posId' | 'paymentId'>) => `${n.posId}\u001f${n.paymentId}`;

/**
 * The held items of the claims, each never more than what is left of its payment's net contribution: claims
 * on a whole payment first, then the rest, each in id order; a payment (per receiver and currency) is held once.
 */
export function allocateHolds(claims: readonly HoldClaim[], nets: readonly PaymentNet[]): HeldItem[] {
  const left = new Map<string, bigint>();
  for (const n of nets) left.set(keyOf(n), (left.get(keyOf(n)) ?? 0n) + n.net);
  for (const [k, v] of left) if (v < 0n) left.set(k, 0n);
  // each claim looks at its own payment's nets only, in key order (a month holds tens of thousands of both)
  const byPayment = new Map<string, { n: PaymentNet; k: string }[]>();
  for (const row of nets.map((n) => ({ n, k: keyOf(n) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))) {
    const p = paymentKeyOf(row.n);
    const list = byPayment.get(p);
    if (list) list.push(row);
    else byPayment.set(p, [row]);
  }
  const ordered = [...claims].sort(
    (a, b) => Number(a.atMost !== null) - Number(b.atMost !== null) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const out: HeldItem[] = [];
  for (const c of ordered) {
    let budget = c.atMost;
    const seen = new Set<string>();
    for (const { n, k } of byPayment.get(paymentKeyOf(c)) ?? []) {
      if (seen.has(k)) continue;
      if (
        (c.receiverName !== null && n.receiverName !== c.receiverName) ||
        (c.currency !== null && n.currency !== c.currency)
      )
        continue;
      seen.add(k);
      const available = left.get(k) ?? 0n;
      const amount = budget === null ? available : budget < available ? budget : available;
      if (amount <= 0n) continue;
      left.set(k, available - amount);
      if (budget !== null) budget -= amount;
      out.push({
        discrepancyId: c.id,
        reason: c.reason,
        receiverName: n.receiverName,
        currency: n.currency,
        amount,
        type: c.type,
        orderId: c.orderId,
        paymentId: c.paymentId,
        occurredAt: c.occurredAt,
      });
    }
  }
  return out.sort(
    (a, b) =>
      cmp(a.receiverName, b.receiverName) || cmp(a.currency, b.currency) || cmp(a.discrepancyId, b.discrepancyId),
  );
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const big = (v: unknown): bigint | null => (typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : null);
const abs = (v: bigint) => (v < 0n ? -v : v);

/**
 * The difference a discrepancy of the "difference" rule states: a fee against the contract, or the largest gap
 * between the PSP's reports of a fee; null when its values do not state one (nothing is held then).
 */
export function differenceOf(type: string, values: Record<string, unknown>): bigint | null {
  if (type === 'fee_above_contract' || type === 'fee_below_contract') {
    const d = big(values.difference);
    return d === null ? null : abs(d);
  }
  if (type === 'fee_mismatch') {
    let widest: bigint | null = null;
    // the webhook gives the merchant's fee as `fee` (src/reconciliation/discrepancy-rules.ts, sourceValues)
    for (const field of ['merchant_fee', 'customer_fee']) {
      const seen = ['register', 'period', 'webhook']
        .map((s) => values[s] as Record<string, unknown> | null | undefined)
        .map((v) => big(v?.[field] ?? (field === 'merchant_fee' ? v?.fee : undefined)))
        .filter((x): x is bigint => x !== null);
      if (seen.length < 2) continue;
      const gap = seen.reduce((m, x) => (x > m ? x : m)) - seen.reduce((m, x) => (x < m ? x : m));
      if (widest === null || gap > widest) widest = gap;
    }
    return widest;
  }
  return null;
}

export interface DiscRow {
  id: string;
  type: string;
  status: string;
  detected_by_event: string | null;
  resolved_by_event: string | null;
  pos_id: string;
  payment_id: string;
  method: string | null;
  receiver_name: string | null;
  order_id: string | null;
  currency: string | null;
  occurred_at: Date | null;
  values: Record<string, unknown> | null;
  /** as accepted (frozen with the values), and as the rule finds it now (columns.ts) */
  amount_in_doubt?: bigint | string | null;
  amount_in_doubt_now?: bigint | string | null;
  /** its resolutions the rule ended by finding it again, each with the event that did ([resolved, found, …]) */
  past_resolutions?: string[] | null;
}

/**
 * A decision at a cut, with the amount in doubt it was taken on (`DiscrepancyAccepted.amount`; null: none recorded),
 * the payment a pay released under a `payment` rule (`released`) and its receivers' shares as seen then
 * (`releasedShares`, the journal's measure; null: none recorded).
 */
interface DecisionAtCut {
  readonly decision: Decision | 'open';
  readonly amount: bigint | null;
  readonly released: bigint | null;
  readonly shares: bigint | null;
  /** those shares by receiver (`releasedSplit`; null: none recorded) */
  readonly split: ReadonlyMap<string, bigint> | null;
}

/**
 * The decision in force at the cut of each discrepancy: the last acceptance at or before it, unless revoked since
 * ('open'). An accepted discrepancy stays held when that decision says withhold; pay and write_off release it, up
 * to the amount it was taken on. Their streams are read a few thousand at a time (a 1M month holds tens of
 * thousands of discrepancies: a read each was a round trip each).
 */
async function decisionsAt(
  store: EventStore,
  ids: readonly string[],
  cut: Position,
): Promise<Map<string, DecisionAtCut>> {
  const out = new Map<string, DecisionAtCut>();
  for (let i = 0; i < ids.length; i += STREAMS_PER_READ) {
    const chunk = ids.slice(i, i + STREAMS_PER_READ);
    const events = await readStreamsAt(store, chunk.map(discrepancyStream), cut);
    for (const id of chunk) {
      let at: DecisionAtCut = NO_DECISION;
      for (const e of events.get(discrepancyStream(id)) ?? []) {
        if (isEvent(DiscrepancyAccepted, e)) {
          const data = dataOf(DiscrepancyAccepted, e);
          at = {
            decision: data.decision ?? 'pay',
            amount: data.amount === undefined ? null : BigInt(data.amount),
            released: data.released === undefined ? null : BigInt(data.released),
            shares: data.releasedShares === undefined ? null : BigInt(data.releasedShares),
            split: data.releasedSplit
              ? new Map(Object.entries(data.releasedSplit).map(([n, v]) => [n, BigInt(v)]))
              : null,
          };
        } else if (isEvent(DiscrepancyAcceptanceRevoked, e)) at = NO_DECISION;
      }
      out.set(id, at);
    }
  }
  return out;
}

const STREAMS_PER_READ = 2000;
const NO_DECISION: DecisionAtCut = { decision: 'open', amount: null, released: null, shares: null, split: null };

/** The discrepancies of holding types, or none when the reconciliation was never built (logged by the caller). */
async function holdingDiscrepancies(sql: Sql, types: readonly string[]): Promise<DiscRow[] | null> {
  try {
    return await sql<DiscRow[]>`
      select id::text, type, status, detected_by_event::text, resolved_by_event::text, pos_id, payment_id, method,
             receiver_name, order_id, currency, occurred_at, "values", amount_in_doubt, amount_in_doubt_now,
             past_resolutions::text[]
      from ${sql.unsafe(await allDiscrepancies(sql))}
      where type = any(${types as string[]}::text[]) and status in ('open', 'accepted', 'resolved')
        and payment_id is not null
      order by id`;
  } catch (e) {
    if (isSqlState(e, 'undefinedTable') || (e as { code?: string }).code === '3F000') return null;
    throw e;
  }
}

/**
 * Positions of the events that detected and resolved discrepancies, read from the PostgreSQL store's table;
 * undefined with another store (EventStoreDB), whose events cannot be looked up by id.
 */
async function eventPositions(sql: Sql, ids: readonly string[]): Promise<Map<string, Position> | undefined> {
  const [t] = await sql<{ ok: boolean }[]>`select to_regclass('es_events') is not null as ok`;
  if (!t?.ok) return undefined;
  const rows = ids.length
    ? await sql<{ id: string; commit: string; prepare: string }[]>`
        select event_id::text as id, transaction_id::text as commit, global_position::text as prepare
        from es_events where event_id = any(${ids}::uuid[])`
    : [];
  return new Map(rows.map((r) => [r.id, { commit: BigInt(r.commit), prepare: BigInt(r.prepare) }]));
}

/**
 * Whether a discrepancy stood unresolved at the cut: detected by an event at or before it, and not resolved by
 * one at or before it, nor then within a resolution the rule ended after it by finding it again. A statement cut at a position never issued before so holds what was in doubt then, not
 * what is in doubt now (a replay, or the same cut issued later, gives the same statement). Without event
 * positions (another store) the discrepancies are taken as they are now.
 */
function standingAt(r: DiscRow, cut: Position, positions: Map<string, Position> | undefined): boolean {
  // at or before the cut: true or false; undefined for an event the store does not hold (taken as it is now)
  const before = (id: string | null) => {
    const p = id ? positions?.get(id) : undefined;
    return p === undefined ? undefined : comparePositions(p, cut) <= 0;
  };
  if (before(r.detected_by_event) === false) return false;
  const past = r.past_resolutions ?? [];
  for (let i = 0; i + 1 < past.length; i += 2)
    if (before(past[i]!) === true && before(past[i + 1]!) === false) return false;
  if (r.status !== 'resolved') return true;
  return before(r.resolved_by_event) === false;
}

export interface HeldOptions {
  /** the end of the statement's period: what the payment adds to it is what is booked before (none: all) */
  readonly periodEnd?: Date;
  readonly policy?: HoldPolicy;
  /** other money in doubt (e.g. events held in quarantine), capped and held once like any discrepancy */
  readonly extra?: readonly HoldClaim[];
}

/**
 * A discrepancy's claim under the policy; none when its type holds nothing or its difference is immaterial.
 * `more`: what is in doubt beyond its (accepted, frozen) values since (excessOf), added to a difference.
 * `withheld`: the decision in force at the cut is withhold (a status of now would reword a cut read again after
 * a later decision, and call a later pay "withheld").
 */
export function claimOf(r: DiscRow, policy: HoldPolicy, more = 0n, withheld = false): HoldClaim | null {
  const rule = holdRuleOf(policy, r.type);
  if (rule === 'none') return null;
  let atMost: bigint | null = null;
  if (rule === 'difference') {
    const stated = differenceOf(r.type, r.values ?? {});
    atMost = stated === null && more === 0n ? null : (stated ?? 0n) + more;
    if (atMost === null || atMost === 0n || atMost < materialityOf(policy, r.currency ?? '')) return null;
  }
  const reason = reasonOf(r.type);
  return {
    id: r.id,
    type: r.type,
    reason: withheld ? `${reason} (reviewed: withheld)` : reason,
    posId: r.pos_id,
    paymentId: r.payment_id,
    orderId: r.order_id,
    occurredAt: r.occurred_at,
    receiverName: r.receiver_name,
    currency: rule === 'difference' ? r.currency : null,
    atMost,
  };
}

const bigOrNull = (v: bigint | string | null | undefined): bigint | null =>
  v === null || v === undefined ? null : BigInt(v);

/**
 * The money the rule puts in doubt now beyond the amount a decision was taken on (its event's `amount`; for one
 * that recorded none, the amount in doubt frozen with the row); 0 when there is no more (less asks nothing).
 * A decision covered at least the difference its frozen values hold by (differenceOf): a fee_mismatch holds the
 * widest of the merchant and customer fee differences while its amount in doubt reads the merchant fee alone, so
 * 6.00 apart on the customer fee, then 3.00 on the merchant fee, is no more than the 6.00 decided on.
 */
export function excessOf(r: DiscRow, accepted: bigint | null): bigint {
  const now = bigOrNull(r.amount_in_doubt_now);
  const amount = accepted ?? bigOrNull(r.amount_in_doubt) ?? 0n;
  const held = differenceOf(r.type, r.values ?? {}) ?? 0n;
  const decided = held > amount ? held : amount;
  return now === null || now <= decided ? 0n : now - decided;
}

/**
 * What a decision that released a discrepancy's money (pay, write off) leaves held: the excess (excessOf). The
 * person decided on the amount accepted, so only it is released: what came into doubt since is held again, as
 * a difference of the payment (at most that much, and no more than the payment adds), under the materiality of
 * a difference rule.
 */
export function excessClaimOf(r: DiscRow, accepted: bigint | null, policy: HoldPolicy): HoldClaim | null {
  const rule = holdRuleOf(policy, r.type);
  const excess = excessOf(r, accepted);
  if (rule === 'none' || excess === 0n) return null;
  if (rule === 'difference' && excess < materialityOf(policy, r.currency ?? '')) return null;
  return {
    id: r.id,
    type: r.type,
    reason: `${reasonOf(r.type)}${MORE_IN_DOUBT}`,
    posId: r.pos_id,
    paymentId: r.payment_id,
    orderId: r.order_id,
    occurredAt: r.occurred_at,
    receiverName: r.receiver_name,
    currency: r.currency,
    atMost: excess,
  };
}

/** Appended to the reason of what a release left held (translated: src/export/i18n/labels.ts). */
export const MORE_IN_DOUBT = ' (reviewed: released as accepted; more in doubt since)';

/** The nets of the claimed payments per receiver and currency, booked before the period's end, at the cut. */
async function paymentNets(
  sql: Sql,
  claims: readonly HoldClaim[],
  cut: Position,
  periodEnd: Date | undefined,
): Promise<PaymentNet[]> {
  if (claims.length === 0) return [];
  const pairs = [...new Set(claims.map((c) => JSON.stringify([c.posId, c.paymentId])))].map((k) => JSON.parse(k));
  return sql<PaymentNet[]>`
    with d as (select x->>0 as pos_id, x->>1 as payment_id from jsonb_array_elements(${JSON.stringify(pairs)}::text::jsonb) x)
    select e.pos_id as "posId", e.payment_id as "paymentId", e.receiver_name as "receiverName", e.currency,
           sum(e.net)::int8 as net
    from d join recon.journal_entries e on e.pos_id = d.pos_id and e.payment_id = d.payment_id
    where e.receiver_name is not null
      and (e.commit_pos, e.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)
      and (${periodEnd ?? null}::timestamptz is null or e.booked_at < ${periodEnd ?? null}::timestamptz)
    group by 1, 2, 3, 4`;
}

/** Every held item at the cut, sorted by receiver, currency, discrepancy id; null: no reconciliation built. */
export async function heldAt(
  sql: Sql,
  store: EventStore,
  cut: Position,
  opts: HeldOptions = {},
): Promise<HeldItem[] | null> {
  const policy = opts.policy ?? holdPolicyFromEnv();
  const found = await holdingDiscrepancies(sql, holdingTypesOf(policy));
  if (found === null && !opts.extra?.length) return null;
  // money of a payment whose event a projection set aside is in doubt: held whole, like a missing record
  const rows = found ?? [];
  const positions = await eventPositions(
    sql,
    rows.flatMap((r) =>
      [r.detected_by_event, r.resolved_by_event, ...(r.past_resolutions ?? [])].filter(
        (id): id is string => id !== null,
      ),
    ),
  );
  const claims: HoldClaim[] = [...(opts.extra ?? []), ...(await quarantineClaimsAt(sql, cut))];
  const standing = rows.filter((r) => standingAt(r, cut, positions));
  const decisions = await decisionsAt(
    store,
    standing.map((r) => r.id),
    cut,
  );
  const paid: Paid[] = [];
  for (const r of standing) {
    // accepted at or before the cut: held unless the decision in force releases it (pay, write off), and then
    // what is in doubt beyond the amount it released; withheld, its frozen difference and any more since
    const { decision, amount, released, shares, split } = decisions.get(r.id)!;
    const releases = decision === 'pay' || decision === 'write_off';
    // (frozen only while accepted: a row opened again since holds its values as they are now)
    const more = decision === 'withhold' && r.status === 'accepted' ? excessOf(r, amount) : 0n;
    const c = releases ? excessClaimOf(r, amount, policy) : claimOf(r, policy, more, decision === 'withhold');
    // a pay or write-off that recorded the payment it released: its growth since is weighed against the journal
    if (releases && released !== null && holdRuleOf(policy, r.type) === 'payment' && onSale(r))
      // weighed in the journal's measure where recorded; a doubt of the whole payment is the growth itself
      paid.push({ r, seen: split ?? shares ?? released, excess: c, whole: amount !== null && amount >= released });
    else if (c) claims.push(c);
  }
  const grown = await paymentGrowth(
    sql,
    paid.map((p) => p.r),
    cut,
    opts.periodEnd,
  );
  claims.push(...paidClaimsOf(paid, grown));
  return allocateHolds(claims, await paymentNets(sql, claims, cut, opts.periodEnd));
}

/** A pay or write-off that recorded the payment it released: what it saw, its excess, whether a whole doubt. */
type Paid = { r: DiscRow; seen: Seen; excess: HoldClaim | null; whole: boolean };

/**
 * What the paid discrepancies leave held: their growths, each held once (heldOnce), with their excess beside. The
 * excess of a doubt of the whole payment with no growth booked is the operation grown as a source states it, the
 * same money under every such decision on it (its amount and its status): held once too, the largest.
 */
function paidClaimsOf(paid: readonly Paid[], grown: Map<string, Map<string, bigint>>): HoldClaim[] {
  const own = paid.map((p) => growthsOf(p.r.receiver_name, grown.get(growthKeyOf(p.r)) ?? new Map(), p.seen));
  const held = heldOnce(paid.map((p, i) => ({ id: p.r.id, key: growthKeyOf(p.r), growths: own[i]! })));
  const stated = heldOnce(
    paid.map((p, i) => ({
      id: p.r.id,
      key: operationKeyOf(p.r),
      growths:
        p.whole && own[i]!.length === 0 && p.excess?.atMost ? [[p.r.receiver_name, p.excess.atMost] as const] : [],
    })),
  );
  return paid.flatMap((p, i) => {
    const once = stated[i]![0];
    if (once) return once[1] > 0n ? [{ ...p.excess!, atMost: once[1] }] : [];
    return growthClaimsOf(p.r, own[i]!, held[i]!, p.excess, p.whole);
  });
}

/** Appended to the reason of a payment grown since its review released it (translated: src/export/i18n/labels.ts). */
export const PAYMENT_CHANGED = ' (reviewed: paid as it was then; the payment changed since it was reviewed)';

/**
 * What a pay or write-off under a `payment` rule leaves held: the payment's shares now above those it released
 * (`own`, payment-growth.ts `growthsOf`; of them those `held` gives it, heldOnce), each receiver's on its own
 * statement, with the excess in doubt (excessClaimOf) beside it, or the larger of the two where the doubt decided
 * on was the whole payment (`whole`: its excess is that same growth); never more than the payment adds
 * (allocateHolds). A payment smaller now holds nothing more: the journal already pays less, nothing asked back.
 */
export function growthClaimsOf(
  r: DiscRow,
  own: readonly (readonly [string | null, bigint])[],
  held: readonly (readonly [string | null, bigint])[],
  excess: HoldClaim | null,
  whole = false,
): HoldClaim[] {
  if (own.length === 0) return excess ? [excess] : [];
  const more = excess?.atMost ?? 0n;
  const total = own.reduce((a, [, g]) => a + g, 0n);
  // the excess rides on the first receiver's claim (a claim per discrepancy and receiver)
  let extra = !whole ? more : more > total ? more - total : 0n;
  const out: HoldClaim[] = [];
  for (const [receiverName, g] of held) {
    if (g === 0n) continue;
    out.push({
      id: r.id,
      type: r.type,
      reason: `${reasonOf(r.type)}${PAYMENT_CHANGED}`,
      posId: r.pos_id,
      paymentId: r.payment_id,
      orderId: r.order_id,
      occurredAt: r.occurred_at,
      receiverName,
      currency: r.currency,
      atMost: g + extra,
    });
    extra = 0n;
  }
  if (extra > 0n && excess) out.push({ ...excess, atMost: extra });
  return out;
}

async function quarantineClaimsAt(sql: Sql, cut: Position): Promise<HoldClaim[]> {
  return (await quarantinedPaymentsAt(sql, cut)).map((q) => ({
    id: `${QUARANTINE_ID}${q.eventId}`,
    type: 'quarantined_event',
    reason: reasonOf('quarantined_event'),
    posId: q.posId,
    paymentId: q.paymentId,
    orderId: null,
    occurredAt: null,
    receiverName: null,
    currency: null,
    atMost: null,
  }));
}
