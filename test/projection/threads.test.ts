import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import type { Logger } from '../../src/log';
import {
  loadProjections,
  PROJECTION_COST,
  rebuildProjection,
  type RunnerDeps,
  threadSource,
} from '../../src/projector/runner';
import { POISON_ENV } from '../../src/projector/test-poison';
import { spreadPlan } from '../../src/projector/threads';
import { createPostgresEventStore } from '../../src/store/postgres';
import { eventsUpTo, projectionState, viewDigests } from '../faults/support/store-checks';
import { reconEnv } from '../../fixtures/psp-env';
import { runRecon } from '../faults/support/processes';
import { waitVisible } from '../ledger/visible';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A run's projections spread over two threads of one process (issue 26, threads.ts): a rebuild over two threads
 * gives every row a rebuild on one gives, each event applied once per build, the second group applied in a
 * worker thread of its own (its log lines say which), and what that thread sets aside reported as the
 * caller's own.
 */
let db: TestDatabase;
let deps: RunnerDeps;
const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];

function recordingLogger(): Logger {
  const at = (msg: string, fields?: Record<string, unknown>) => {
    lines.push({ msg, fields: fields ?? {} });
  };
  return { debug: at, info: at, warn: at, error: at, child: () => recordingLogger() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  const scenario = scenarioFor({
    seed: 'threads',
    payments: 300,
    month: '2025-01',
    timezone: 'Europe/Kyiv',
    subMerchants: 12,
  });
  for (const requests of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(requests);
  await waitVisible(db.sql, store);
  deps = {
    sql: db.sql,
    store,
    log: recordingLogger(),
    timezone: 'Europe/Kyiv',
    graceHours: 48,
    threadSource: threadSource({ databaseUrl: db.url }, db.sql),
  };
});

afterAll(async () => {
  delete process.env[POISON_ENV];
  await db?.drop();
});

describe('the projections split into groups of about equal cost', () => {
  it('every projection in one group; the two costliest apart; the groups within the cheapest ones of each other', async () => {
    const list = await loadProjections();
    const groups = (await spreadPlan(deps, list, 2))!;
    expect(groups).toHaveLength(2);
    expect(
      groups
        .flat()
        .map((p) => p.name)
        .sort(),
    ).toEqual(list.map((p) => p.name).sort());
    const where = (name: string) => groups.findIndex((g) => g.some((p) => p.name === name));
    expect(where('orders')).not.toBe(where('reconciliation'));
    const cost = (g: (typeof groups)[number]) => g.reduce((s, p) => s + (PROJECTION_COST[p.name] ?? 1), 0);
    expect(Math.abs(cost(groups[0]!) - cost(groups[1]!))).toBeLessThanOrEqual(PROJECTION_COST['operations_seen']!);
  });

  it('stays on one thread when asked for one, without a thread source, or for projections not of projections/', async () => {
    const list = await loadProjections();
    expect(await spreadPlan(deps, list, 1)).toBeUndefined();
    expect(await spreadPlan({ ...deps, threadSource: undefined }, list, 2)).toBeUndefined();
    expect(await spreadPlan(deps, [{ ...list[0]! }, list[1]!], 2)).toBeUndefined();
  });
});

describe('a rebuild over two threads', () => {
  it('gives every row of one thread, each event applied once per build, the second group in a worker thread', async () => {
    lines.length = 0;
    const two = await rebuildProjection(deps, undefined, { threads: 2, batchSize: 200 });
    const all = (await loadProjections()).map((p) => p.name);
    // the reports in projections/'s order, every build live at the head
    expect(two.projections.map((p) => p.name)).toEqual(all);
    const state = await projectionState(db.sql);
    for (const b of state.builds) {
      expect(b.checkpoint, b.name).toBe(state.head);
      expect(b.applied, b.name).toBe(await eventsUpTo(db.sql, b.checkpoint!));
    }
    for (const p of two.projections) expect([p.name, p.status, p.wentLive]).toEqual([p.name, 'live', true]);
    // each build started on the thread of its group: the worker thread's lines carry its id
    const started = lines.filter((l) => l.msg === 'projection build started');
    const onWorker = started.filter((l) => typeof l.fields['thread'] === 'number').map((l) => l.fields['projection']);
    const here = started.filter((l) => l.fields['thread'] === undefined).map((l) => l.fields['projection']);
    const groups = (await spreadPlan(deps, await loadProjections(), 2))!;
    expect(here.sort()).toEqual(groups[0]!.map((p) => p.name).sort());
    expect(onWorker.sort()).toEqual(groups[1]!.map((p) => p.name).sort());
    const byTwo = await viewDigests(db.sql);
    expect(byTwo['journal_entries']).not.toMatch(/^0:/);

    await rebuildProjection(deps, undefined, { threads: 1, batchSize: 200 });
    expect(await viewDigests(db.sql)).toEqual(byTwo);
  }, 300_000);

  it("an event the worker thread's group cannot apply is set aside and reported as on one thread", async () => {
    const groups = (await spreadPlan(deps, await loadProjections(), 2))!;
    const away = groups[1]![0]!.name;
    const [victim] = await db.sql<{ id: string }[]>`
      select event_id::text as id from es_events order by transaction_id, global_position offset 40 limit 1`;
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'threads-')), 'poison.json');
    writeFileSync(file, JSON.stringify({ [away]: [victim!.id] }));
    // read by the worker thread's own load of projections/ (this thread's list is loaded already, unpoisoned)
    process.env[POISON_ENV] = file;
    try {
      const report = await rebuildProjection(deps, undefined, { threads: 2, batchSize: 200 });
      const mine = report.projections.find((p) => p.name === away)!;
      expect(mine.setAside.map((a) => a.eventId)).toEqual([victim!.id]);
      expect(report.projections.filter((p) => p.setAside.length > 0).map((p) => p.name)).toEqual([away]);
      const [q] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from projection_quarantine where name = ${away} and event_id::text = ${victim!.id}`;
      expect(q!.n).toBe(1);
    } finally {
      delete process.env[POISON_ENV];
    }
  }, 300_000);
});

describe('recon project --threads', () => {
  it('the binary rebuilds over two threads with the rows of one; --threads goes without --share', async () => {
    const env = reconEnv({ databaseUrl: db.url, timezone: 'Europe/Kyiv' });
    const two = await runRecon(['project', '--rebuild', '--batch', '200', '--threads', '2'], env, 240_000);
    expect(two.code, two.stderr.slice(-2000)).toBe(0);
    expect(two.stdout.match(/live \(new build live\)/g)).toHaveLength((await loadProjections()).length);
    const byTwo = await viewDigests(db.sql);
    const one = await runRecon(['project', '--rebuild', '--batch', '200', '--threads', '1'], env, 240_000);
    expect(one.code, one.stderr.slice(-2000)).toBe(0);
    expect(await viewDigests(db.sql)).toEqual(byTwo);
    const both = await runRecon(['project', '--share', '--threads', '2'], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--threads goes without --share');
  }, 600_000);
});
