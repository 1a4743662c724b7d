import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestStore, type TestDatabase } from '../support/db';
import { rebuildProjection } from '../../src/projector/runner';
import { windowChunk } from '../../src/reconciliation/window-chunks';
import type { EventStore } from '../../src/store/types';
import { appendChunks, scenarioFor } from '../../fixtures/scenario-events';
import type { Keyed } from '../../src/ingest/observations';
import { PeriodRecordObserved, SyncWindowCompleted } from '../../src/events/ingest-events';
import { reconciliationEvents } from '../../fixtures/reconciliation-events';
import { deps, project, syncCompleted, viewsDigest } from './fixtures';

/**
 * A completed sync window judges every payment with an operation in it or waiting for its report: with a
 * month's window, the month. Those payments are judged a chunk at a time (issue 26: memory bounded by the
 * chunk, not the month); the rows must be those of one piece, whatever the chunk.
 */

function digest(db: TestDatabase): Promise<string[]> {
  return viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers', 'sync_windows']);
}

async function rebuildWithChunk(db: TestDatabase, store: EventStore, size: number): Promise<string[]> {
  windowChunk.size = size;
  await rebuildProjection(deps(db.sql, store), 'reconciliation', { batchSize: 500 });
  await project(db.sql, store, 500);
  return digest(db);
}

describe('a completed window judged a chunk of payments at a time', () => {
  const fx = useTestStore();
  const defaultSize = windowChunk.size;
  afterEach(() => {
    windowChunk.size = defaultSize;
  });

  beforeAll(async () => {
    // the month's operations, a third of them missing from the period report, and no daily window: then one
    // window over the whole month per point of sale, completed after it, in an append of its own (as recon's
    // sync writes it), judges every payment with an operation missing from a report
    const scenario = scenarioFor({
      seed: 'window-chunks',
      payments: 60,
      month: '2025-01',
      timezone: 'UTC',
      subMerchants: 5,
    });
    const kept: Keyed[] = [];
    let periods = 0;
    for (const k of reconciliationEvents(scenario, { resyncAfterDays: 2 })) {
      if (k.event.type === SyncWindowCompleted.type) continue;
      if (k.event.type === PeriodRecordObserved.type && periods++ % 3 === 0) continue;
      kept.push(k);
    }
    for (const requests of appendChunks(kept, 200)) await fx.store.appendMany(requests);
    await fx.store.appendMany(
      scenario.posIds.map((posId) =>
        syncCompleted({
          posId,
          from: '2025-01-01T00:00:00.000Z',
          to: '2025-02-01T00:00:00.000Z',
          reportId: `month-${posId}`,
          completedAt: '2025-02-05T00:00:00.000Z',
        }),
      ),
    );
  }, 120_000);

  it('gives the rows of one piece with chunks of 1, 7 and 1,000 payments', async () => {
    const whole = await rebuildWithChunk(fx.db, fx.store, 1_000_000);
    // the windows judge many payments, so small chunks really split them
    const [w] = await fx.db.sql<{ n: number }[]>`
      select count(distinct (o.pos_id, o.payment_id))::int as n from recon.operations o
      join recon.sync_windows w on o.occurred_at >= w.window_from and o.occurred_at < w.window_to`;
    expect(w!.n).toBeGreaterThan(20);
    const [d] = await fx.db.sql<{ n: number }[]>`
      select count(*)::int as n from recon.discrepancies where type = 'missing_in_period'`;
    expect(d!.n).toBeGreaterThan(10);
    expect(await rebuildWithChunk(fx.db, fx.store, 7)).toEqual(whole);
    expect(await rebuildWithChunk(fx.db, fx.store, 1)).toEqual(whole);
    expect(await rebuildWithChunk(fx.db, fx.store, 1000)).toEqual(whole);
  }, 240_000);
});
