import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log';
import type { Projection } from '../../src/projector/projection';
import {
  checkBuildsOnStore,
  followProjections,
  ProjectionAheadOfStoreError,
  ProjectionCheckpointMismatchError,
  projectionBuilds,
  rebuildProjection,
  runProjections,
  type RunnerDeps,
} from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { comparePositions, parsePosition, type EventStore, type NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';
import { appendVisible, tallyDeps, tallyEvents, tallyProjection, tallyTotals } from './tally';

let db: TestDatabase;
let store: EventStore;
const ev = tallyEvents();
const counter = (version: number, opts: { failOn?: string } = {}) => tallyProjection({ version, ...opts });
const deps = (p: Projection): RunnerDeps => tallyDeps(db.sql, store, p);
const append = (stream: string, events: NewEvent[]) => appendVisible(store, db.sql, stream, events);
const totals = () => tallyTotals(db.sql);

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db?.drop();
});

describe('projection runner', () => {
  it('builds from zero, publishes views, then applies only new events (exactly once)', async () => {
    await append('s-a', [ev('x', 10), ev('x', 5)]);
    await append('s-b', [ev('x', 7)]);
    const r1 = await runProjections(deps(counter(1)), { batchSize: 2 });
    expect(r1.projections[0]).toMatchObject({ name: 'tally', status: 'live', applied: 3, wentLive: true });
    expect(await totals()).toEqual({ 's-a': 15n, 's-b': 7n });
    const r2 = await runProjections(deps(counter(1)));
    expect(r2.projections[0]!.applied).toBe(0);
    await append('s-a', [ev('x', 1)]);
    const r3 = await runProjections(deps(counter(1)));
    expect(r3.projections[0]!.applied).toBe(1);
    expect(r3.projections[0]!.position).toBe(r3.head);
    expect(await totals()).toEqual({ 's-a': 16n, 's-b': 7n });
  });

  it('a failing batch leaves the checkpoint where it was; the next run resumes from it', async () => {
    // three appends: a batch never splits one, so each can be a batch of its own
    for (const e of [ev('x', 100), ev('boom', 1), ev('x', 2)]) await append('s-c', [e]);
    await expect(runProjections(deps(counter(1, { failOn: 'boom' })), { batchSize: 1 })).rejects.toThrow(
      'projection bug',
    );
    // the first event of s-c was committed in its own batch, the failing one not
    expect((await totals())['s-c']).toBe(100n);
    const r = await runProjections(deps(counter(1)), { batchSize: 1 });
    expect(r.projections[0]!.applied).toBe(2);
    expect((await totals())['s-c']).toBe(103n);
  });

  it('two runners at once never apply an event twice', async () => {
    for (let i = 0; i < 20; i++) await append(`s-par-${i % 3}`, [ev('x', 1), ev('x', 1)]);
    const before = await db.sql<{ n: bigint }[]>`select sum(events)::int8 as n from recon.tally`;
    const results = await Promise.all([1, 2, 3].map(() => runProjections(deps(counter(1)), { batchSize: 3 })));
    const after = await db.sql<{ n: bigint }[]>`select sum(events)::int8 as n from recon.tally`;
    expect(after[0]!.n - before[0]!.n).toBe(40n);
    expect(results.reduce((s, r) => s + r.projections[0]!.applied, 0)).toBe(40);
    // a last run sees everything applied
    expect((await runProjections(deps(counter(1)))).projections[0]!.applied).toBe(0);
  });

  it('never splits an append between two batches', async () => {
    const seen: string[][] = [];
    const base = counter(1);
    const recording: Projection = {
      ...base,
      name: 'tally',
      async apply(tx, events, ctx) {
        seen.push(events.map((e) => e.position.commit.toString()));
        await base.apply(tx, events, ctx);
      },
    };
    for (let i = 0; i < 4; i++) await append(`s-whole-${i}`, [ev('x', 1), ev('x', 1), ev('x', 1)]);
    await append(
      's-whole-big',
      Array.from({ length: 7 }, () => ev('x', 1)),
    );
    const r = await runProjections(deps(recording), { batchSize: 2 });
    expect(r.projections[0]!.applied).toBe(19);
    const batchOf = new Map<string, number>();
    seen.forEach((commits, i) => {
      for (const c of commits) {
        expect(batchOf.get(c) ?? i).toBe(i);
        batchOf.set(c, i);
      }
    });
    // a transaction longer than the batch size is one longer batch
    expect(Math.max(...seen.map((b) => b.length))).toBe(7);
    expect((await totals())['s-whole-big']).toBe(7n);
  });

  it('stops at `until`', async () => {
    await append('s-until', [ev('x', 1)]);
    const r1 = await append('s-until', [ev('x', 2)]);
    await append('s-until', [ev('x', 4)]);
    await runProjections(deps(counter(1)), { until: r1.position! });
    expect((await totals())['s-until']).toBe(3n);
    await runProjections(deps(counter(1)));
    expect((await totals())['s-until']).toBe(7n);
  });

  it('a new version builds beside the live one and replaces it when caught up', async () => {
    const v1 = await totals();
    const [liveBefore] = (await projectionBuilds(db.sql)).filter((b) => b.status === 'live');
    const r = await runProjections(deps(counter(2)), { batchSize: 7 });
    expect(r.projections[0]).toMatchObject({ version: 2, status: 'live', wentLive: true });
    const v2 = await totals();
    expect(Object.keys(v2)).toEqual(Object.keys(v1));
    for (const k of Object.keys(v1)) expect(v2[k]).toBe(v1[k]! * 2n);
    const builds = await projectionBuilds(db.sql);
    expect(builds.map((b) => [b.version, b.status])).toEqual([[2, 'live']]);
    const [gone] = await db.sql`select 1 from information_schema.schemata where schema_name = ${liveBefore!.schema}`;
    expect(gone).toBeUndefined();
  });

  it('rebuild of the same version gives the same read model', async () => {
    const before = await totals();
    const r = await rebuildProjection(deps(counter(2)), 'tally', { batchSize: 1000 });
    expect(r.projections[0]!.wentLive).toBe(true);
    expect(r.projections[0]!.totalApplied).toBeGreaterThan(0);
    expect(await totals()).toEqual(before);
  });

  it('follows the store live until aborted', async () => {
    const controller = new AbortController();
    const seen: number[] = [];
    const following = followProjections(deps(counter(2)), {
      signal: controller.signal,
      pollMs: 500,
      onReport: (r) => seen.push(r.projections[0]!.applied),
    });
    await append('s-live', [ev('x', 21)]);
    for (let i = 0; i < 200 && (await totals())['s-live'] === undefined; i++)
      await new Promise((res) => setTimeout(res, 25));
    controller.abort();
    await following;
    expect((await totals())['s-live']).toBe(42n);
  });

  it("a build past the event store's head (a store restored from an older backup) stops the run; a rebuild replaces it", async () => {
    const before = await totals();
    const [live] = (await projectionBuilds(db.sql)).filter((b) => b.status === 'live');
    // as if the store had been restored to an older backup: the read model's position is beyond everything it has
    const ahead = '999999999999/999999999';
    await db.sql`update projection_builds set checkpoint = ${ahead} where schema_name = ${live!.schema}`;
    await append('s-after-restore', [ev('x', 5)]);

    const err = await runProjections(deps(counter(2))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProjectionAheadOfStoreError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `projection tally \\(build ${live!.schema}\\) is at position ${ahead}, past the event store's head .*recon project --rebuild`,
      ),
    );
    expect((await projectionBuilds(db.sql)).find((b) => b.schema === live!.schema)?.checkpoint).toBe(ahead);

    const r = await rebuildProjection(deps(counter(2)), 'tally');
    expect(r.projections[0]).toMatchObject({ status: 'live', wentLive: true });
    expect(await totals()).toEqual({ ...before, 's-after-restore': 10n });
    await expect(runProjections(deps(counter(2)))).resolves.toBeDefined();
  });
});

