import type { Tx } from './projection';

/**
 * One lock per projection name: a transaction-scoped advisory lock, so that two runners never work on the
 * same projection at once. Creating or dropping builds waits for it; applying a batch and going live try
 * it and skip a projection another runner holds (it carries on there).
 */

// Advisory lock class of projection locks (the second key is hashtext(name)).
const LOCK_CLASS = 7315;

/** Waits for the projection's lock (held until the transaction ends). */
export async function lockBlocking(tx: Tx, name: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${name}))`;
}

/** Takes the projection's lock when free; false when another runner holds it. */
export async function tryLock(tx: Tx, name: string): Promise<boolean> {
  const [r] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(${name})) as ok`;
  return r?.ok === true;
}

/**
 * Before a batch: tries the projection's lock and, only when taken, locks the build's row and reads its
 * checkpoint, so a runner that finds the projection busy never waits for the other one. One statement
 * (fewer round trips per batch) that also lets the commit skip waiting for the disk: a read model is
 * rebuilt from the log, and losing the last commits in a server crash only moves the checkpoint back
 * with the data (same transaction).
 */
export async function tryLockForBatch(
  tx: Tx,
  name: string,
  schema: string,
): Promise<{ ok: boolean; checkpoint: string | null; status: string | null }> {
  const [row] = await tx<{ ok: boolean; checkpoint: string | null; status: string | null }[]>`
    with l as materialized (
      select pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(${name})) as ok, set_config('synchronous_commit', 'off', true))
    select l.ok, b.checkpoint, b.status from l
    left join lateral (select checkpoint, status from projection_builds where schema_name = ${schema} and l.ok for update) b on true`;
  return row ?? { ok: false, checkpoint: null, status: null };
}
