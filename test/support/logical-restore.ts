import { contentHash } from '../../src/store/prepare';
import type { Position } from '../../src/store/types';
import { ev } from '../store/contract';
import type { TestDatabase } from './db';

/**
 * Leaves the database as a logical restore into another server would (docs/store.md, "Backups and
 * restores"): an event whose transaction id is `ahead` above the server's counter. The default is out of
 * reach of anything the test files do with the shared counter; a test that advances past a smaller gap
 * holds withTransactionCounterLock (./xid-lock.ts) from storing it to its last assertion.
 */
export async function storeEventAheadOfCounter(db: TestDatabase, ahead = 10n ** 12n): Promise<Position> {
  const restored = ev('restored', 0, { note: 'from a dump' });
  const [row] = await db.sql<{ commit: string; prepare: bigint }[]>`
    insert into es_events (transaction_id, event_id, stream_id, stream_revision, type, version, data, content_hash)
    values ((pg_snapshot_xmax(pg_current_snapshot())::text::numeric + ${ahead.toString()}::numeric)::text::xid8,
            ${restored.id}, 'restored', 0, ${restored.type}, 1, ${db.sql.json(restored.data as never)}, ${contentHash(restored)})
    returning transaction_id::text as commit, global_position as prepare`;
  await db.sql`insert into es_streams (stream_id, revision) values ('restored', 0)`;
  return { commit: BigInt(row!.commit), prepare: row!.prepare };
}
