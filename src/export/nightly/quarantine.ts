import type { Sql } from '../../db/connect';

/**
 * The report's lines on events the projections set aside (recon.quarantined_events, docs/reliability.md): how
 * many wait per read model, since when, and the first one's error, so that whoever reads the report in the
 * morning knows a figure may be missing something, and which money is held for it.
 */
export async function quarantineFacts(sql: Sql): Promise<Array<readonly [string, string | number]>> {
  const [view] = await sql<{ t: string | null }[]>`select to_regclass('recon.quarantined_events')::text as t`;
  if (!view?.t) return [];
  const rows = await sql<{ projection: string; n: number; oldest: Date; first: string }[]>`
    select projection, count(*)::int as n, min(first_tried_at) as oldest,
      (array_agg(event_type || ' ' || event_id || ': ' || left(error, 200) order by position))[1] as first
    from recon.quarantined_events where status = 'quarantined' group by projection order by projection`;
  const total = rows.reduce((s, r) => s + r.n, 0);
  return [
    ['Events set aside by the read models (recon quarantine list; money of their payments is held)', total],
    ...rows.map(
      (r) => [`Set aside by ${r.projection}`, `${r.n} since ${r.oldest.toISOString()}; first: ${r.first}`] as const,
    ),
  ];
}
