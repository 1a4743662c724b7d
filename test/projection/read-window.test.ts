import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Projection } from '../../src/projector/projection';
import { readWindow } from '../../src/projector/read-window';
import { runProjections } from '../../src/projector/runner';
import { type Batch, readBatch } from '../../src/projector/store-feed';
import { createPostgresEventStore } from '../../src/store/postgres';
import { formatPosition, type EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendVisible, tallyDeps, tallyEvents, tallyProjection, tallyTotals } from './tally';

/**
 * The builds' shared read window (issue 26): one read of the store per batch feeds every build however far
 * apart they run, a build runs ahead of the slowest by at most the window, and one that stops holds no one
 * back. Store reads are counted by wrapping the store's readAll.
 */
let db: TestDatabase;
let store: EventStore;
const ev = tallyEvents();

/** The store, its readAll calls counted. */
function counted(s: EventStore): { store: EventStore; reads: () => number } {
  let n = 0;
  return {
    store: {
      ...s,
      readAll: (from, o) => {
        n++;
        return s.readAll(from, o);
      },
    },
    reads: () => n,
  };
}

/** The batches one reader alone gets from the store (readBatch as the runner cuts them). */
async function batchesAlone(batchSize: number): Promise<{ batches: Batch[]; reads: number }> {
  const c = counted(store);
  const batches: Batch[] = [];
  let checkpoint: string | null = null;
  let carry: Awaited<ReturnType<typeof readBatch>>['carry'];
  for (;;) {
    const r = await readBatch(c.store, checkpoint, batchSize, undefined, carry);
    batches.push({ events: r.events, reachedEnd: r.reachedEnd });
    carry = r.carry;
    const last = r.events[r.events.length - 1];
    if (r.reachedEnd || !last) return { batches, reads: c.reads() };
    checkpoint = formatPosition(last.position);
  }
}

const endOf = (b: Batch): string | null => {
  const last = b.events[b.events.length - 1];
  return last ? formatPosition(last.position) : null;
};
const ids = (bs: readonly Batch[]) => bs.map((b) => b.events.map((e) => e.id));
/** true when the promise has not settled after the event loop had time to settle it */
async function pending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((r) => setTimeout(r, 200));
  return !settled;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // 30 appends of 1 to 3 events: batches of 4 cut at whole appends
  for (let i = 0; i < 30; i++)
    await appendVisible(
      store,
      db.sql,
      `s-w-${i % 4}`,
      Array.from({ length: 1 + (i % 3) }, () => ev('x', i + 1)),
    );
});
afterAll(async () => {
  await db?.drop();
});

describe('the shared read window', () => {
  it('readers far apart get the batches a reader alone gets, the store read once per batch', async () => {
    const alone = await batchesAlone(4);
    expect(alone.batches.length).toBeGreaterThan(8);
    const c = counted(store);
    const readers = 5;
    const w = readWindow({ store: c.store, batchSize: 4, until: undefined, checkpoints: Array(readers).fill(null) });
    const got: Batch[][] = Array.from({ length: readers }, () => []);
    // each reader at its own pace: reader r waits r ticks between batches, so they spread as far as allowed
    await Promise.all(
      got.map(async (mine, r) => {
        let checkpoint: string | null = null;
        for (;;) {
          const b = await w.batchAfter(r, checkpoint);
          mine.push(b);
          if (b.reachedEnd || b.events.length === 0) break;
          checkpoint = endOf(b);
          for (let t = 0; t < r * 3; t++) await new Promise((res) => setImmediate(res));
        }
        w.leave(r);
      }),
    );
    for (const mine of got) expect(ids(mine)).toEqual(ids(alone.batches));
    expect(c.reads()).toBe(alone.reads);
  });

  it('a reader runs ahead of the slowest by the window at most, and one that leaves holds no one back', async () => {
    const alone = await batchesAlone(4);
    const w = readWindow({ store, batchSize: 4, until: undefined, checkpoints: [null, null], size: 3 });
    // the slow reader takes the first batch and holds it
    const first = await w.batchAfter(0, null);
    let checkpoint: string | null = null;
    for (let i = 0; i < 3; i++) {
      const b = await w.batchAfter(1, checkpoint);
      expect(ids([b])).toEqual(ids([alone.batches[i]!]));
      checkpoint = endOf(b);
    }
    // the fourth batch is a window ahead of the slowest: it waits
    const fourth = w.batchAfter(1, checkpoint);
    expect(await pending(fourth)).toBe(true);
    // the slow one moves on by one batch: room for one more
    await w.batchAfter(0, endOf(first));
    expect(ids([await fourth])).toEqual(ids([alone.batches[3]!]));
    const fifth = w.batchAfter(1, endOf(alone.batches[3]!));
    expect(await pending(fifth)).toBe(true);
    // the slow one stops: the other reads on to the end
    w.leave(0);
    expect(ids([await fifth])).toEqual(ids([alone.batches[4]!]));
  });

  it('a reader that starts further on reads its own batches from its checkpoint', async () => {
    const alone = await batchesAlone(4);
    const w = readWindow({ store, batchSize: 4, until: undefined, checkpoints: [null, endOf(alone.batches[5]!)] });
    const ahead = await w.batchAfter(1, endOf(alone.batches[5]!));
    const own = await readBatch(store, endOf(alone.batches[5]!), 4, undefined, undefined);
    expect(ids([ahead])).toEqual(ids([own]));
    expect(ahead.events[0]!.id).toBe(alone.batches[6]!.events[0]!.id);
    expect(ids([await w.batchAfter(0, null)])).toEqual(ids([alone.batches[0]!]));
  });
});

