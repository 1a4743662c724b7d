import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { monthlyStatementsJob } from '../../jobs/monthly-statements';
import { loadConfig, type Config } from '../../src/config/env';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { appendObservations } from '../../src/ingest/reobservations';
import { statementFigures } from '../../src/ledger/ledger-queries';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { createFakeClock } from '../support/fake-clock';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler, type JobDefinition, type RunOutcome } from '../../src/scheduler/scheduler';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';

/**
 * The worker is down over the night of 28 February → 1 March and the morning of 1 March. On schedule, the
 * nightly run of 1 March 02:30 (which reads 28 February's register report) comes before the monthly
 * statements of 06:00, so February's statements include 28 February. Started again at 08:00, the scheduler
 * owes both: are February's statements still cut after that nightly sync?
 */

const TZ = 'Europe/Kyiv';
const POS = 'pos-r5-catch';
let db: TestDatabase;
let store: EventStore;
let config: Config;
const out = mkdtempSync(path.join(tmpdir(), 'recon-r5-catch-'));

function sale(paymentId: string, dateTime: string, amount: bigint): NormalizedRegisterRecord {
  return {
    projectId: POS,
    orderId: `order-${paymentId}`,
    paymentId,
    method: 'purchase',
    status: 'success',
    dateTime,
    currency: 'EUR',
    amount: null,
    originalAmount: String(amount),
    customerFee: '0',
    merchantFee: '0',
    receiverName: 'Shop C',
    receiverAmount: String(amount),
    receiverFee: '0',
    reserveAmount: '0',
    cardMask: null,
    payway: 'card',
    other: {},
  };
}

/** The day each nightly occurrence reads (the business day before it), and the sale the PSP reports for it. */
const REPORTED: Record<string, NormalizedRegisterRecord> = {
  '2025-02-28T00:30:00.000Z': sale('pay-27', '2025-02-27T12:00:00.000Z', 2_700n),
  '2025-03-01T00:30:00.000Z': sale('pay-28', '2025-02-28T12:00:00.000Z', 2_800n),
};

/**
 * Stands in for jobs/nightly-reconciliation.ts's sync: the register report of the previous day, ready after
 * a short wait at the PSP, appended through the real ingestion path, then the projections caught up.
 */
function nightlyJob(): JobDefinition {
  return {
    name: 'nightly-reconciliation',
    description: 'nightly sync stand-in',
    cron: config.schedules.nightly,
    async run(ctx) {
      const r = REPORTED[ctx.scheduledFor.toISOString()];
      await new Promise((res) => setTimeout(res, 500)); // the PSP prepares the report
      if (r) {
        const k = registerObserved(POS, JSON.stringify(r), r, {
          source: 'register',
          reportId: `rep-${ctx.scheduledFor.toISOString()}`,
          window: { from: '2025-02-01', to: '2025-03-01' },
          observedAt: ctx.now().toISOString(),
        });
        await appendObservations(store, [{ stream: k.stream, events: [k.event] }]);
        await waitVisible(db.sql, store);
      }
      await runProjections({ sql: db.sql, store, log: ctx.log, timezone: TZ, graceHours: 48 });
      return { synced: r?.paymentId ?? null };
    },
  };
}

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
  const csv = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days\nSM-C,Shop C,30\n', 'directory.csv');
  if (!csv.ok) throw new Error(JSON.stringify(csv.issues));
  await importSubMerchants(store, csv.rows);
  const k = registerObserved(POS, '{}', sale('pay-10', '2025-02-10T12:00:00.000Z', 1_000n), {
    source: 'register',
    reportId: 'rep-0',
    window: { from: '2025-02-01', to: '2025-03-01' },
    observedAt: '2025-02-11T00:30:00.000Z',
  });
  await appendObservations(store, [{ stream: k.stream, events: [k.event] }]);
  await waitVisible(db.sql, store);
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48 });
  // the last runs before the worker went down: the nightly of 27 February, the monthly of 1 February
  await db.sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at) values
    ('nightly-reconciliation', '2025-02-27T00:30:00Z', 'schedule', 'succeeded', 1, 'old', '2025-02-27T00:30:00Z', '2025-02-27T00:31:00Z'),
    ('monthly-statements', '2025-02-01T04:00:00Z', 'schedule', 'succeeded', 1, 'old', '2025-02-01T04:00:00Z', '2025-02-01T04:01:00Z')`;
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('owed occurrences of several jobs after the worker was down', () => {
  it("February's statements, owed with the nightly syncs before them, are cut after those syncs", async () => {
    const outcomes: RunOutcome[] = [];
    const clock = createFakeClock('2025-03-01T06:00:00Z'); // 08:00 Kyiv on 1 March
    const jobs = [nightlyJob(), monthlyStatementsJob({ config, sql: db.sql, store, log: silentLogger })];
    const s = createScheduler({ jobs, sql: db.sql, timezone: TZ, clock, onOutcome: (o) => outcomes.push(o) });
    s.start();
    await vi.waitFor(() => expect(outcomes.length).toBe(3), { timeout: 30_000 });
    await s.stop();
    expect(outcomes.every((o) => o.status === 'succeeded')).toBe(true);

    const [monthly] = await runsOf(db.sql, 'monthly-statements').then((rows) =>
      rows.filter((r) => r.scheduledFor.toISOString() === '2025-03-01T04:00:00.000Z'),
    );
    expect(monthly?.counters['month']).toBe('2025-02');
    const issued = await statementFigures(db.sql, {
      month: '2025-02',
      timezone: TZ,
      atPosition: parsePosition(String(monthly!.counters['position'])),
    });
    // on schedule: 10, 27 and 28 February's sales (the nightly of 1 March 02:30 comes before the statements of 06:00)
    expect(issued.map((f) => [f.subMerchantId, f.gross, f.operations])).toEqual([['SM-C', 6_500n, 3]]);
  });
});
