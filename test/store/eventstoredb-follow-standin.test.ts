import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followProjections } from '../../src/projector/runner';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { startEsdbStandin, type EsdbStandin } from '../support/esdb-standin/server';
import { tallyDeps, tallyEvents, tallyProjection, tallyTotals } from '../projection/tally';

/**
 * The live projections on the EventStoreDB backend (against the gRPC stand-in, not EventStoreDB) wait for
 * the store's watch, a live subscription to $all, not for the next poll.
 */
describe('live projections on the EventStoreDB backend (gRPC stand-in)', () => {
  let db: TestDatabase;
  let standin: EsdbStandin;
  let store: EventStore;
  let writer: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    standin = await startEsdbStandin();
    store = createEventStoreDbStore(standin.url);
    writer = createEventStoreDbStore(standin.url);
  });
  afterAll(async () => {
    await store?.close();
    await writer?.close();
    await standin?.stop();
    await db?.drop();
  });

  it("applies another process's append without waiting for the poll (an hour here)", async () => {
    const ev = tallyEvents();
    const controller = new AbortController();
    const runs: number[] = [];
    const following = followProjections(tallyDeps(db.sql, store, tallyProjection()), {
      signal: controller.signal,
      pollMs: 3_600_000,
      onReport: (r) => runs.push(r.projections[0]!.applied),
    });
    try {
      await writer.append('s-woken', [ev('x', 7)]);
      // bounded by the test's timeout only: without a watch the next run would come in an hour
      while ((await tallyTotals(db.sql).catch(() => ({}) as Record<string, bigint>))['s-woken'] === undefined)
        await new Promise((r) => setTimeout(r, 25));
      // the run's report comes after its commit: wait for the first event's report before counting from here
      while (!runs.some((applied) => applied > 0)) await new Promise((r) => setTimeout(r, 25));
      const before = runs.length;
      await writer.append('s-woken', [ev('x', 5)]);
      while ((await tallyTotals(db.sql))['s-woken'] !== 12n) await new Promise((r) => setTimeout(r, 25));
      while (!runs.slice(before).some((applied) => applied > 0)) await new Promise((r) => setTimeout(r, 25));
      expect(runs.slice(before).reduce((a, b) => a + b, 0)).toBe(1);
    } finally {
      controller.abort();
      await following;
    }
    // the watch ended with the follower: no call is left open at the server
    await new Promise((r) => setTimeout(r, 50));
    expect(standin.stats.openReads).toBe(0);
  }, 30_000);
});
