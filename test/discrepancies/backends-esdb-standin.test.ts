import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildProjection } from '../../src/projector/runner';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, useTestStore, type TestDatabase } from '../support/db';
import { startEsdbStandin, type EsdbStandin } from '../support/esdb-standin/server';
import { appendChunks, scenarioFor } from '../../fixtures/scenario-events';
import { deps, project, viewsDigest } from './fixtures';
import { reconciliationEvents } from '../../fixtures/reconciliation-events';

/**
 * The same appends on both backends give the same reconciliation: the EventStoreDB backend runs against
 * the gRPC stand-in (test/support/esdb-standin, not EventStoreDB), whose every event has its own commit
 * position, as the server's. The reconciliation judges a payment once per append, by append id.
 */

function digest(db: TestDatabase): Promise<string[]> {
  return viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers', 'sync_windows']);
}

describe('reconciliation: PostgreSQL and EventStoreDB (stand-in) backends', () => {
  const pg = useTestStore();
  let esdbDb: TestDatabase;
  let standin: EsdbStandin;
  let esdb: EventStore;

  beforeAll(async () => {
    esdbDb = await createTestDatabase();
    standin = await startEsdbStandin();
    esdb = createEventStoreDbStore(standin.url);
    const scenario = scenarioFor({
      seed: 'recon-backends',
      payments: 40,
      month: '2025-01',
      timezone: 'UTC',
      subMerchants: 4,
    });
    for (const requests of appendChunks(reconciliationEvents(scenario, { resyncAfterDays: 2 }), 200)) {
      await pg.store.appendMany(requests);
      await esdb.appendMany(requests);
    }
  }, 120_000);
  afterAll(async () => {
    await esdb?.close();
    await standin?.stop();
    await esdbDb?.drop();
  });

  it('gives the same rows', async () => {
    await rebuildProjection(deps(pg.db.sql, pg.store), 'reconciliation', { batchSize: 50 });
    await project(pg.db.sql, pg.store, 50);
    await rebuildProjection(deps(esdbDb.sql, esdb), 'reconciliation', { batchSize: 50 });
    await project(esdbDb.sql, esdb, 50);
    const found = await esdbDb.sql<{ n: number }[]>`select count(distinct type)::int as n from recon.discrepancies`;
    expect(found[0]!.n).toBeGreaterThanOrEqual(2);
    expect(await digest(esdbDb)).toEqual(await digest(pg.db));
  }, 240_000);
});
