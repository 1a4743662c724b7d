import type { Sql } from '../../src/db/connect';
import {
  rebuildProjection,
  runProjections,
  type Report,
  type RunnerDeps,
  type RunOptions,
} from '../../src/projector/runner';
import type { AppendRequest } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';

/**
 * Projection tests as given / when / then, after emmett's `PostgreSQLProjectionSpec`: given the events
 * already projected, when these are appended and projected, then the rows (or queries) are these. Each case
 * is checked live (given projected, then when) and again after a replay from zero at several batch sizes,
 * so every case also proves that a replay equals the live build whatever the batches.
 *
 *   const spec = projectionSpec(() => deps(fx.db.sql, fx.store));
 *   await spec.given(sale('p-1')).when(refund('p-1')).expect(async (sql, run) => {
 *     expect(await balances(sql), run).toEqual(...);
 *   });
 *
 * Each argument of given/when is one append: a request, or an array of requests appended together (one
 * transaction: the runner never splits it between batches). The store is the caller's (one database per file,
 * as the other tests): a case appends to it, so a later case sees the earlier ones' events too. "Then" is
 * spelled `expect`: an object with a `then` would be taken for a promise by `await`.
 */

/** The batch sizes each case is replayed at: one event (every append in a batch of its own), a few, all. */
export const SPEC_BATCH_SIZES: readonly number[] = [1, 3, 1000];

/**
 * Catches the deps' projections up to the head of the store. The store's readAll stops below the oldest
 * transaction still open anywhere on the server (other test databases included), and the runner takes a
 * short page for "caught up": it runs again until every checkpoint is the head.
 */
export async function catchUp(deps: RunnerDeps, opts: RunOptions = {}): Promise<Report> {
  for (let attempt = 0; ; attempt++) {
    const report = await runProjections(deps, opts);
    if (report.projections.every((p) => p.position === report.head) || attempt >= 200) return report;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Rebuilds the named projections (default: every one of the deps) from zero in batches, then catches up. */
export async function replayInBatches(deps: RunnerDeps, batchSize: number, names?: readonly string[]): Promise<Report> {
  for (const name of names ?? (deps.projections ?? []).map((p) => p.name))
    await rebuildProjection(deps, name, { batchSize });
  return catchUp(deps, { batchSize });
}

/** What a case is told: how its rows were built ("live", or "replay in batches of 3"), to name a failure. */
export type Then = (sql: Sql, run: string) => Promise<void>;

export interface ProjectionSpecOptions {
  readonly batchSizes?: readonly number[];
  /** the projections replayed (default: every one of the deps) */
  readonly names?: readonly string[];
}

/** One append: a request, or requests appended together. */
export type Append = AppendRequest | readonly AppendRequest[];

export interface ProjectionSpec {
  given(...appends: readonly Append[]): {
    when(...appends: readonly Append[]): { expect(assert: Then): Promise<void> };
  };
  when(...appends: readonly Append[]): { expect(assert: Then): Promise<void> };
}

async function append(deps: RunnerDeps, appends: readonly Append[]): Promise<void> {
  if (appends.length === 0) return;
  for (const a of appends) await deps.store.appendMany(Array.isArray(a) ? a : [a as AppendRequest]);
  await waitVisible(deps.sql, deps.store);
}

async function runCase(
  deps: RunnerDeps,
  given: readonly Append[],
  when: readonly Append[],
  assert: Then,
  opts: ProjectionSpecOptions,
): Promise<void> {
  const sizes = opts.batchSizes ?? SPEC_BATCH_SIZES;
  await append(deps, given);
  await catchUp(deps, { batchSize: sizes[0] });
  await append(deps, when);
  await catchUp(deps, { batchSize: sizes[0] });
  await assert(deps.sql, 'live');
  for (const size of sizes) {
    await replayInBatches(deps, size, opts.names);
    await assert(deps.sql, `replay in batches of ${size}`);
  }
}

/** A spec over the projections of `deps` (called when a case runs: the test's database exists by then). */
export function projectionSpec(deps: () => RunnerDeps, opts: ProjectionSpecOptions = {}): ProjectionSpec {
  const when =
    (given: readonly Append[]) =>
    (...appends: readonly Append[]) => ({
      expect: (assert: Then) => runCase(deps(), given, appends, assert, opts),
    });
  return { given: (...given) => ({ when: when(given) }), when: when([]) };
}
