import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { loadProjections } from '../../src/projector/runner';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon, spawnRecon } from './support/processes';
import { ingestScenario } from './support/scenario';
import { projectionState, viewDigests } from './support/store-checks';

/**
 * The poison test (issue 23): an event that throws in each projection's apply (the test-only hook
 * RECON_TEST_POISON_FILE, src/projector/test-poison.ts) is set aside, every projection goes on to the head,
 * `recon project` exits 3 naming each projection, event and error, `/readyz` of `recon start` says degraded,
 * `recon quarantine retry` applies the events once fixed, and a replay from zero gives the same read models.
 * Every command through the real binary.
 */

let sandbox: Sandbox;
let db: TestDatabase;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-poison-'));
const poisonFile = path.join(dir, 'poison.json');

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'faults-poison', month: '2025-01', timezone: 'UTC', payments: 150 },
    faults: { reportNotReadyPolls: 0 },
  });
  db = await createTestDatabase();
  await ingestScenario(db.sql, sandbox, { from: '2025-01-01', to: '2025-02-01', timezone: 'UTC' });
});

afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const PROJECTIONS = (await loadProjections()).map((p) => p.name).sort();

interface Listed {
  projection: string;
  eventId: string;
  error: string;
  attempts: number;
  status: string;
}

/** every recon.* view's rows, but the quarantine's own view (its rows name the build) */
async function readModels(): Promise<Record<string, string>> {
  const all = await viewDigests(db.sql);
  delete all.quarantined_events;
  return all;
}

describe('poison events', () => {
  it('are set aside, show, are applied again once fixed, and a replay from zero gives the same read models', {
    timeout: 400_000,
  }, async () => {
    // one register record per projection, spread over the log (every projection's apply sees every event)
    const records = await db.sql<{ id: string }[]>`
      select event_id::text as id from es_events where type = 'RegisterRecordObserved'
      order by transaction_id, global_position`;
    expect(records.length).toBeGreaterThan(PROJECTIONS.length * 10);
    const step = Math.floor(records.length / (PROJECTIONS.length + 1));
    const poison = Object.fromEntries(PROJECTIONS.map((name, i) => [name, [records[(i + 1) * step]!.id]]));
    writeFileSync(poisonFile, JSON.stringify(poison));
    const env = reconEnv({
      databaseUrl: db.url,
      project: sandbox.projects[0],
      extra: { RECON_TEST_POISON_FILE: poisonFile, RECON_STOP_GRACE_MS: '2000' },
    });

    const first = await runRecon(['project', '--batch', '200'], env, 300_000);
    expect(first.code, first.stderr).toBe(3);
    for (const name of PROJECTIONS)
      expect(first.stderr).toMatch(
        new RegExp(`projection ${name}: event ${poison[name]![0]} \\(RegisterRecordObserved, .*injected poison`),
      );
    expect(first.stderr).toContain('recon quarantine retry');
    // every projection went on to the head
    const state = await projectionState(db.sql);
    expect(state.builds.map((b) => b.name)).toEqual(PROJECTIONS);
    for (const b of state.builds) expect({ name: b.name, at: b.checkpoint }).toEqual({ name: b.name, at: state.head });

    const listed = JSON.parse((await runRecon(['quarantine', 'list', '--format', 'json'], env)).stdout) as Listed[];
    expect(listed.map((l) => [l.projection, l.eventId, l.attempts, l.status])).toEqual(
      PROJECTIONS.map((n) => [n, poison[n]![0], 1, 'quarantined']),
    );
    expect(listed.every((l) => /injected poison/.test(l.error))).toBe(true);
    const table = await runRecon(['quarantine', 'list'], env);
    expect(table.stdout).toContain(poison.journal![0]);

    // again: nothing re-read, nothing set aside twice, the condition still shows
    const again = await runRecon(['project'], env, 300_000);
    expect(again.code).toBe(3);
    expect((await db.sql`select count(*)::int as n, max(attempts) as a from projection_quarantine`)[0]).toEqual({
      n: PROJECTIONS.length,
      a: 1,
    });

    // the worker: ready to take webhooks, but degraded
    const worker = spawnRecon(['start', '--port', '0', '--no-scheduler'], env);
    const url = /listening on (http:\/\/\S+)/.exec(
      await worker.waitForOutput(/listening on http:\/\/\S+/, 40_000),
    )![1]!;
    await worker.waitForOutput(/events set aside by projections are waiting/, 10_000);
    const degraded = await fetch(`${url}/readyz`);
    expect(degraded.status).toBe(200);
    const body = (await degraded.json()) as { status: string; degraded: { reason: string; projection: string }[] };
    expect(body.status).toBe('degraded');
    expect(body.degraded.map((d) => [d.reason, d.projection]).sort()).toEqual(
      PROJECTIONS.map((n) => ['events_quarantined', n]),
    );
    expect((await fetch(`${url}/readyz?strict`)).status).toBe(503);

    // fixed: retry applies each event once
    writeFileSync(poisonFile, '{}');
    const retry = await runRecon(['quarantine', 'retry'], env, 300_000);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`${PROJECTIONS.length} applied, 0 still set aside`);
    expect(JSON.parse((await runRecon(['quarantine', 'list', '--format', 'json'], env)).stdout)).toEqual([]);
    const all = JSON.parse(
      (await runRecon(['quarantine', 'list', '--all', '--format', 'json'], env)).stdout,
    ) as Listed[];
    expect(all.map((l) => [l.projection, l.status, l.attempts])).toEqual(PROJECTIONS.map((n) => [n, 'retried', 2]));
    const ready = await fetch(`${url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);

    const retried = await readModels();
    const nothingMore = await runRecon(['quarantine', 'retry'], env);
    expect(nothingMore.stdout).toContain('0 applied, 0 still set aside');
    expect(await readModels()).toEqual(retried);

    // replay from zero (no poison): the same rows in every recon.* view
    const rebuild = await runRecon(['project', '--rebuild'], { ...env, RECON_TEST_POISON_FILE: '' }, 300_000);
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(await readModels()).toEqual(retried);
  });
});
