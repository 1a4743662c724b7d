import { describe, expect, it } from 'vitest';
import { catchUpOperationsSeen } from '../../src/ingest/operations-seen';
import { createPostgresEventStore } from '../../src/store/postgres';
import { comparePositions, parsePosition } from '../../src/store/types';
import { createTestDatabase, useTestStore } from '../support/db';
import { registerRecords, seenPayments } from './operations-seen-support';
import { capturingLogger } from './helpers';

/** The healing index's checkpoint check (src/ingest/operations-seen.ts) for a checkpoint made before migration 0800, with no event at its position (it was kept). */
const POS = 'pos-r2-ops';
const { appendRecord } = registerRecords(POS);

describe('operations seen: a checkpoint from before migration 0800', () => {
  const fx = useTestStore();
  const payments = () => seenPayments(fx.db.sql);

  it('a checkpoint from before migration 0800 whose position holds no event in the store is read again from the start', async () => {
    await appendRecord(fx.db, fx.store, 'p-lost');
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    expect(await payments()).toEqual(['p-lost']);
    // as migration 0800 leaves a checkpoint made before it
    await fx.db.sql`update ingest_checkpoints set event_id = null where name = 'ingest_operations_seen'`;
    const [cp] = await fx.db.sql<
      { position: string }[]
    >`select position from ingest_checkpoints where name = 'ingest_operations_seen'`;

    // the event store alone restored to an older backup (without p-lost) and appended to since
    const restored = await createTestDatabase();
    try {
      const restoredStore = createPostgresEventStore(restored.sql);
      await appendRecord(restored, restoredStore, 'p-new');
      expect(comparePositions((await restoredStore.headPosition())!, parsePosition(cp!.position))).toBe(1);
      expect(await restoredStore.readAt(parsePosition(cp!.position))).toBeUndefined();

      const { log, lines } = capturingLogger();
      await catchUpOperationsSeen(fx.db.sql, restoredStore, { log });
      expect.soft(lines.some((l) => l.includes('read again from the start'))).toBe(true);
      expect(await payments()).toEqual(['p-new']);
    } finally {
      await restored.drop();
    }
  });
});
