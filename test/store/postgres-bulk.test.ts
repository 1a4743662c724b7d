import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { BulkEvent, EventStore } from '../../src/store/types';
import { comparePositions } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { readAllEvents } from './contract';
import { batchesOf, bulkAppendCases, interleaved } from './contract-bulk';

/**
 * The PostgreSQL bulk append across many chunks (a chunk of a few hundred bytes, so every case of the
 * contract crosses chunk boundaries: repeats and stored ids met in a later chunk than the first), and
 * what only PostgreSQL promises: positions in the order given across streams, nothing visible before
 * the whole bulk is.
 */
describe('postgres appendBulk in small chunks', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql, { bulkChunkBytes: 600 });
  });
  afterAll(async () => db?.drop());
  const s = () => `bulk-${randomUUID()}`;

  bulkAppendCases(() => store, s);

  it('gives positions in the order given, across streams', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 50);
    await store.appendBulk(batchesOf(events, 3));
    const read = (await readAllEvents(store)).filter((e) => e.stream === a || e.stream === b);
    expect(read.map((e) => e.id)).toEqual(events.map((e) => e.event.id));
    for (let i = 1; i < read.length; i++) expect(comparePositions(read[i - 1]!.position, read[i]!.position)).toBe(-1);
  });

  it('shows a follower nothing of a bulk until all of it is in', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 40);
    const head = await store.headPosition();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let reached!: () => void;
    const midway = new Promise<void>((r) => {
      reached = r;
    });
    async function* source(): AsyncGenerator<BulkEvent[]> {
      yield* batchesOf(events.slice(0, 30), 3);
      reached();
      await held;
      yield* batchesOf(events.slice(30), 3);
    }
    const done = store.appendBulk(source());
    await midway;
    // several chunks are in es_events by now, inside the bulk's transaction
    await new Promise((r) => setTimeout(r, 200));
    expect(await store.readStream(a)).toEqual([]);
    expect(await store.readAll(head)).toEqual([]);
    release();
    await done;
    expect((await store.readAll(head, { maxCount: 100 })).map((e) => e.id)).toEqual(events.map((e) => e.event.id));
  });
});
