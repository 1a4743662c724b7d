import type { Sql } from '../../../src/db/connect';
import { syncRange } from '../../../src/ingest/sync';
import { importSubMerchants, parseSubMerchantCsv } from '../../../src/ledger/sub-merchants';
import { silentLogger } from '../../../src/log';
import type { Sandbox } from '../../../src/sandbox/server';
import { createPostgresEventStore } from '../../../src/store/postgres';

/**
 * Fills a database's event store from a sandbox (in the test process, to save time): the sub-merchant
 * directory, then the register and period records of `[from, to)` (local days of `timezone`).
 */
export async function ingestScenario(sql: Sql, sandbox: Sandbox, opts: { from: string; to: string; timezone: string }): Promise<{ records: number; appended: number }> {
  const store = createPostgresEventStore(sql);
  await importDirectory(sql, sandbox);
  const r = await syncRange(
    { store, projects: sandbox.projects, log: silentLogger, timezone: opts.timezone, reportMaxWaitMs: 20_000 },
    { from: opts.from, to: opts.to },
  );
  if (r.failed > 0) throw new Error(`sync failed: ${JSON.stringify(r.windows.filter((w) => w.status === 'failed'))}`);
  return { records: r.records, appended: r.appended };
}

/** The sandbox's sub-merchant directory, imported as `recon sub-merchants import` would. */
export async function importDirectory(sql: Sql, sandbox: Sandbox): Promise<void> {
  const directory = parseSubMerchantCsv(sandbox.scenario.subMerchantCsv(), 'sandbox.csv');
  if (!directory.ok) throw new Error(`sandbox directory refused: ${JSON.stringify(directory.issues)}`);
  await importSubMerchants(createPostgresEventStore(sql), directory.rows, { importedAt: new Date('2025-01-01T00:00:00Z') });
}
