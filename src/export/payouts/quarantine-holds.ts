import type { Sql } from '../../db/connect';
import type { Position } from '../../store/types';

/** A payment one of whose events a live projection set aside. */
export interface QuarantinedPayment {
  readonly eventId: string;
  readonly posId: string;
  readonly paymentId: string;
}

/**
 * The payments with an event a live projection set aside (projection_quarantine, migration 2200) at or before
 * the cut: their money is in doubt, since the read models do not show all of it (holds.ts holds it until
 * `recon quarantine retry` applies the event). Other streams (bank entries, orders) are no payment's; the
 * nightly report and `/readyz` show them.
 */
export async function quarantinedPaymentsAt(sql: Sql, cut: Position): Promise<QuarantinedPayment[]> {
  if (!(await quarantineExists(sql))) return [];
  const set = await sql<{ event_id: string; stream: string }[]>`
    select distinct on (q.event_id) q.event_id::text, q.stream
    from projection_quarantine q join projection_builds b on b.schema_name = q.schema_name
    where b.status = 'live' and q.status = 'quarantined' and q.stream like 'payment-%'
      and (q.commit_pos, q.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)
    order by q.event_id`;
  return paymentsOfStreams(sql, set);
}

/** The payments of set-aside events named by id, whatever their state now (a statement issued again). */
export async function quarantinedPaymentsOf(sql: Sql, eventIds: readonly string[]): Promise<QuarantinedPayment[]> {
  if (eventIds.length === 0 || !(await quarantineExists(sql))) return [];
  const set = await sql<{ event_id: string; stream: string }[]>`
    select distinct on (event_id) event_id::text, stream from projection_quarantine
    where event_id = any(${eventIds}::uuid[]) and stream like 'payment-%' order by event_id`;
  return paymentsOfStreams(sql, set);
}

async function quarantineExists(sql: Sql): Promise<boolean> {
  const t = await sql<{ t: string | null }[]>`select to_regclass('public.projection_quarantine')::text as t`;
  return Boolean(t[0]?.t);
}

/**
 * payment-<posId>-<paymentId>: either part may hold a dash, so every split is a candidate and the journal,
 * which knows the real pairs, decides.
 */
async function paymentsOfStreams(
  sql: Sql,
  set: readonly { event_id: string; stream: string }[],
): Promise<QuarantinedPayment[]> {
  const candidates = set.flatMap(({ stream, event_id }) => {
    const rest = stream.slice('payment-'.length);
    const out: [string, string, string][] = [];
    for (let i = rest.indexOf('-', 1); i >= 0; i = rest.indexOf('-', i + 1))
      out.push([rest.slice(0, i), rest.slice(i + 1), event_id]);
    return out;
  });
  if (candidates.length === 0) return [];
  return sql<QuarantinedPayment[]>`
    with c as (select x->>0 as pos_id, x->>1 as payment_id, x->>2 as event_id
               from jsonb_array_elements(${JSON.stringify(candidates)}::text::jsonb) x)
    select distinct c.event_id as "eventId", c.pos_id as "posId", c.payment_id as "paymentId"
    from c where exists (select 1 from recon.journal_entries e where e.pos_id = c.pos_id and e.payment_id = c.payment_id)
    order by 1, 2, 3`;
}
