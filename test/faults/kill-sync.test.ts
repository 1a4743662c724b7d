import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon, spawnRecon, waitFor } from './support/processes';
import { countEvents, eventIds, recordedTypes, storeIntegrity, viewDigests } from './support/store-checks';

/**
 * `kill -9` of `recon sync` in the middle of a register report, then the same command again: the event
 * store holds every record exactly once (no duplicate, per-stream revisions 0..n-1), the same event set as
 * an uninterrupted sync into another database, and the read models built from both are equal.
 */
const RANGE = ['--from', '2025-01-01', '--to', '2025-02-01'];
let sandbox: Sandbox;
let reference: TestDatabase;
let db: TestDatabase;

/**
 * What is circumstance of one database, not content, and left out of the comparison: event-store positions
 * (transaction ids differ between two databases), the SyncWindowCompleted events (their data holds the
 * run's own duration and the PSP's report id, so their ids differ) and the times derived from when a record
 * was observed or a window completed.
 */
const COMPARE = {
  exclude: [
    'commit_pos',
    'prepare_pos',
    'position',
    'event_id',
    'report_id',
    'completed_at',
    'detected_at',
    'detected_by_event',
    'updated_at',
    'updated_by_event',
    'resolved_at',
    'resolved_by_event',
  ],
  transform: {
    // discrepancies name the PSP's report ids of the rows and windows that prove them, and when a window completed
    values: `regexp_replace(t."values"::text, '"(report_id|completed_at)": "[^"]*"|"report_ids": \\[[^]]*\\]', '', 'g')`,
    // a count mismatch is one per register report: keyed by the PSP's report id
    id: `case when t.type = 'report_count_mismatch' then null else t.id end`,
    operation_key: `regexp_replace(t.operation_key, '^(report:[^:]+):.*$', '\\1')`,
    // text[] in the legs' views, a single event id in recon.exceptions: read both through jsonb
    evidence: `(select coalesce(array_agg(e order by e), '{}') from jsonb_array_elements_text(case jsonb_typeof(to_jsonb(t.evidence)) when 'array' then to_jsonb(t.evidence) else jsonb_build_array(to_jsonb(t.evidence)) end) e where e not in (select event_id::text from es_events where stream_id like 'sync-%'))`,
  },
};

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'faults-kill-sync', month: '2025-01', timezone: 'UTC', payments: 1100 },
    // The period read waits, so that the window is still open whatever the machine's speed.
    faults: { reportNotReadyPolls: 0, slowRate: 1, slowMs: 1500, appliesTo: (r) => r.path.endsWith('/transactions') },
  });
  [reference, db] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});

afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await reference?.drop();
  await db?.drop();
});

describe('kill -9 in the middle of a sync', () => {
  it('leaves nothing doubled or missing once run again, and the same read models as an uninterrupted sync', async () => {
    const project = sandbox.projects[0]!;
    // The uninterrupted reference runs alongside, into its own database.
    const referenceRun = runRecon(['sync', ...RANGE], reconEnv({ databaseUrl: reference.url, project }), 150_000);

    // Killed once some register batches are committed (the report has several), before the window completes.
    const victim = spawnRecon(['sync', ...RANGE], reconEnv({ databaseUrl: db.url, project }));
    await waitFor(async () => ((await countEvents(db.sql, 'payment-%').catch(() => 0)) > 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 10,
      what: 'the first committed batch',
    });
    victim.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');
    const partial = await countEvents(db.sql, 'payment-%');

    const ref = await referenceRun;
    expect(ref.code, ref.stderr.slice(-2000)).toBe(0);
    expect(ref.stdout).toMatch(/sync: 1 windows completed, 0 failed/);
    const expectedIds = await eventIds(reference.sql, 'payment-%');
    expect(expectedIds.length).toBeGreaterThan(3000);
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(expectedIds.length);
    expect(await recordedTypes(db.sql, 'sync-%')).toEqual({}); // the window never completed

    const again = await runRecon(['sync', ...RANGE], reconEnv({ databaseUrl: db.url, project }), 150_000);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(again.stdout).toMatch(/sync: 1 windows completed, 0 failed/);

    const integrity = await storeIntegrity(db.sql);
    expect(integrity.duplicateIds).toEqual([]);
    expect(integrity.duplicateContent).toEqual([]);
    expect(integrity.revisionGaps).toEqual([]);
    expect(integrity.streamHeadMismatches).toEqual([]);
    expect(await eventIds(db.sql, 'payment-%')).toEqual(expectedIds);
    expect(await eventIds(db.sql, 'rejections-%')).toEqual(await eventIds(reference.sql, 'rejections-%'));
    expect(await recordedTypes(db.sql, 'sync-%')).toEqual(await recordedTypes(reference.sql, 'sync-%'));
    expect(integrity.events).toBe((await storeIntegrity(reference.sql)).events);

    const projected = await Promise.all(
      [reference, db].map((target) => runRecon(['project'], reconEnv({ databaseUrl: target.url }), 150_000)),
    );
    for (const r of projected) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const expected = await viewDigests(reference.sql, COMPARE);
    expect(Object.keys(expected).length).toBeGreaterThan(8);
    expect(await viewDigests(db.sql, COMPARE)).toEqual(expected);
  }, 300_000); // two syncs, a rerun and two catch-ups: minutes on a loaded 2-core machine
});
