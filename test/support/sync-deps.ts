import type { SyncDeps } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { createPspClient, type PspClientOptions } from '../../src/psp/client';
import type { Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { TestDatabase } from './db';

/**
 * Sync deps that read `sandbox`'s projects through the real client into `db`'s event store, in UTC, with
 * waits short enough for tests; `pollMaxMs` and `client` are what the files tune, `over` the rest.
 */
export function sandboxSyncDeps(
  db: TestDatabase,
  sandbox: Sandbox,
  opts: { pollMaxMs: number; client: PspClientOptions },
  over: Partial<SyncDeps> = {},
): SyncDeps {
  return {
    store: createPostgresEventStore(db.sql),
    projects: sandbox.projects,
    log: silentLogger,
    timezone: 'UTC',
    reportMaxWaitMs: 5_000,
    pollBaseMs: 5,
    pollMaxMs: opts.pollMaxMs,
    clientFor: (p) => createPspClient(p, opts.client),
    ...over,
  };
}
