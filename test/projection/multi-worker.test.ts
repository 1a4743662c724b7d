import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjections, runProjections } from '../../src/projector/runner';
import type { Projection } from '../../src/projector/projection';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';
import { killAll, runRecon, spawnRecon, waitFor, type ReconProcess } from '../faults/support/processes';
import { eventsUpTo, projectionState, viewDigests } from '../faults/support/store-checks';
import { appendVisible, tallyDeps, tallyEvents, tallyProjection, tallyTotals } from './tally';

/**
 * More than one worker (issue 26): projections advance each at its own pace, and several `recon project
 * --share` workers share the projections of one store; one killed (SIGKILL) in the middle of its builds
 * loses its claims with its connection, the other takes them over, and the read models equal a single
 * worker's build from zero.
 */
let db: TestDatabase;
let store: EventStore;
/** the two workers' store: the sandbox scenario's events alone */
let shared: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  shared = await createTestDatabase();
});

afterAll(async () => {
  await killAll();
  await db?.drop();
  await shared?.drop();
});

/** The projections a worker's log says it claimed. */
function claimed(p: ReconProcess): Set<string> {
  const names = p
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; projection?: string })
    .filter((l) => l.msg === 'projection claimed by this worker')
    .map((l) => l.projection!);
  return new Set(names);
}

async function builds() {
  return shared.sql<{ name: string; status: string; checkpoint: string | null; applied: number }[]>`
    select name, status, checkpoint, events_applied::int as applied from projection_builds
    where status in ('building', 'live') order by name`;
}

describe('projections independent of each other', () => {
  it('a projection ahead does not wait for a slow one within the read window: it reaches the head while the slow one is held', async () => {
    const ev = tallyEvents();
    for (let i = 0; i < 10; i++) await appendVisible(store, db.sql, `s-pace-${i % 3}`, [ev('x', i + 1)]);
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const slowTally = tallyProjection({ name: 'slow' });
    // the slow stand-in: its first batch waits until the test lets it go
    const slow: Projection = {
      ...slowTally,
      async apply(tx, events, ctx) {
        await gate;
        return slowTally.apply(tx, events, ctx);
      },
    };
    const fast = tallyProjection({ name: 'fast' });
    // batches of 4 cut at whole appends: three batches, within the window a build may run ahead (read-window.ts;
    // further ahead it would wait for the slow one: test/projection/read-window.test.ts)
    const run = runProjections(tallyDeps(db.sql, store, slow, fast), { batchSize: 4 });
    const head = await store.headPosition();
    const at = async (name: string) =>
      (
        await db.sql<{ checkpoint: string | null }[]>`
        select checkpoint from projection_builds where name = ${name} and status in ('building', 'live')`
      )[0]?.checkpoint ?? null;
    // every batch for the fast one while the slow one has not finished its first
    await waitFor(async () => (await at('fast')) === `${head!.commit}/${head!.prepare}`, {
      timeoutMs: 60_000,
      what: 'the fast projection at the head',
    });
    expect(await at('slow')).toBeNull();
    open();
    const report = await run;
    expect(report.projections.map((p) => [p.name, p.status, p.applied])).toEqual([
      ['slow', 'live', 10],
      ['fast', 'live', 10],
    ]);
    expect(await tallyTotals(db.sql, 'slow')).toEqual(await tallyTotals(db.sql, 'fast'));
  });
});

describe('two worker processes share the projections of one store', () => {
  it('one killed mid-build: the other takes its projections over; read models equal a single-worker rebuild', async () => {
    const sharedStore = createPostgresEventStore(shared.sql);
    const scenario = scenarioFor({
      seed: 'multi-worker',
      payments: 450,
      month: '2025-01',
      timezone: 'Europe/Kyiv',
      subMerchants: 20,
    });
    for (const requests of appendChunks(scenarioEvents(scenario), 500)) await sharedStore.appendMany(requests);
    await waitVisible(shared.sql, sharedStore);
    const { events } = await projectionState(shared.sql);
    expect(events).toBeGreaterThan(2000);
    const all = (await loadProjections()).map((p) => p.name).sort();

    const env = reconEnv({ databaseUrl: shared.url, timezone: 'Europe/Kyiv' });
    // at most four each: the seven projections are spread over both workers
    const args = ['project', '--share', '--max-projections', '4', '--batch', '20'];
    const [a, b] = [spawnRecon(args, env), spawnRecon(args, env)] as [ReconProcess, ReconProcess];
    // killed once each of A's builds has committed a few batches, B's builds under way too
    const cut = await waitFor(
      async () => {
        const bs = await builds().catch(() => []);
        const mine = (p: ReconProcess) => bs.filter((x) => claimed(p).has(x.name));
        const going = (p: ReconProcess) => claimed(p).size > 0 && mine(p).length === claimed(p).size;
        return going(a) && going(b) && mine(a).every((x) => x.applied >= 50) ? bs : undefined;
      },
      { timeoutMs: 200_000, intervalMs: 20, what: 'both workers building' },
    ).catch(async (e: Error) => {
      throw new Error(
        `${e.message}\nbuilds: ${JSON.stringify(await builds())}\n--- a:\n${a.stderr().slice(-2000)}\n--- b:\n${b.stderr().slice(-2000)}`,
      );
    });
    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const fromA = [...claimed(a)];
    const fromB = [...claimed(b)];
    // shared: each worker held projections the other did not, and A died with work left on one of its own
    expect(fromA.filter((n) => fromB.includes(n))).toEqual([]);
    expect(fromA.length + fromB.length).toBeGreaterThanOrEqual(5);
    const unfinished = cut.filter((x) => fromA.includes(x.name) && x.applied < events);
    expect(unfinished.length).toBeGreaterThan(0);

    const endB = await Promise.race([
      b.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('worker b did not finish')), 360_000)),
    ]);
    expect(endB, b.stderr().slice(-3000)).toEqual({ code: 0, signal: null });
    // B took over every projection A left unfinished
    for (const x of unfinished) expect(claimed(b).has(x.name), x.name).toBe(true);

    // every event applied exactly once, every projection live at the head
    const state = await projectionState(shared.sql);
    expect(state.builds.map((x) => x.name)).toEqual(all);
    for (const x of state.builds) {
      expect(x.checkpoint, x.name).toBe(state.head);
      expect(x.applied, x.name).toBe(await eventsUpTo(shared.sql, x.checkpoint!));
    }
    expect((await builds()).every((x) => x.status === 'live')).toBe(true);
    const byTwo = await viewDigests(shared.sql);
    expect(byTwo.journal_entries).not.toMatch(/^0:/);

    const single = await runRecon(['project', '--rebuild'], env, 180_000);
    expect(single.code, single.stderr.slice(-2000)).toBe(0);
    expect(await viewDigests(shared.sql)).toEqual(byTwo);
  }, 900_000); // two worker processes, then a rebuild, on a loaded machine
});
