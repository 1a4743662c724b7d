import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ev, eventStoreContract, readAllEvents } from './contract';
import type { RecordedEvent } from '../../src/store/types';
import { contentHash } from '../../src/store/prepare';

eventStoreContract('postgres', async () => {
  const db = await createTestDatabase();
  return { store: createPostgresEventStore(db.sql), teardown: () => db.drop() };
});

describe('postgres event store: commit order versus sequence order', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('a follower never skips an event whose transaction commits after later sequence numbers', async () => {
    const store = createPostgresEventStore(db.sql);
    await store.append('warm-up', [ev('warm-up', 0)]);
    const seen: RecordedEvent[] = [];
    let from = await store.headPosition();
    const poll = async () => {
      for (;;) {
        const page = await store.readAll(from, { maxCount: 100 });
        if (!page.length) return;
        seen.push(...page);
        from = page[page.length - 1]!.position;
      }
    };

    // A slow append: its transaction takes the next sequence number and stays open.
    const slow = await db.sql.reserve();
    await slow`begin`;
    const held = ev('slow', 1);
    await slow`insert into es_streams (stream_id, revision) values ('slow', 0)`;
    await slow`insert into es_events (event_id, stream_id, stream_revision, type, version, data, content_hash)
               values (${held.id}, 'slow', 0, ${held.type}, 1, ${db.sql.json(held.data as never)}, ${contentHash(held)})`;

    // Later appends take higher sequence numbers and commit first.
    for (let i = 0; i < 5; i++) await store.append('fast', [ev('fast', i)]);
    await poll();
    // While the slow transaction is open, nothing after it is visible: reading past it would skip it.
    expect(seen.map((e) => e.stream)).toEqual([]);

    await slow`commit`;
    slow.release();
    await poll();
    expect(seen.map((e) => `${e.stream}:${(e.data as { n: number }).n}`)).toEqual([
      'slow:1',
      'fast:0',
      'fast:1',
      'fast:2',
      'fast:3',
      'fast:4',
    ]);
    // The order is stable: a replay from zero gives the same order.
    const replay = (await readAllEvents(store)).filter((e) => e.stream !== 'warm-up');
    expect(replay.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    // The sequence numbers alone would have put "slow" first but a naive reader would have passed it.
    expect(seen[0]!.position.prepare < seen[1]!.position.prepare).toBe(true);
  });

  it('a transaction left open in another database of the server does not hold readers back', async () => {
    const other = await createTestDatabase({ migrate: false });
    const store = createPostgresEventStore(db.sql);
    const idle = await other.sql.reserve();
    try {
      await idle`begin`;
      await idle`select pg_current_xact_id()`; // takes an xid: it is in every snapshot's in-progress list now
      const r = await store.append('other-db-open', [ev('other-db-open', 1)]);
      const seen = await store.readAll({ commit: r.position!.commit - 1n, prepare: 0n });
      expect(seen.map((e) => e.stream)).toContain('other-db-open');
      expect(await store.headPosition()).toEqual(r.position);
    } finally {
      await idle`rollback`;
      idle.release();
      await other.drop();
    }
  });

  it('refuses updates and deletes of stored events', async () => {
    const store = createPostgresEventStore(db.sql);
    await store.append('immutable', [ev('immutable', 1)]);
    await expect(db.sql`update es_events set type = 'x' where stream_id = 'immutable'`).rejects.toThrow(/append-only/);
    await expect(db.sql`delete from es_events where stream_id = 'immutable'`).rejects.toThrow(/append-only/);
  });

  it('a failed multi-stream append leaves nothing behind', async () => {
    const store = createPostgresEventStore(db.sql);
    await store.append('atomic-b', [ev('atomic-b', 1)]);
    await expect(
      store.appendMany([
        { stream: 'atomic-a', events: [ev('atomic-a', 1)] },
        { stream: 'atomic-b', events: [ev('atomic-b', 2)], expectedRevision: 'no_stream' },
      ]),
    ).rejects.toMatchObject({ code: 'WRONG_EXPECTED_REVISION' });
    expect(await store.readStream('atomic-a')).toEqual([]);
  });
});

