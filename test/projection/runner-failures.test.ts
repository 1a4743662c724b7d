import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Projection } from '../../src/projector/projection';
import {
  checkBuildsOnStore,
  ProjectionApplyError,
  ProjectionCheckpointMismatchError,
  projectionBuilds,
  runProjections,
  type RunnerDeps,
} from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { comparePositions, parsePosition, type EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendVisible, tallyDeps, tallyEvents, tallyProjection, tallyTotals } from './tally';

/** The projection runner (src/projector/runner.ts) when a build is not on the store or a projection cannot apply a batch. */

let db: TestDatabase;
let store: EventStore;
const ev = tallyEvents();
const tally = (name: string, opts: { failOn?: string } = {}) => tallyProjection({ name, ...opts });
const deps = (...projections: Projection[]): RunnerDeps => tallyDeps(db.sql, store, ...projections);
const totals = (view: string) => tallyTotals(db.sql, view);

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db?.drop();
});

describe('projection runner: failures', () => {
  it('a build made before migration 0800 (no checkpoint event id) whose checkpoint holds no event in the store is refused, not carried on', async () => {
    // docs/ledger.md: "Builds made before 0800 take the id at their checkpoint on their first run"; checkBuildsOnStore:
    // "A build made before the event ids were recorded counts as on the store when an event is at its checkpoint".
    await appendVisible(store, db.sql, 'pre-a', [ev('x', 10), ev('x', 5)]);
    await runProjections(deps(tally('pre0800')));
    const [live] = (await projectionBuilds(db.sql)).filter((b) => b.name === 'pre0800' && b.status === 'live');
    // as migration 0800 leaves a build made before it
    await db.sql`update projection_builds set checkpoint_event_id = null where schema_name = ${live!.schema}`;

    // The event store alone restored to an older backup (here: another database) and appended to since: its head
    // is past the checkpoint, and no event is at the checkpoint.
    const restored = await createTestDatabase();
    try {
      const restoredStore = createPostgresEventStore(restored.sql);
      await appendVisible(restoredStore, restored.sql, 'pre-a', [ev('x', 10)]);
      await appendVisible(restoredStore, restored.sql, 'pre-after-restore', [ev('x', 3)]);
      expect(comparePositions((await restoredStore.headPosition())!, parsePosition(live!.checkpoint!))).toBe(1);
      expect(await restoredStore.readAt(parsePosition(live!.checkpoint!))).toBeUndefined();

      const onRestored: RunnerDeps = { ...deps(tally('pre0800')), store: restoredStore };
      // what `recon store check` says
      expect
        .soft((await checkBuildsOnStore(onRestored)).find((b) => b.schema === live!.schema)?.problem?.code)
        .toBe('PROJECTION_CHECKPOINT_MISMATCH');
      const err = await runProjections(onRestored).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect.soft(err).toBeInstanceOf(ProjectionCheckpointMismatchError);
      expect(await totals('pre0800')).toEqual({ 'pre-a': 15n });
    } finally {
      await restored.drop();
    }
  });

  it('a projection whose apply keeps failing does not stop the other projections from following the store', async () => {
    const good = tally('good_one');
    const bad = tally('bad_one', { failOn: 'poison' });
    await appendVisible(store, db.sql, 'iso', [ev('x', 1)]);
    await runProjections(deps(good, bad), { batchSize: 1 });
    await appendVisible(store, db.sql, 'iso', [ev('poison', 2)]);
    // the bad projection fails on the poison event; the good one applies it
    await expect(runProjections(deps(good, bad), { batchSize: 1 })).rejects.toThrow('projection bug');
    expect((await totals('good_one'))['iso']).toBe(3n);

    // later events: the good projection must keep following (the worker retries the run every poll)
    await appendVisible(store, db.sql, 'iso', [ev('x', 100)]);
    await runProjections(deps(good, bad), { batchSize: 1 }).catch(() => undefined);
    await runProjections(deps(good, bad), { batchSize: 1 }).catch(() => undefined);
    expect((await totals('good_one'))['iso']).toBe(103n);
  });

  it('a projection whose apply fails does not keep a new build of another projection from going live', async () => {
    const good = tally('fresh_good');
    const bad = tally('fresh_bad', { failOn: 'venom' });
    await appendVisible(store, db.sql, 'iso2', [ev('venom', 1)]);
    await runProjections(deps(good, bad)).catch(() => undefined);
    expect((await projectionBuilds(db.sql)).filter((b) => b.name === 'fresh_good').map((b) => b.status)).toEqual([
      'live',
    ]);
  });

  it('the error of a failing apply names the projection, its build and the batch', async () => {
    const bad = tally('named_bad', { failOn: 'boom' });
    await appendVisible(store, db.sql, 'named', [ev('boom', 1)]);
    const err = await runProjections(deps(bad)).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(ProjectionApplyError);
    expect(err!.message).toMatch(
      /^projection named_bad \(build rm_named_bad_v1_b1\) could not apply the events \d+\/\d+ to \d+\/\d+: projection bug$/,
    );
    expect((err as ProjectionApplyError).code).toBe('PROJECTION_APPLY_FAILED');
  });
});
