import type { Sql } from '../db/connect';
import { isSqlState } from '../db/errors';
import { DiscrepancyAccepted, discrepancyStream } from '../events/audit-events';
import { dataOf, isEvent } from '../events/catalog';
import { allDiscrepancies } from '../reconciliation/discrepancy-queries';
import { HOLDING_TYPES } from '../reconciliation/discrepancy-types';
import { comparePositions, type EventStore, type Position } from '../store/types';

/**
 * Money held on the statements (docs/bank.md, "Payouts and holds"): a receiver's share of a payment under a
 * discrepancy that puts its amount or owner in doubt (HOLDING_TYPES), open, or accepted with the decision to
 * withhold it. The share is the receiver's net in the journal at the cut. A payment under two such
 * discrepancies is held once (by the first of them, by id).
 */

export interface HeldItem {
  /** the discrepancy the money is held for ('' for a receiver the directory does not know) */
  readonly discrepancyId: string;
  /** why, in plain words: statements leave the company */
  readonly reason: string;
  readonly receiverName: string;
  readonly currency: string;
  readonly amount: bigint;
}

const REASONS: Record<string, string> = {
  missing_in_report: "the payment is missing from the payment provider's register",
  status_mismatch: "the payment's status differs between the payment provider's reports",
  amount_mismatch: "the payment's amount differs between the payment provider's reports",
  split_mismatch: 'the shares of the split payment do not add up to the payment',
  unknown_sub_merchant: 'the receiver is not in the sub-merchant directory',
  duplicate: 'the payment is reported twice',
  payment_without_order: 'the payment matches no order of the marketplace',
  amount_differs_from_order: 'the payment is not for the amount ordered',
  split_differs_from_order: 'the split of the payment is not the split ordered',
  fee_above_contract: 'the fee charged is above the contract',
  fee_below_contract: 'the fee charged is below the contract',
};

export const UNREGISTERED_REASON = 'the receiver is not registered as a sub-merchant: nothing is paid until it is';

/** Every reason a held item can give (each is translated for statements: src/export/i18n/labels.ts). */
export const HOLD_REASON_TEXTS: readonly string[] = [
  ...Object.values(REASONS),
  UNREGISTERED_REASON,
  'under investigation',
];

interface DiscRow {
  id: string;
  type: string;
  status: string;
  detected_by_event: string | null;
  resolved_by_event: string | null;
  pos_id: string;
  payment_id: string;
  method: string | null;
  receiver_name: string | null;
}

/** An accepted discrepancy stays held when its acceptance (at or before the cut) says withhold. */
async function decisionAt(store: EventStore, id: string, cut: Position): Promise<'pay' | 'withhold' | 'open'> {
  const events = await store.readStream(discrepancyStream(id));
  const acc = events.find((e) => isEvent(DiscrepancyAccepted, e) && comparePositions(e.position, cut) <= 0);
  if (!acc) return 'open';
  return dataOf(DiscrepancyAccepted, acc).decision ?? 'pay';
}

/** The reconciliation's holding discrepancies, or none when it was never built (logged by the caller). */
async function holdingDiscrepancies(sql: Sql): Promise<DiscRow[] | null> {
  try {
    return await sql<DiscRow[]>`
      select id::text, type, status, detected_by_event::text, resolved_by_event::text, pos_id, payment_id, method,
             receiver_name
      from ${sql.unsafe(await allDiscrepancies(sql))}
      where type = any(${HOLDING_TYPES as string[]}::text[]) and status in ('open', 'accepted', 'resolved')
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
 * one at or before it. A statement cut at a position never issued before so holds what was in doubt then, not
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
  if (r.status !== 'resolved') return true;
  return before(r.resolved_by_event) === false;
}

/** Every held item at the cut, sorted by receiver, currency, discrepancy id; null: no reconciliation built. */
export async function heldAt(sql: Sql, store: EventStore, cut: Position): Promise<HeldItem[] | null> {
  const rows = await holdingDiscrepancies(sql);
  if (rows === null) return null;
  const positions = await eventPositions(
    sql,
    rows.flatMap((r) => [r.detected_by_event, r.resolved_by_event].filter((id): id is string => id !== null)),
  );
  const held: DiscRow[] = [];
  for (const r of rows) {
    if (!standingAt(r, cut, positions)) continue;
    // accepted at or before the cut: held unless the decision was to pay
    if ((await decisionAt(store, r.id, cut)) !== 'pay') held.push(r);
  }
  if (held.length === 0) return [];
  const nets = await sql<{ id: string; receiver: string; currency: string; net: bigint; key: string }[]>`
    with d as (
      select * from jsonb_to_recordset(${JSON.stringify(held)}::text::jsonb)
        as x(id text, pos_id text, payment_id text, method text, receiver_name text))
    select d.id, e.receiver_name as receiver, e.currency, sum(e.net)::int8 as net,
           e.pos_id || chr(31) || e.payment_id || chr(31) || e.method || chr(31) || e.receiver_name || chr(31) || e.currency as key
    from d join recon.journal_entries e
      on e.pos_id = d.pos_id and e.payment_id = d.payment_id and (d.method is null or e.method = d.method)
     and (d.receiver_name is null or e.receiver_name = d.receiver_name)
    where e.receiver_name is not null and (e.commit_pos, e.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)
    group by d.id, e.pos_id, e.payment_id, e.method, e.receiver_name, e.currency
    order by d.id, key`;
  const byId = new Map(held.map((h) => [h.id, h]));
  const claimed = new Set<string>();
  const out: HeldItem[] = [];
  for (const n of nets) {
    if (n.net <= 0n || claimed.has(n.key)) continue;
    claimed.add(n.key);
    const d = byId.get(n.id)!;
    const reason = REASONS[d.type] ?? 'under investigation';
    out.push({
      discrepancyId: n.id,
      reason: d.status === 'accepted' ? `${reason} (reviewed: withheld)` : reason,
      receiverName: n.receiver,
      currency: n.currency,
      amount: n.net,
    });
  }
  return out;
}

/**
 * Held items as a run recorded them (StatementIssued.payouts[].holds), with their reasons read again: a
 * statement issued again at the same cut holds what it held then, whatever was decided since.
 */
export async function recordedHeld(
  sql: Sql,
  holds: ReadonlyArray<readonly [string, string]>,
  receiverName: string,
  currency: string,
): Promise<HeldItem[]> {
  const ids = holds.map(([id]) => id).filter((id) => id !== '');
  // every view of discrepancies: an order's or a payout's holds money too
  const types = ids.length
    ? await sql<{ id: string; type: string }[]>`
        select id::text, type from ${sql.unsafe(await allDiscrepancies(sql))} where id = any(${ids}::uuid[])`
    : [];
  return holds.map(([id, amount]) => ({
    discrepancyId: id,
    reason:
      id === '' ? UNREGISTERED_REASON : (REASONS[types.find((t) => t.id === id)?.type ?? ''] ?? 'under investigation'),
    receiverName,
    currency,
    amount: BigInt(amount),
  }));
}
