import type { Sql } from '../../db/connect';
import type { Position } from '../../store/types';

/**
 * What a payment paid on a decision has grown to (docs/discrepancies.md, "A payment paid on a decision, grown
 * since"), read from the journal at a statement's cut for holds.ts `growthClaimsOf`.
 */

/** The fields of a discrepancy's row (holds.ts `DiscRow`) the growth of its payment is read by. */
type DiscRow = {
  readonly pos_id: string;
  readonly payment_id: string;
  readonly currency: string | null;
  readonly method: string | null;
};

/**
 * Growth is of the payment's sales, weighed for a decision on one of them or on the authorisation they capture (its
 * amount is the payment's, its money booked by the captures); a refund or chargeback grown pays out less, nothing
 * unseen (none: the payment's own).
 */
export const onSale = (r: DiscRow) => r.method === null || r.method === 'auth' || SALES.includes(r.method);
/** The methods the journal books as sales (src/journal-rules.ts `settlementOf`). */
const SALES = ['purchase', 'capture', 'recurrent'];

export const growthKeyOf = (r: Pick<DiscRow, 'pos_id' | 'payment_id' | 'currency'>) =>
  [r.pos_id, r.payment_id, r.currency ?? ''].join('\u001f');

/**
 * The amount of each paid payment at the cut in the journal's measure (its decision's `releasedShares`), by
 * receiver: the receivers' shares of its sales in its currency (its refunds' entries, under its id too, are no
 * growth), booked before the period's end.
 */
export async function paymentGrowth(
  sql: Sql,
  rows: readonly DiscRow[],
  cut: Position,
  periodEnd: Date | undefined,
): Promise<Map<string, Map<string, bigint>>> {
  if (rows.length === 0) return new Map();
  const keys = [...new Set(rows.map((r) => JSON.stringify([r.pos_id, r.payment_id, r.currency ?? ''])))];
  const found = await sql<{ posId: string; paymentId: string; currency: string; receiver: string; gross: string }[]>`
    with d as (select x->>0 as pos_id, x->>1 as payment_id, x->>2 as currency
               from jsonb_array_elements(${`[${keys.join(',')}]`}::text::jsonb) x)
    select e.pos_id as "posId", e.payment_id as "paymentId", e.currency, e.receiver_name as receiver,
           sum(e.share)::text as gross
    from d join recon.journal_entries e on e.pos_id = d.pos_id and e.payment_id = d.payment_id and e.currency = d.currency
    where e.receiver_name is not null and e.method = any(${SALES}::text[])
      and (e.commit_pos, e.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)
      and (${periodEnd ?? null}::timestamptz is null or e.booked_at < ${periodEnd ?? null}::timestamptz)
    group by 1, 2, 3, 4 order by 4`;
  const out = new Map<string, Map<string, bigint>>();
  for (const f of found) {
    const k = growthKeyOf({ pos_id: f.posId, payment_id: f.paymentId, currency: f.currency });
    if (!out.has(k)) out.set(k, new Map());
    out.get(k)!.set(f.receiver, BigInt(f.gross));
  }
  return out;
}
