import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { BulkEvent, EventStore, Position, RecordedEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ev } from './contract';
import { batchesOf, interleaved } from './contract-bulk';

/**
 * The bulk append under concurrency (two imports of overlapping files at once, a bulk beside ordinary
 * appends of the same ids), a reader following by position while a long bulk is open, and the edges of a
 * bulk (nothing in it, a source failing after several chunks, all of it one append).
 */

async function settled(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

async function storedIds(db: TestDatabase, streams: readonly string[]): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    select event_id::text as id from es_events where stream_id = any(${streams as string[]}::text[])`;
  return rows.map((r) => r.id);
}

/** A source that gives `first`, then waits for `release` before giving `rest`; `reached` once `first` is given. */
function held(first: readonly BulkEvent[], rest: readonly BulkEvent[]) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const midway = new Promise<void>((r) => {
    reached = r;
  });
  async function* source(): AsyncGenerator<BulkEvent[]> {
    yield* batchesOf(first, 3);
    reached();
    await gate;
    yield* batchesOf(rest, 3);
  }
  return { source: source(), midway, release };
}

describe('review: postgres appendBulk under concurrency and at its edges', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql, { bulkChunkBytes: 600 });
  });
  afterAll(async () => db?.drop());
  const s = () => `review-${randomUUID()}`;

  it('two bulks of overlapping events at once: every event stored once, none lost, streams gapless', async () => {
    const [a, b] = [s(), s()];
    const first = interleaved(a, b, 60, 0);
    const second = interleaved(a, b, 60, 30); // events 30..59 are in both
    const outcomes = await Promise.all([
      settled(store.appendBulk(batchesOf(first, 3))),
      settled(store.appendBulk(batchesOf(second, 3))),
    ]);
    // the port promises idempotency: an overlap is left out, never an error
    expect(outcomes).toEqual(['ok', 'ok']);
    const ids = await storedIds(db, [a, b]);
    const expected = new Set([...first, ...second].map((e) => e.event.id));
    expect(ids.length).toBe(expected.size);
    expect(new Set(ids)).toEqual(expected);
    for (const stream of [a, b]) {
      const revs = (await store.readStream(stream)).map((e) => e.revision);
      expect(revs).toEqual(revs.map((_, i) => i));
    }
  });

  it('two bulks taking the same streams in opposite orders (two statements of two accounts) both succeed', async () => {
    const [a, b] = [s(), s()];
    const ofA = interleaved(a, a, 20);
    const ofB = interleaved(b, b, 20);
    const one = held(ofA, ofB);
    const two = held(ofB, ofA);
    const p1 = settled(store.appendBulk(one.source));
    await one.midway;
    const p2 = settled(store.appendBulk(two.source));
    // the second holds stream b by now, unless it waits for the first to end
    await Promise.race([two.midway, new Promise((r) => setTimeout(r, 300))]);
    one.release();
    two.release();
    const outcomes = await Promise.all([p1, p2]);
    const ids = await storedIds(db, [a, b]);
    // whatever the outcome, nothing is half-applied and nothing is stored twice
    expect(ids.length).toBe(new Set(ids).size);
    expect(outcomes).toEqual(['ok', 'ok']);
    expect(ids.length).toBe(40);
  });

  it('a bulk racing ordinary appends of the same ids: every event stored once, both sides succeed', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 60);
    const gate = held(events.slice(0, 30), events.slice(30));
    const bulk = settled(store.appendBulk(gate.source));
    await gate.midway;
    // ordinary appends of events the bulk has staged and of events it has yet to stage; they wait on the
    // bulk's lock of the stream rows, and are idempotent once the bulk commits
    const ordinary = Promise.all([events[1]!, events[45]!].map((e) => settled(store.append(e.stream, [e.event]))));
    await new Promise((r) => setTimeout(r, 100));
    gate.release();
    expect(await bulk).toBe('ok');
    expect(await ordinary).toEqual(['ok', 'ok']);
    const ids = await storedIds(db, [a, b]);
    expect(ids.length).toBe(events.length);
    expect(new Set(ids)).toEqual(new Set(events.map((e) => e.event.id)));
  });

  it('an ordinary append of an id stored first wins; a bulk of it after is idempotent', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 20);
    const r = await store.append(events[4]!.stream, [events[4]!.event]);
    expect(r.appended).toBe(1);
    const bulk = await store.appendBulk(batchesOf(events, 3));
    const dups = [...bulk.byLabel.values()].reduce((t, c) => t + c.duplicates, 0);
    expect(dups).toBe(1);
    expect((await storedIds(db, [a, b])).length).toBe(events.length);
  });

  it('a reader by position never skips an ordinary append committed while a long bulk is open', async () => {
    const [a, b, c] = [s(), s(), s()];
    const events = interleaved(a, b, 40);
    let checkpoint: Position | undefined = await store.headPosition();
    const seen: RecordedEvent[] = [];
    const follow = async () => {
      for (;;) {
        const page = await store.readAll(checkpoint, { maxCount: 1000 });
        if (page.length === 0) return;
        seen.push(...page);
        checkpoint = page[page.length - 1]!.position;
      }
    };
    const gate = held(events.slice(0, 20), events.slice(20));
    const bulk = store.appendBulk(gate.source);
    try {
      await gate.midway;
      await new Promise((r) => setTimeout(r, 100));
      // the bulk holds a transaction id now; this append takes a later one and commits first
      const later = await store.append(c, [ev(c, 1)]);
      expect(later.appended).toBe(1);
      // this database's only: the suite's other files share the server, and their transactions have ids too
      const [open] = await db.sql<{ xid: string }[]>`
        select backend_xid::text as xid from pg_stat_activity
        where backend_xid is not null and pid <> pg_backend_pid() and datname = current_database()`;
      // the scenario: the open bulk's transaction id is below the commit of the append just made
      expect(BigInt(open!.xid)).toBeLessThan(later.position!.commit);
      await follow(); // the reader moves as far as it may while the bulk is open
    } finally {
      // never left open by a failed assertion: an open transaction holds back every reader of the server
      gate.release();
    }
    await bulk;
    await follow();
    const mine = seen.filter((e) => [a, b, c].includes(e.stream)).map((e) => e.id);
    expect(new Set(mine)).toEqual(new Set([...events.map((e) => e.event.id), ev(c, 1).id]));
    expect(mine.length).toBe(events.length + 1);
  });

  it('the guard never refuses an ordinary append while a bulk transaction is open', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 30);
    const gate = held(events.slice(0, 15), events.slice(15));
    const bulk = settled(store.appendBulk(gate.source));
    await gate.midway;
    await new Promise((r) => setTimeout(r, 100));
    const others: string[] = [];
    for (let i = 0; i < 5; i++) {
      const x = s();
      others.push(await settled(store.append(x, [ev(x, i)])));
      others.push(await settled(store.append(x, [ev(x, 10 + i), ev(x, 11 + i)])));
    }
    gate.release();
    expect(await bulk).toBe('ok');
    expect(others.every((o) => o === 'ok')).toBe(true);
  });

  it('a bulk of nothing (no batches, or empty batches) writes nothing and reports nothing', async () => {
    const before = await db.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
    async function* none(): AsyncGenerator<BulkEvent[]> {}
    async function* empties(): AsyncGenerator<BulkEvent[]> {
      yield [];
      yield [];
    }
    for (const src of [none(), empties()]) {
      const r = await store.appendBulk(src);
      expect(r.streams).toEqual([]);
      expect(r.byLabel.size).toBe(0);
    }
    const after = await db.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('a source failing after several chunks are in es_events leaves nothing, streams not even created', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 60);
    async function* late(): AsyncGenerator<BulkEvent[]> {
      yield* batchesOf(events, 3);
      throw new Error('file refused: statement does not foot');
    }
    expect(await settled(store.appendBulk(late()))).toMatch(/does not foot/);
    expect(await storedIds(db, [a, b])).toEqual([]);
    const streams = await db.sql`select 1 from es_streams where stream_id in (${a}, ${b})`;
    expect(streams.length).toBe(0);
  });

  it('a stored id with other content met in a late chunk refuses the whole bulk, nothing written', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 60);
    const victim = events[55]!;
    await store.append(victim.stream, [{ ...victim.event, data: { other: true } }]);
    expect(await settled(store.appendBulk(batchesOf(events, 3)))).toBe('EVENT_ID_CONFLICT');
    expect((await storedIds(db, [a, b])).length).toBe(1);
  });

  it('every event of one bulk shares one append (one commit part), across chunks and streams', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 60);
    await store.appendBulk(batchesOf(events, 3));
    const read = [...(await store.readStream(a)), ...(await store.readStream(b))];
    expect(read.length).toBe(60);
    expect(new Set(read.map((e) => e.position.commit)).size).toBe(1);
  });
});