// Ingestion's appends (every expectation "any") run as one statement: its numbering, its refusal of an
// id claimed elsewhere and its duplicate reporting, under concurrency.
describe('postgres event store: the one-statement append', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ max: 12 });
  });
  afterAll(async () => db.drop());

  it('concurrent appends of different events to one stream number them without gap or repeat', async () => {
    const store = createPostgresEventStore(db.sql);
    const stream = 'one-statement-shared';
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 5; i++)
            await store.append(stream, [ev(stream, w * 100 + i * 2), ev(stream, w * 100 + i * 2 + 1)]);
        })(),
      ),
    );
    const events = await store.readStream(stream);
    expect(events.map((e) => e.revision)).toEqual([...Array(80).keys()]);
    expect(new Set(events.map((e) => e.id)).size).toBe(80);
    expect((await store.append(stream, [ev(stream, 999)])).revision).toBe(80);
  });

  it('carries separator characters in data, and in stream names and types, exactly', async () => {
    const store = createPostgresEventStore(db.sql);
    const odd = 'sep-\u001e-\u001f-stream';
    const data = { text: 'a\u001eb\u001fc\u0001', nested: { quote: '"\\' } };
    const plain = { ...ev('sep-plain', 1), data };
    const oddType = { ...ev(odd, 1), type: 'Odd\u001fType', data };
    const [a, b] = await store.appendMany([
      { stream: 'sep-plain', events: [plain] },
      { stream: odd, events: [oddType] },
    ]);
    expect([a!.appended, b!.appended]).toEqual([1, 1]);
    const [readPlain] = await store.readStream('sep-plain');
    const [readOdd] = await store.readStream(odd);
    expect(readPlain!.data).toEqual(data);
    expect(readOdd).toMatchObject({ stream: odd, type: 'Odd\u001fType', data });
    // and again: duplicates, whichever form carried them
    const again = await store.appendMany([
      { stream: 'sep-plain', events: [plain] },
      { stream: odd, events: [oddType] },
    ]);
    expect(again.map((r) => r.duplicates)).toEqual([1, 1]);
  });

  it('an id claimed by another stream fails the whole multi-stream append and moves no revision', async () => {
    const store = createPostgresEventStore(db.sql);
    const [a, b, c] = ['claim-a', 'claim-b', 'claim-c'];
    const taken = ev(a, 1);
    await store.append(a, [taken]);
    await store.append(b, [ev(b, 1)]);
    await expect(
      store.appendMany([
        { stream: b, events: [ev(b, 2)] },
        { stream: c, events: [ev(c, 1), { ...taken }] },
      ]),
    ).rejects.toMatchObject({ code: 'EVENT_ID_CONFLICT', reason: 'other_stream' });
    expect((await store.readStream(b)).length).toBe(1);
    expect(await store.readStream(c)).toEqual([]);
    // nothing moved: the next events take the revisions right after the stored ones
    const [rb, rc] = await store.appendMany([
      { stream: b, events: [ev(b, 2)] },
      { stream: c, events: [ev(c, 1)] },
    ]);
    expect([rb!.revision, rc!.revision]).toEqual([1, 0]);
    // a stream whose events are all stored already reports its revision beside one that moves
    const [again, moved] = await store.appendMany([
      { stream: b, events: [ev(b, 2)] },
      { stream: c, events: [ev(c, 2)] },
    ]);
    expect(again).toMatchObject({ revision: 1, appended: 0, duplicates: 1 });
    expect(moved).toMatchObject({ revision: 1, appended: 1, duplicates: 0 });
  });
});

describe('postgres event store: the one-call append keeps its lookups by key', () => {
  it('looks each stored id up by index even when its plan was made while the store was empty', async () => {
    const db = await createTestDatabase({ max: 1 });
    try {
      const store = createPostgresEventStore(db.sql);
      // Early calls on an empty store: a cached generic plan is made now (after five executions).
      for (let i = 0; i < 8; i++) await store.append(`early-${i}`, [ev(`early-${i}`, i)]);
      for (let b = 0; b < 10; b++) {
        await store.appendMany(
          Array.from({ length: 300 }, (_, i) => ({
            stream: `fill-${b}-${i}`,
            events: [ev(`fill-${b}-${i}`, 1), ev(`fill-${b}-${i}`, 2)],
          })),
        );
      }
      const scans = async () => {
        await db.sql`select pg_stat_force_next_flush()`;
        const [r] = await db.sql<{ seq: number; idx: number }[]>`
          select coalesce(seq_scan, 0)::int as seq, coalesce(idx_scan, 0)::int as idx from pg_stat_user_tables where relname = 'es_events'`;
        return r!;
      };
      const before = await scans();
      // 100 events in one call: 100 lookups by id (a plan scanning a whole index per call would count 1)
      await store.appendMany(
        Array.from({ length: 100 }, (_, i) => ({ stream: `late-${i}`, events: [ev(`late-${i}`, i)] })),
      );
      const after = await scans();
      expect(after.seq - before.seq).toBe(0);
      expect(after.idx - before.idx).toBeGreaterThanOrEqual(100);
    } finally {
      await db.drop();
    }
  });
});