describe('the runner with the shared read window', () => {
  it('projections at different paces read the store once per batch and build what one alone builds', async () => {
    const alone = await batchesAlone(3);
    // a slow one (each batch waits), a fast one, and three more: the store is read as often as for one
    const slowTally = tallyProjection({ name: 'w_slow' });
    const slow: Projection = {
      ...slowTally,
      async apply(tx, events, ctx) {
        await new Promise((r) => setTimeout(r, 30));
        return slowTally.apply(tx, events, ctx);
      },
    };
    const rest = ['w_fast', 'w_a', 'w_b', 'w_c'].map((name) => tallyProjection({ name }));
    const c = counted(store);
    const report = await runProjections(tallyDeps(db.sql, c.store, slow, ...rest), { batchSize: 3 });
    expect(report.projections.map((p) => p.status)).toEqual(Array(5).fill('live'));
    const events = alone.batches.reduce((s, b) => s + b.events.length, 0);
    expect(report.projections.map((p) => p.applied)).toEqual(Array(5).fill(events));
    // the batches' reads, once (the runner's other reads: the head and the event at a checkpoint, not readAll)
    expect(c.reads()).toBe(alone.reads);
    const single = tallyProjection({ name: 'w_single' });
    await runProjections(tallyDeps(db.sql, store, single), { batchSize: 3 });
    const expected = await tallyTotals(db.sql, 'w_single');
    for (const name of ['w_slow', 'w_fast', 'w_a', 'w_b', 'w_c'])
      expect(await tallyTotals(db.sql, name)).toEqual(expected);
  });

  it('a read of the store that fails fails the run, no build left waiting; the next run carries on', async () => {
    const names = ['w_fail_a', 'w_fail_b', 'w_fail_c'];
    let calls = 0;
    const failing: EventStore = {
      ...store,
      readAll: (from, o) => {
        // from the fourth read on, the store cannot be read (a read ahead that failed alone is read again)
        if (++calls >= 4) return Promise.reject(new Error('connection lost while reading'));
        return store.readAll(from, o);
      },
    };
    const projections = names.map((name) => tallyProjection({ name }));
    await expect(runProjections(tallyDeps(db.sql, failing, ...projections), { batchSize: 3 })).rejects.toThrow(
      'connection lost while reading',
    );
    const report = await runProjections(tallyDeps(db.sql, store, ...projections), { batchSize: 3 });
    expect(report.projections.map((p) => p.status)).toEqual(['live', 'live', 'live']);
    await runProjections(tallyDeps(db.sql, store, tallyProjection({ name: 'w_fail_ref' })));
    const expected = await tallyTotals(db.sql, 'w_fail_ref');
    for (const name of names) expect(await tallyTotals(db.sql, name)).toEqual(expected);
  });
});