describe('projection runner: a checkpoint must hold the event the build last applied', () => {
  it('records the event at each checkpoint, and takes one for a build made before it was recorded', async () => {
    await append('s-check', [ev('x', 1)]);
    await runProjections(deps(counter(2)));
    const [live] = await db.sql<{ schema_name: string; checkpoint: string; checkpoint_event_id: string }[]>`
      select schema_name, checkpoint, checkpoint_event_id::text from projection_builds where name = 'tally' and status = 'live'`;
    const last = (await store.readStream('s-check')).at(-1)!;
    expect(live!.checkpoint_event_id).toBe(last.id);
    expect((await store.readAt(last.position))?.id).toBe(last.id);

    // a build from before migration 0800: the id is taken from the store at the next run, which goes on
    await db.sql`update projection_builds set checkpoint_event_id = null where schema_name = ${live!.schema_name}`;
    await append('s-check', [ev('x', 2)]);
    await expect(runProjections(deps(counter(2)))).resolves.toMatchObject({ projections: [{ applied: 1 }] });
    const [again] = await db.sql<
      { checkpoint_event_id: string | null }[]
    >`select checkpoint_event_id::text from projection_builds where schema_name = ${live!.schema_name}`;
    expect(again!.checkpoint_event_id).toBe((await store.readStream('s-check')).at(-1)!.id);
  });

  it('another event at the checkpoint stops the run, naming both events', async () => {
    const [live] = await db.sql<{ schema_name: string; checkpoint: string; checkpoint_event_id: string }[]>`
      select schema_name, checkpoint, checkpoint_event_id::text from projection_builds where name = 'tally' and status = 'live'`;
    const other = crypto.randomUUID();
    await db.sql`update projection_builds set checkpoint_event_id = ${other}::uuid where schema_name = ${live!.schema_name}`;
    const err = await runProjections(deps(counter(2))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProjectionCheckpointMismatchError);
    expect((err as ProjectionCheckpointMismatchError).code).toBe('PROJECTION_CHECKPOINT_MISMATCH');
    // what recon store check reports, without changing anything
    expect(await checkBuildsOnStore(deps(counter(2)))).toEqual([
      {
        name: 'tally',
        schema: live!.schema_name,
        status: 'live',
        checkpoint: live!.checkpoint,
        problem: { code: 'PROJECTION_CHECKPOINT_MISMATCH', message: (err as Error).message },
      },
    ]);
    expect((err as Error).message).toBe(
      `projection tally (build ${live!.schema_name}) last applied event ${other} at position ${live!.checkpoint}, but the event store holds event ` +
        `${live!.checkpoint_event_id} there: the event store was restored from an older backup and appended to since, or replaced, while the read ` +
        'models were not; rebuild them with recon project --rebuild',
    );
    await db.sql`update projection_builds set checkpoint_event_id = ${live!.checkpoint_event_id}::uuid where schema_name = ${live!.schema_name}`;
    expect((await checkBuildsOnStore(deps(counter(2)))).map((c) => c.problem)).toEqual([null]);
  });

  it('a store restored to an older backup and appended to past the checkpoint is refused, not skipped; a rebuild replaces the build', async () => {
    // The read models stay in this database; the event store is another one, as after a restore of the
    // store alone: it lacks the events the read model applied last, and new events were appended to it
    // since, so its head is past the read model's checkpoint (transaction ids are server-wide).
    const restored = await createTestDatabase();
    try {
      const restoredStore = createPostgresEventStore(restored.sql);
      await restoredStore.append('s-a', [ev('x', 10), ev('x', 5)]);
      const late = await restoredStore.append('s-appended-after-restore', [ev('x', 3)]);
      await waitVisible(restored.sql, restoredStore);
      const [live] = (await projectionBuilds(db.sql)).filter((b) => b.status === 'live');
      expect(comparePositions((await restoredStore.headPosition())!, late.position!)).toBe(0);
      expect(comparePositions(late.position!, parsePosition(live!.checkpoint!))).toBe(1);

      const onRestored: RunnerDeps = { ...deps(counter(2)), store: restoredStore };
      const err = await runProjections(onRestored).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProjectionCheckpointMismatchError);
      expect((err as Error).message).toMatch(
        new RegExp(
          `build ${live!.schema}\\) last applied event [0-9a-f-]+ at position ${live!.checkpoint}, but the event store holds no event there`,
        ),
      );
      expect((await projectionBuilds(db.sql)).find((b) => b.schema === live!.schema)?.checkpoint).toBe(
        live!.checkpoint,
      );

      const r = await rebuildProjection(onRestored, 'tally');
      expect(r.projections[0]).toMatchObject({ status: 'live', wentLive: true, totalApplied: 3 });
      expect(await totals()).toEqual({ 's-a': 30n, 's-appended-after-restore': 6n });
      await expect(runProjections(onRestored)).resolves.toBeDefined();
    } finally {
      await restored.drop();
    }
  });
});

