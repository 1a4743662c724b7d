import { expect } from 'vitest';
import type { Sql } from '../../../src/db/connect';
import { syncRange, type SyncDeps } from '../../../src/ingest/sync';
import { importSubMerchants, parseSubMerchantCsv } from '../../../src/ingest/sub-merchants';
import { silentLogger } from '../../../src/log';
import type { Sandbox } from '../../../src/sandbox/server';
import { createPostgresEventStore } from '../../../src/store/postgres';
import { observationIds } from './store-checks';

/**
 * Fills a database's event store from a sandbox (in the test process, to save time): the sub-merchant
 * directory, then the register and period records of `[from, to)` (local days of `timezone`).
 */
export async function ingestScenario(
  sql: Sql,
  sandbox: Sandbox,
  opts: { from: string; to: string; timezone: string },
): Promise<{ records: number; appended: number }> {
  const store = createPostgresEventStore(sql);
  await importDirectory(sql, sandbox);
  const r = await syncRange(
    { store, projects: sandbox.projects, log: silentLogger, timezone: opts.timezone, reportMaxWaitMs: 20_000 },
    { from: opts.from, to: opts.to },
  );
  if (r.failed > 0) throw new Error(`sync failed: ${JSON.stringify(r.windows.filter((w) => w.status === 'failed'))}`);
  return { records: r.records, appended: r.appended };
}

/**
 * A fault-free sync of `range` (two windows, both completed) into the database of `sql`: the observation
 * ids every faulted run of the same range must end with once repaired.
 */
export async function faultFreeObservations(
  sql: Sql,
  deps: SyncDeps,
  range: { from: string; to: string },
): Promise<string[]> {
  const report = await syncRange(deps, range);
  expect(report.windows.map((w) => w.status)).toEqual(['completed', 'completed']);
  const ids = await observationIds(sql);
  expect(ids.length).toBeGreaterThan(100);
  return ids;
}

/** The sandbox's sub-merchant directory, imported as `recon sub-merchants import` would. */
export async function importDirectory(sql: Sql, sandbox: Sandbox): Promise<void> {
  const directory = parseSubMerchantCsv(sandbox.scenario.subMerchantCsv(), 'sandbox.csv');
  if (!directory.ok) throw new Error(`sandbox directory refused: ${JSON.stringify(directory.issues)}`);
  await importSubMerchants(createPostgresEventStore(sql), directory.rows, {
    importedAt: new Date('2025-01-01T00:00:00Z'),
  });
}
