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
  readonly occurred_at: Date | null;
};

/**
 * Growth is of the payment's sales, weighed for a decision on one of them or on the authorisation they capture (its
 * amount is the payment's, its money booked by the captures); a refund or chargeback grown pays out less, nothing
 * unseen (none: the payment's own).
 */
export const onSale = (r: DiscRow) => r.method === null || r.method === 'auth' || SALES.includes(r.method);
/** The methods the journal books as sales (src/journal-rules.ts `settlementOf`). */
const SALES = ['purchase', 'capture', 'recurrent'];

/**
 * The instant of the one operation a decision released, or '' for the whole payment: a capture is a part of its
 * payment (the others are captures of their own, released or held on their own), so its release is weighed
 * against that capture's entries alone (booked at its time); a purchase, recurrent charge or authorisation is the
 * payment, weighed against all its sales.
 */
const partOf = (r: Pick<DiscRow, 'method' | 'occurred_at'>) =>
  r.method === 'capture' && r.occurred_at !== null ? r.occurred_at.toISOString() : '';

export const growthKeyOf = (r: Pick<DiscRow, 'pos_id' | 'payment_id' | 'currency' | 'method' | 'occurred_at'>) =>
  [r.pos_id, r.payment_id, r.currency ?? '', partOf(r)].join('\u001f');

/** The operation a discrepancy concerns, in its currency: what its sources state is of it alone. */
export const operationKeyOf = (r: DiscRow) =>
  [r.pos_id, r.payment_id, r.currency ?? '', r.method ?? '', r.occurred_at?.toISOString() ?? ''].join('\u001f');

/**
 * The amount of each paid payment (or paid capture, partOf) at the cut in the journal's measure (its decision's
 * `releasedShares`), by receiver: the receivers' shares of its sales in its currency (its refunds' entries, under
 * its id too, are no growth), booked before the period's end.
 */
export async function paymentGrowth(
  sql: Sql,
  rows: readonly DiscRow[],
  cut: Position,
  periodEnd: Date | undefined,
): Promise<Map<string, Map<string, bigint>>> {
  if (rows.length === 0) return new Map();
  const keys = [...new Set(rows.map((r) => JSON.stringify([r.pos_id, r.payment_id, r.currency ?? '', partOf(r)])))];
  const found = await sql<
    { posId: string; paymentId: string; currency: string; part: string; receiver: string; gross: string }[]
  >`
    with d as (select x->>0 as pos_id, x->>1 as payment_id, x->>2 as currency, x->>3 as part
               from jsonb_array_elements(${`[${keys.join(',')}]`}::text::jsonb) x)
    select d.pos_id as "posId", d.payment_id as "paymentId", d.currency, d.part, e.receiver_name as receiver,
           sum(e.share)::text as gross
    from d join recon.journal_entries e on e.pos_id = d.pos_id and e.payment_id = d.payment_id and e.currency = d.currency
    where e.receiver_name is not null and e.method = any(${SALES}::text[])
      and (d.part = '' or (e.method = 'capture' and e.booked_at = d.part::timestamptz))
      and (e.commit_pos, e.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)
      and (${periodEnd ?? null}::timestamptz is null or e.booked_at < ${periodEnd ?? null}::timestamptz)
    group by 1, 2, 3, 4, 5 order by 5`;
  const out = new Map<string, Map<string, bigint>>();
  for (const f of found) {
    const k = [f.posId, f.paymentId, f.currency, f.part].join('\u001f');
    if (!out.has(k)) out.set(k, new Map());
    out.get(k)!.set(f.receiver, BigInt(f.gross));
  }
  return out;
}

/** What a release saw of its payment: its receivers' shares by receiver, or in all (older: the sources' amount). */
export type Seen = ReadonlyMap<string, bigint> | bigint;

const sumOf = (m: ReadonlyMap<string, bigint>) => [...m.values()].reduce((a, x) => a + x, 0n);

/**
 * How much a paid payment grew above what its decision saw, by receiver (of the discrepancy's receiver, or every
 * one; `null`: all together, where the decision saw the sum alone), the receivers grown only.
 */
export function growthsOf(
  receiver: string | null,
  now: ReadonlyMap<string, bigint>,
  seen: Seen,
): (readonly [string | null, bigint])[] {
  const grown: (readonly [string | null, bigint])[] =
    typeof seen === 'bigint'
      ? [[receiver, sumOf(now) - seen]]
      : [...new Set([...now.keys(), ...seen.keys()])]
          .filter((n) => receiver === null || n === receiver)
          .sort()
          .map((n) => [n, (now.get(n) ?? 0n) - (seen.get(n) ?? 0n)]);
  return grown.filter(([, g]) => g > 0n);
}

/**
 * Each paid discrepancy's growths as it holds them: a payment's growth (of its sales, or of one capture, for one
 * receiver) under two decisions is one money, the same shares above what each saw, so it is held once, by the
 * decision that saw least of it (the largest growth; of equal ones, the first id), and the others hold 0 of it.
 */
export function heldOnce(
  paid: readonly { id: string; key: string; growths: readonly (readonly [string | null, bigint])[] }[],
): (readonly [string | null, bigint])[][] {
  const at = (key: string, n: string | null) => `${key}\u001f${n ?? ''}`;
  const by = new Map<string, { id: string; g: bigint }>();
  for (const p of paid)
    for (const [n, g] of p.growths) {
      const o = by.get(at(p.key, n));
      if (!o || g > o.g || (g === o.g && p.id < o.id)) by.set(at(p.key, n), { id: p.id, g });
    }
  return paid.map((p) => p.growths.map(([n, g]) => [n, by.get(at(p.key, n))!.id === p.id ? g : 0n] as const));
}