describe('projection runner: the settings a build applies events with', () => {
  let sdb: TestDatabase;
  let sstore: EventStore;
  beforeAll(async () => {
    sdb = await createTestDatabase();
    sstore = createPostgresEventStore(sdb.sql);
  });
  afterAll(async () => sdb?.drop());

  // records, per event, the time zone and grace period it was applied with
  const settingsProbe: Projection = {
    name: 'probe',
    version: 1,
    handles: 'every event',
    async setup(tx, ctx) {
      await tx.unsafe(
        `create table ${ctx.schema}.applied (event_id uuid primary key, timezone text not null, grace int not null)`,
      );
    },
    async apply(tx, events, ctx) {
      await tx`insert into ${tx(ctx.schema)}.applied ${tx(events.map((e) => ({ event_id: e.id, timezone: ctx.timezone, grace: ctx.graceHours })))}`;
    },
    views(ctx) {
      return [
        `create or replace view recon.probe as select timezone, grace, count(*)::int8 as events from ${ctx.schema}.applied group by timezone, grace`,
      ];
    },
  };
  const run = (timezone: string, graceHours: number) =>
    runProjections({
      sql: sdb.sql,
      store: sstore,
      log: silentLogger,
      timezone,
      graceHours,
      projections: [settingsProbe],
    });
  const probe = async () =>
    (await sdb.sql<{ timezone: string; grace: number; events: bigint }[]>`select * from recon.probe order by 1, 2`).map(
      (r) => [r.timezone, r.grace, Number(r.events)],
    );
  const appendVisible = async (stream: string) => {
    await sstore.append(stream, [ev('s', 1)]);
    await waitVisible(sdb.sql, sstore);
  };

  it('a change of RECON_TIMEZONE or RECON_GRACE_HOURS rebuilds beside the live build; a build never mixes settings', async () => {
    await appendVisible('p-1');
    await appendVisible('p-2');
    expect((await run('UTC', 48)).projections[0]).toMatchObject({ status: 'live', wentLive: true, totalApplied: 2 });
    expect(await probe()).toEqual([['UTC', 48, 2]]);

    await appendVisible('p-3');
    const same = await run('UTC', 48);
    expect(same.projections[0]).toMatchObject({ wentLive: false, applied: 1 });

    await appendVisible('p-4');
    const kyiv = await run('Europe/Kyiv', 48);
    expect(kyiv.projections[0]).toMatchObject({ status: 'live', wentLive: true, totalApplied: 4 });
    expect(await probe()).toEqual([['Europe/Kyiv', 48, 4]]);
    expect((await projectionBuilds(sdb.sql)).map((b) => [b.status, b.timezone, b.graceHours])).toEqual([
      ['live', 'Europe/Kyiv', 48],
    ]);

    const grace = await run('Europe/Kyiv', 24);
    expect(grace.projections[0]).toMatchObject({ wentLive: true, totalApplied: 4 });
    expect(await probe()).toEqual([['Europe/Kyiv', 24, 4]]);
  });

  it('a build made before settings were recorded keeps going with the current ones', async () => {
    await sdb.sql`update projection_builds set timezone = null, grace_hours = null where name = 'probe' and status = 'live'`;
    await appendVisible('p-5');
    const r = await run('Europe/Kyiv', 24);
    expect(r.projections[0]).toMatchObject({ wentLive: false, applied: 1 });
    expect((await projectionBuilds(sdb.sql)).map((b) => [b.status, b.timezone, b.graceHours])).toEqual([
      ['live', 'Europe/Kyiv', 24],
    ]);
  });
});
