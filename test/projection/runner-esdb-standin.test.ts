import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Projection } from '../../src/projector/projection';
import { runProjections } from '../../src/projector/runner';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { startEsdbStandin, type EsdbStandin } from '../support/esdb-standin/server';
import { tallyDeps, tallyEvents, tallyProjection, tallyTotals } from './tally';

/**
 * The runner on the EventStoreDB backend (against the gRPC stand-in, not EventStoreDB): the server gives
 * every event its own commit position, so "the events of one append" are the events sharing an append id.
 */
describe('projection runner on the EventStoreDB backend (gRPC stand-in)', () => {
  let db: TestDatabase;
  let standin: EsdbStandin;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    standin = await startEsdbStandin();
    store = createEventStoreDbStore(standin.url);
  });
  afterAll(async () => {
    await store?.close();
    await standin?.stop();
    await db?.drop();
  });

  it('never splits an append between two batches', async () => {
    const ev = tallyEvents();
    const seen: string[][] = [];
    const base = tallyProjection();
    const recording: Projection = {
      ...base,
      async apply(tx, events, ctx) {
        seen.push(events.map((e) => e.appendId));
        await base.apply(tx, events, ctx);
      },
    };
    for (let i = 0; i < 4; i++) await store.append(`s-whole-${i}`, [ev('x', 1), ev('x', 1), ev('x', 1)]);
    await store.appendMany([
      { stream: 's-whole-big', events: Array.from({ length: 5 }, () => ev('x', 1)) },
      { stream: 's-whole-big-2', events: [ev('x', 1), ev('x', 1)] },
    ]);
    const r = await runProjections(tallyDeps(db.sql, store, recording), { batchSize: 2 });
    expect(r.projections[0]!.applied).toBe(19);
    const batchOf = new Map<string, number>();
    seen.forEach((appends, i) => {
      for (const a of appends) {
        expect(batchOf.get(a) ?? i).toBe(i);
        batchOf.set(a, i);
      }
    });
    // five appends, each one batch: the last (two streams, 7 events) one longer batch
    expect(seen.map((b) => b.length)).toEqual([3, 3, 3, 3, 7]);
    expect(await tallyTotals(db.sql)).toMatchObject({ 's-whole-big': 5n, 's-whole-big-2': 2n });
  });
});
