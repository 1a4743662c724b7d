import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { loadProjections } from '../../src/projector/runner';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon, spawnRecon, waitFor, type ReconProcess } from './support/processes';
import { eventsUpTo, projectionState, viewDigests } from './support/store-checks';

/**
 * Two `recon start` workers on one database, every job scheduled every 5 seconds, webhooks arriving at
 * both: each scheduled occurrence is executed by one worker only (one start in all the logs, one job_runs
 * row), the projections are never applied twice (checkpoints agree with the events applied, and the read
 * models equal a single runner's build from zero), and both stop cleanly on SIGTERM.
 */
const EVERY_5S = '*/5 * * * * *';
let sandbox: Sandbox;
let db: TestDatabase;
let outDir: string;

beforeAll(async () => {
  const now = Date.now();
  sandbox = await startSandbox({
    scenario: {
      seed: 'faults-two-workers',
      from: new Date(now - 3 * 86_400_000).toISOString(),
      to: new Date(now - 60_000).toISOString(),
      timezone: 'UTC',
      payments: 150,
    },
    faults: { reportNotReadyPolls: 0 },
  });
  db = await createTestDatabase();
  outDir = mkdtempSync(path.join(tmpdir(), 'recon-faults-workers-'));
  const directory = parseSubMerchantCsv(sandbox.scenario.subMerchantCsv(), 'sandbox.csv');
  if (!directory.ok) throw new Error('sandbox directory refused');
  await importSubMerchants(createPostgresEventStore(db.sql), directory.rows);
});

afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await db?.drop();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

interface LogLine {
  msg: string;
  job?: string;
  scheduledFor?: string;
  attempt?: number;
  trigger?: string;
  [k: string]: unknown;
}

function logLines(p: ReconProcess): LogLine[] {
  return p
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

describe('two workers on one database', () => {
  it('run each scheduled occurrence once, apply each event once, and stop cleanly', async () => {
    const env = reconEnv({
      databaseUrl: db.url,
      project: sandbox.projects[0],
      extra: {
        RECON_CRON_NIGHTLY: EVERY_5S,
        RECON_CRON_MONTHLY: EVERY_5S,
        RECON_CRON_HEALING: EVERY_5S,
        RECON_CRON_ALERTS: EVERY_5S,
        RECON_GRACE_HOURS: '0',
        RECON_OUT_DIR: outDir,
      },
    });
    const workers = [spawnRecon(['start', '--port', '0'], env), spawnRecon(['start', '--port', '0'], env)];
    const urls = await Promise.all(
      workers.map(
        async (w) =>
          /listening on (http:\/\/\S+)/.exec(await w.waitForOutput(/listening on http:\/\/\S+/, 40_000))![1]!,
      ),
    );
    expect(urls[0]).not.toBe(urls[1]);

    // The scenario's webhooks (and the re-sends healing asks for) go to one worker or the other.
    let n = 0;
    const delivered = await sandbox.deliverWebhooks(() => `${urls[n++ % 2]}/webhooks/${sandbox.projects[0]!.posId}`, {
      concurrency: 4,
      timeoutMs: 10_000,
    });
    expect(delivered.delivered).toBeGreaterThan(100);
    expect(delivered.byStatus['200']).toBe(delivered.delivered);

    // A few ticks of every job: at least two successful runs of each.
    await waitFor(
      async () => {
        const rows = await db.sql<
          { job: string; n: number }[]
        >`select job, count(*)::int as n from job_runs where status = 'succeeded' group by job`;
        return rows.length === 4 && rows.every((r) => r.n >= 2) ? true : undefined;
      },
      { timeoutMs: 50_000, intervalMs: 250, what: 'two successful runs of every job' },
    ).catch(async (e: Error) => {
      const rows =
        await db.sql`select job, scheduled_for, status, attempt, worker, error from job_runs order by scheduled_for`;
      throw new Error(
        `${e.message}\njob_runs: ${JSON.stringify(rows, null, 1)}\n${workers.map((w) => w.stderr().slice(-3000)).join('\n---\n')}`,
      );
    });

    for (const w of workers) w.kill('SIGTERM');
    const ends = await Promise.all(
      workers.map((w) =>
        Promise.race([
          w.exited,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('worker did not stop within 40 s of SIGTERM')), 40_000),
          ),
        ]),
      ),
    );
    for (const [i, e] of ends.entries()) {
      expect(e, workers[i]!.stderr().slice(-2000)).toEqual({ code: 0, signal: null });
      expect(logLines(workers[i]!).some((l) => l.msg === 'worker stopped')).toBe(true);
    }

    // Each occurrence: one job_runs row (primary key) and one start in all the logs, by the worker recorded.
    const runs = await db.sql<
      { job: string; scheduled_for: Date; status: string; attempt: number; worker: string; trigger: string }[]
    >`
      select job, scheduled_for, status, attempt, worker, trigger from job_runs order by scheduled_for, job`;
    const starts = new Map<string, string[]>();
    for (const w of workers) {
      for (const l of logLines(w)) {
        if (l.msg !== 'job started') continue;
        const key = `${l.job}@${l.scheduledFor}#${l.attempt}`;
        starts.set(key, [...(starts.get(key) ?? []), `pid-${w.pid}`]);
      }
    }
    for (const [key, by] of starts) expect(by, key).toHaveLength(1);
    const succeeded = runs.filter((r) => r.status === 'succeeded');
    for (const job of ['nightly-reconciliation', 'monthly-statements', 'hourly-healing']) {
      expect(succeeded.filter((r) => r.job === job).length, job).toBeGreaterThanOrEqual(2);
    }
    for (const r of runs.filter((x) => x.status !== 'skipped')) {
      const by = starts.get(`${r.job}@${r.scheduled_for.toISOString()}#${r.attempt}`);
      expect(by, `${r.job} ${r.scheduled_for.toISOString()}`).toEqual([r.worker]);
    }
    expect(runs.every((r) => r.trigger === 'schedule' && r.status !== 'running')).toBe(true);
    // Both schedulers were running and competing for the same occurrences (whichever wakes first runs it).
    for (const w of workers) expect(logLines(w).filter((l) => l.msg === 'job scheduled')).toHaveLength(4);

    // Projections: whatever each build applied is exactly the events up to its checkpoint (nothing twice).
    const state = await projectionState(db.sql);
    expect(state.builds.map((b) => b.name)).toEqual((await loadProjections()).map((p) => p.name).sort());
    for (const b of state.builds) expect(b.applied, b.name).toBe(await eventsUpTo(db.sql, b.checkpoint!));
    const caughtUp = await runRecon(['project'], env);
    expect(caughtUp.code, caughtUp.stderr.slice(-2000)).toBe(0);
    const live = await projectionState(db.sql);
    for (const b of live.builds) {
      expect(b.checkpoint).toBe(live.head);
      expect(b.applied).toBe(live.events);
    }
    const byTwo = await viewDigests(db.sql);
    expect(byTwo.journal_entries).not.toMatch(/^0:/);
    const rebuilt = await runRecon(['project', '--rebuild'], env);
    expect(rebuilt.code, rebuilt.stderr.slice(-2000)).toBe(0);
    expect(await viewDigests(db.sql)).toEqual(byTwo);
  }, 180_000); // five projections to build and rebuild, on a loaded machine
});
