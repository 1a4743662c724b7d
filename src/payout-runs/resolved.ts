import type { Sql } from '../db/connect';
import { isSqlState } from '../db/errors';
import { allDiscrepancies } from '../reconciliation/discrepancy-queries';

/**
 * Which of the given discrepancies the reconciliation finds resolved now (the sources agree), as its read model
 * stands. A decision to pay held money, revoked once the sources came to agree, puts nothing back in doubt: an
 * accepted discrepancy is frozen, and its revocation lets the reconciliation resolve it at once. Such a one can
 * no longer be decided (ALREADY_RESOLVED) and no statement holds it again, so a run that read only the revocation
 * would leave the money it released out for ever (inputs.ts `decisionNow`).
 */
export type ResolvedNow = ((ids: readonly string[]) => Promise<ReadonlySet<string>>) & {
  /**
   * Which of them it finds open now (in doubt): one a statement released as resolved, put in doubt again by a
   * later report, holds money no statement holds yet (plan.ts `releasesInDoubt`). Absent: none known.
   */
  readonly openNow?: (ids: readonly string[]) => Promise<ReadonlySet<string>>;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The ones of `ids` in `status` in the read models; none while the reconciliation was never built. */
async function withStatus(sql: Sql, ids: readonly string[], status: 'resolved' | 'open'): Promise<Set<string>> {
  const uuids = [...new Set(ids.filter((id) => UUID.test(id)))];
  if (uuids.length === 0) return new Set();
  try {
    const rows = await sql<{ id: string }[]>`
      select id::text from ${sql.unsafe(await allDiscrepancies(sql))}
      where id = any(${uuids}::uuid[]) and status = ${status}`;
    return new Set(rows.map((r) => r.id));
  } catch (e) {
    if (isSqlState(e, 'undefinedTable') || (e as { code?: string }).code === '3F000') return new Set();
    throw e;
  }
}

/** `ResolvedNow` (and `openNow`) from the read models; none while the reconciliation was never built. */
export function resolvedNowOf(sql: Sql): ResolvedNow {
  return Object.assign((ids: readonly string[]) => withStatus(sql, ids, 'resolved'), {
    openNow: (ids: readonly string[]) => withStatus(sql, ids, 'open'),
  });
}
