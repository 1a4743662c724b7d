import type { Sql } from '../db/connect';
import { TransactionCounterBehindError } from './errors';
import type { EventStore } from './types';

/**
 * The PostgreSQL backend's positions take their commit part from transaction ids, so the server's counter
 * must stay above every stored event's (migration 0600 refuses appends otherwise). A database restored
 * from a logical dump into another server can break that; these check it and move the counter on.
 */

export interface TransactionCounter {
  /** commit part of the last stored event's position (null: no events) */
  readonly lastCommit: bigint | null;
  /** the server's first transaction id not yet assigned */
  readonly nextTransaction: bigint;
  /** false: appends are refused until the counter is advanced past lastCommit */
  readonly ok: boolean;
}

export async function readTransactionCounter(sql: Sql): Promise<TransactionCounter> {
  const [row] = await sql<{ last: string | null; next: string }[]>`
    select (select e.transaction_id::text from es_events e order by e.transaction_id desc limit 1) as last,
           pg_snapshot_xmax(pg_current_snapshot())::text as next`;
  const lastCommit = row!.last === null ? null : BigInt(row!.last);
  const nextTransaction = BigInt(row!.next);
  return { lastCommit, nextTransaction, ok: lastCommit === null || lastCommit < nextTransaction };
}

/**
 * Moves the counter past the last stored event by committing empty transactions (asynchronously, server
 * side, `step` at a time so that progress shows and a signal stops it between steps). Harmless when the
 * counter is already past. Ids spent this way are ordinary transaction ids (autovacuum's freezing counts
 * them like any others).
 */
export async function advanceTransactionCounter(
  sql: Sql,
  opts: { step?: number; signal?: AbortSignal; onProgress?: (p: { next: bigint; target: bigint }) => void } = {},
): Promise<{ before: TransactionCounter; after: TransactionCounter }> {
  const step = BigInt(opts.step ?? 1_000_000);
  const before = await readTransactionCounter(sql);
  if (before.lastCommit === null) return { before, after: before };
  const target = before.lastCommit;
  let next = before.nextTransaction;
  while (next <= target) {
    opts.signal?.throwIfAborted();
    const stepTarget = next + step - 1n < target ? next + step - 1n : target;
    await sql`call es_advance_transaction_counter(${stepTarget.toString()}::xid8)`;
    next = (await readTransactionCounter(sql)).nextTransaction;
    opts.onProgress?.({ next, target });
  }
  return { before, after: await readTransactionCounter(sql) };
}

/**
 * Readiness of a webhook receiver: the store can take appends now. PostgreSQL: reachable and its counter
 * above the stored events (so a load balancer stops routing webhooks to a restored store that refuses
 * them); EventStoreDB: reachable, and so is PostgreSQL (the read models).
 */
export function storeReadiness(store: EventStore, sql: Sql): () => Promise<void> {
  return async () => {
    if (store.backend === 'postgres') {
      const c = await readTransactionCounter(sql);
      if (!c.ok)
        throw new TransactionCounterBehindError(
          `the event store refuses appends: its transaction counter (${c.nextTransaction}) is behind the last stored event (${c.lastCommit}); run recon store advance-xid`,
        );
      return;
    }
    await store.headPosition();
    await sql`select 1`;
  };
}
