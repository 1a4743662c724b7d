import { describe, expect, it } from 'vitest';
import { catchUpOperationsSeen } from '../../src/ingest/operations-seen';
import { parsePosition } from '../../src/store/types';
import { useTestStore } from '../support/db';
import { registerRecords, seenPayments } from './operations-seen-support';
import { capturingLogger } from './helpers';

const POS = 'pos-ops-seen';
const { appendRecord } = registerRecords(POS);

describe('operations seen (the healing index)', () => {
  const fx = useTestStore();

  const payments = () => seenPayments(fx.db.sql);

  it("reads itself again from the start when its checkpoint is past the store's head (the store restored or replaced)", async () => {
    await appendRecord(fx.db, fx.store, 'p-1');
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    expect(await payments()).toEqual(['p-1']);

    // as if the store had been restored to an older backup: the checkpoint is beyond everything it has,
    // and the table holds an operation the store no longer has
    await fx.db
      .sql`update ingest_checkpoints set position = '999999999999/999999999' where name = 'ingest_operations_seen'`;
    await fx.db
      .sql`insert into ingest_operations_seen (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;
    await appendRecord(fx.db, fx.store, 'p-2');

    const { log, lines } = capturingLogger();
    const read = await catchUpOperationsSeen(fx.db.sql, fx.store, { log });
    expect(read).toBe(2);
    expect(await payments()).toEqual(['p-1', 'p-2']);
    expect(lines.some((l) => l.includes('checkpoint past the event store'))).toBe(true);
    // and nothing more to do afterwards
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store, { log })).toBe(0);
  });

  it('reads itself again from the start when its checkpoint holds another event (the store restored and appended to since)', async () => {
    await catchUpOperationsSeen(fx.db.sql, fx.store);
    const [cp] = await fx.db.sql<
      { position: string; event_id: string | null }[]
    >`select position, event_id::text from ingest_checkpoints where name = 'ingest_operations_seen'`;
    expect((await fx.store.readAt(parsePosition(cp!.position)))?.id).toBe(cp!.event_id);

    // a checkpoint from before migration 0800 takes the id of the event at its position, and nothing is read again
    await fx.db.sql`update ingest_checkpoints set event_id = null where name = 'ingest_operations_seen'`;
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store)).toBe(0);
    const [recorded] = await fx.db.sql<
      { event_id: string | null }[]
    >`select event_id::text from ingest_checkpoints where name = 'ingest_operations_seen'`;
    expect(recorded!.event_id).toBe(cp!.event_id);

    // as if the store had been restored to an older backup and appended to past the checkpoint: another
    // event at the checkpoint's position, and the table holds an operation the store no longer has
    await fx.db
      .sql`update ingest_checkpoints set event_id = ${crypto.randomUUID()}::uuid where name = 'ingest_operations_seen'`;
    await fx.db
      .sql`insert into ingest_operations_seen (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;
    const { log, lines } = capturingLogger();
    const all = await fx.store.readAll(undefined, { maxCount: 100_000 });
    expect(await catchUpOperationsSeen(fx.db.sql, fx.store, { log })).toBe(all.length);
    expect(await payments()).toEqual(['p-1', 'p-2']);
    expect(lines.some((l) => l.includes(`the event at the checkpoint is ${cp!.event_id}, not`))).toBe(true);
  });
});
