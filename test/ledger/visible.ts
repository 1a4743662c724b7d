import type { Sql } from '../../src/db/connect';
import { comparePositions, type EventStore } from '../../src/store/types';

/**
 * readAll shows an event once no older transaction is running on the server (in any of its databases: the
 * other test files run beside this one). Waits until every event appended so far is visible.
 */
export async function waitVisible(sql: Sql, store: EventStore): Promise<void> {
  const [last] = await sql<{ commit: string | null; prepare: bigint | null }[]>`
    select transaction_id::text as commit, global_position as prepare from es_events order by transaction_id desc, global_position desc limit 1`;
  if (!last?.commit) return;
  const target = { commit: BigInt(last.commit), prepare: last.prepare! };
  for (let i = 0; i < 800; i++) {
    const head = await store.headPosition();
    if (head && comparePositions(head, target) >= 0) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('appended events did not become visible within 20 s');
}
