import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { allJobs } from '../../jobs/index';
import { loadConfig, type Config } from '../../src/config/env';
import { statementFigures } from '../../src/ledger/ledger-queries';
import { statementFile } from '../export/statement-files';
import { silentLogger } from '../../src/log';
import { createFakeClock } from '../support/fake-clock';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type RunOutcome } from '../../src/scheduler/scheduler';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';

/** The real jobs on a fake clock: the first of the month issues last month's statements, each night a report. */

const TZ = 'Europe/Kyiv';
let db: TestDatabase;
let store: EventStore;
let config: Config;
const out = mkdtempSync(path.join(tmpdir(), 'recon-jobs-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const r = loadConfig({
    RECON_TIMEZONE: TZ,
    RECON_OUT_DIR: out,
    RECON_CRON_NIGHTLY: '30 2 * * *',
    RECON_CRON_MONTHLY: '0 6 1 * *',
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  config = r.config;
  const scenario = scenarioFor({ seed: 11, payments: 120, month: '2025-01', timezone: TZ, subMerchants: 4 });
  for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('scheduled jobs', () => {
  it('lists the four jobs with the configured schedules', () => {
    const jobs = allJobs({ config, sql: db.sql, store, log: silentLogger });
    expect(jobs.map((j) => [j.name, j.cron])).toEqual([
      ['nightly-reconciliation', '30 2 * * *'],
      ['monthly-statements', '0 6 1 * *'],
      ['hourly-healing', '15 * * * *'],
      ['alerts', '*/15 * * * *'],
    ]);
  });

  it('runs the nightly report and the monthly statements at their local times', async () => {
    const clock = createFakeClock('2025-01-31T23:00:00Z'); // 01:00 on 1 February in Kyiv
    const outcomes: RunOutcome[] = [];
    const jobs = allJobs({ config, sql: db.sql, store, log: silentLogger }).filter(
      (j) => j.name !== 'hourly-healing' && j.name !== 'alerts',
    );
    const s = createScheduler({ jobs, sql: db.sql, timezone: TZ, clock, onOutcome: (o) => outcomes.push(o) });
    s.start();
    await clock.advanceTo('2025-02-01T00:30:00Z'); // 02:30 Kyiv
    await vi.waitFor(() => expect(outcomes).toHaveLength(1), { timeout: 30_000 });
    await clock.advanceTo('2025-02-01T04:00:00Z'); // 06:00 Kyiv
    await vi.waitFor(() => expect(outcomes).toHaveLength(2), { timeout: 30_000 });
    await s.stop();
    expect(outcomes.map((o) => [o.job, o.status])).toEqual([
      ['nightly-reconciliation', 'succeeded'],
      ['monthly-statements', 'succeeded'],
    ]);

    const nightly = (await runsOf(db.sql, 'nightly-reconciliation'))[0]!;
    expect(nightly.counters).toMatchObject({ date: '2025-01-31', report: path.join(out, 'nightly-2025-01-31.xlsx') });
    expect(existsSync(path.join(out, 'nightly-2025-01-31.xlsx'))).toBe(true);

    const monthly = (await runsOf(db.sql, 'monthly-statements'))[0]!;
    expect(monthly.counters).toMatchObject({ month: '2025-01' });
    const figures = await statementFigures(db.sql, { month: '2025-01', timezone: TZ });
    const ids = [...new Set(figures.map((f) => f.subMerchantId))];
    expect(monthly.counters['statements']).toBe(ids.length);
    expect(
      readdirSync(out)
        .filter((f) => f.endsWith('-2025-01.xlsx'))
        .sort(),
    ).toEqual([...ids.map((id) => statementFile(out, id, '2025-01')), 'payouts-2025-01.xlsx'].sort());
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, 'payouts-2025-01.xlsx'));
    expect(wb.worksheets[0]!.rowCount).toBeGreaterThanOrEqual(figures.length + 1);
    expect(wb.worksheets[0]!.getCell('J2').value).toBe(Number(figures[0]!.netPayable) / 100);
  });
});
