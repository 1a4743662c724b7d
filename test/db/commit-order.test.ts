import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdFor } from '../../src/events/ids';
import { createPostgresEventStore } from '../../src/store/postgres';
import { comparePositions, formatPosition, type EventStore, type NewEvent, type Position } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { withTransactionCounterLock } from '../support/xid-lock';

/**
 * The commit part of a position is a transaction id (xid8). It must be compared as a number everywhere:
 * once ids cross a power of ten ("9999" → "10000"), an ordering by its text form would put later
 * transactions first and a follower would skip events.
 */

const event = (n: number): NewEvent => {
  const data = { n };
  return { id: eventIdFor('test:commit-order', data), type: 'TestEvent', version: 1, data };
};

/** Takes transaction ids until the next one has one more digit than the current one. */
async function crossPowerOfTen(db: TestDatabase): Promise<bigint> {
  return withTransactionCounterLock(() => spendUntilPowerOfTen(db));
}

async function spendUntilPowerOfTen(db: TestDatabase): Promise<bigint> {
  const [row] = await db.sql<{ xid: string }[]>`select pg_current_xact_id()::text as xid`;
  const current = BigInt(row!.xid);
  const target = 10n ** BigInt(current.toString().length);
  const burn = Number(target - current);
  // One short transaction per id (a long one would hold back every follower on the server, since
  // pg_snapshot_xmin is server-wide), without waiting for a disk flush at each commit.
  const conn = await db.sql.reserve();
  try {
    await conn`set synchronous_commit = off`;
    await conn.unsafe(`do $$ begin
      for i in 1..${burn} loop perform pg_current_xact_id(); commit; end loop; end $$`);
  } finally {
    await conn`reset synchronous_commit`;
    conn.release();
  }
  return target;
}

/**
 * Waits until a fresh read can see `position`. Visibility stops at the oldest transaction still running
 * on the whole server, so another test file's open transaction may delay it for a moment.
 */
async function visible(store: EventStore, position: Position): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const head = await store.headPosition();
    if (head && comparePositions(head, position) >= 0) return;
    if (Date.now() > deadline) throw new Error(`position ${formatPosition(position)} not visible after 20 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function follow(store: EventStore, maxCount: number): Promise<{ n: number; position: Position }[]> {
  const seen: { n: number; position: Position }[] = [];
  let from: Position | undefined;
  for (;;) {
    const page = await store.readAll(from, { maxCount });
    if (page.length === 0) return seen;
    for (const e of page) seen.push({ n: (e.data as { n: number }).n, position: e.position });
    from = page[page.length - 1]!.position;
  }
}

describe('postgres event store: transaction ids compared as numbers', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('reads in commit order across a power of ten of transaction ids', async () => {
    const store = createPostgresEventStore(db.sql);
    const before = await store.append('before', [event(1)]);
    const target = await crossPowerOfTen(db);
    await store.append('after', [event(2)]);
    const last = await store.append('after', [event(3)]);
    await visible(store, last.position!);

    expect(before.position!.commit < target).toBe(true);
    expect(last.position!.commit >= target).toBe(true);
    // The text forms sort the other way round: exactly the case a text ordering gets wrong.
    expect(formatPosition(last.position!) < formatPosition(before.position!)).toBe(true);

    for (const pageSize of [1, 2, 1000]) {
      expect((await follow(store, pageSize)).map((e) => e.n)).toEqual([1, 2, 3]);
    }
    expect((await store.readAll(before.position)).map((e) => (e.data as { n: number }).n)).toEqual([2, 3]);
    expect(await store.headPosition()).toEqual(last.position);
  });

  it('a page read ahead never hides events committed after it was read', async () => {
    const store = createPostgresEventStore(db.sql);
    const stream = 'read-ahead';
    const start = (await store.append(stream, [event(10), event(11)])).position;
    const third = await store.append(stream, [event(12), event(13)]);
    await visible(store, third.position!);
    // A full page: the store reads the page after it ahead (empty at that moment).
    const first = await store.readAll(start, { maxCount: 2 });
    expect(first.map((e) => (e.data as { n: number }).n)).toEqual([12, 13]);
    const fifth = await store.append(stream, [event(14)]);
    await visible(store, fifth.position!); // headPosition does not take the page read ahead
    const next = await store.readAll(first[1]!.position, { maxCount: 2 });
    expect(next.map((e) => (e.data as { n: number }).n)).toEqual([14]);
  });
});
