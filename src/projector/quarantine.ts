import type { Sql } from '../db/connect';
import { Interrupted } from '../errors';
import { parsePosition } from '../store/types';
import { buildsOf } from './builds';
import { lockBlocking } from './locks';
import type { Projection, Tx } from './projection';
import type { RunnerDeps } from './runner-types';
import { selectProjections } from './load';
import { errorText, listQuarantine, markRetried, type QuarantinedEvent, recordQuarantine } from './quarantine-store';
import { rebuildProjection, runProjections } from './run';
import { contextFor } from './settings';
import { failsWhateverTheEvent } from './set-aside';

/**
 * The events a projection build set aside (table projection_quarantine, migration 2200; view
 * recon.quarantined_events; quarantine-store.ts): summed up for the nightly report and applied again by
 * `recon quarantine retry` once the code or the data is fixed.
 */

export type { QuarantinedEvent } from './quarantine-store';
export { listQuarantine } from './quarantine-store';

export interface QuarantineSummary {
  /** events set aside and not yet applied, over every build in use */
  readonly open: number;
  readonly projections: ReadonlyArray<{
    readonly projection: string;
    readonly open: number;
    readonly oldest: Date;
    /** the first few, in the log's order */
    readonly events: ReadonlyArray<Pick<QuarantinedEvent, 'eventId' | 'eventType' | 'position' | 'stream' | 'error'>>;
  }>;
}

/**
 * What the nightly report shows of the quarantine (a hook: the report calls it): how many events are set
 * aside per projection, since when, and the first five of each with their error.
 */
export async function quarantineSummary(sql: Sql): Promise<QuarantineSummary> {
  const open = await listQuarantine(sql);
  const byName = new Map<string, QuarantinedEvent[]>();
  for (const q of open) byName.set(q.projection, [...(byName.get(q.projection) ?? []), q]);
  return {
    open: open.length,
    projections: [...byName].map(([projection, qs]) => ({
      projection,
      open: qs.length,
      oldest: new Date(Math.min(...qs.map((q) => q.firstTriedAt.getTime()))),
      events: qs.slice(0, 5).map((q) => ({
        eventId: q.eventId,
        eventType: q.eventType,
        position: q.position,
        stream: q.stream,
        error: q.error,
      })),
    })),
  };
}

export interface RetryResult {
  readonly retried: readonly QuarantinedEvent[];
  /** still cannot be applied: left quarantined, one more attempt and the new error recorded */
  readonly failed: readonly QuarantinedEvent[];
}

/**
 * Applies the set-aside events again (after the code or the data is fixed), in the log's order:
 * - in place, for a projection whose rows are a function of each event (bank, journal, operations_seen):
 *   each event in a savepoint of one transaction per build, holding the projection's lock (a runner waits),
 *   to the build that set it aside, whose state holds the events after it already;
 * - by a replay from zero, for a projection whose rows depend on the order of events (`retryByReplay`:
 *   reconciliation, orders, settlement, payouts; `replay` asks it of every one): a new build beside the live
 *   one, which replaces it when caught up, so that the read model equals a replay.
 * Applied ones are marked `retried`; one that still fails stays quarantined with its new error.
 */
export async function retryQuarantined(
  deps: RunnerDeps,
  opts: { projection?: string; eventId?: string; replay?: boolean; signal?: AbortSignal } = {},
): Promise<RetryResult> {
  const open = await listQuarantine(deps.sql, opts);
  const retried: QuarantinedEvent[] = [];
  const failed: QuarantinedEvent[] = [];
  const projections = await selectProjections(deps, [...new Set(open.map((q) => q.projection))]);
  for (const p of projections) {
    const mine = open.filter((q) => q.projection === p.name);
    const r =
      opts.replay || p.retryByReplay
        ? // a replay applies every event of the projection again: all its set-aside ones, whatever the filter
          await retryByReplay(deps, p.name, await listQuarantine(deps.sql, { projection: p.name }), opts.signal)
        : await retryInPlace(deps, p, mine);
    retried.push(...r.retried);
    failed.push(...r.failed);
  }
  return { retried, failed };
}

async function retryInPlace(deps: RunnerDeps, p: Projection, open: readonly QuarantinedEvent[]): Promise<RetryResult> {
  const retried: QuarantinedEvent[] = [];
  const failed: QuarantinedEvent[] = [];
  await deps.sql.begin(async (tx) => {
    await lockBlocking(tx, p.name);
    for (const build of await buildsOf(tx, p.name)) {
      const ctx = contextFor(deps, build);
      for (const q of open.filter((m) => m.build === build.schema_name)) {
        const event = await deps.store.readAt(parsePosition(q.position));
        if (!event || event.id.toLowerCase() !== q.eventId.toLowerCase()) {
          failed.push({ ...q, error: `the event store holds no event ${q.eventId} at ${q.position}` });
          continue;
        }
        try {
          await tx.savepoint((sp) => p.apply(sp as Tx, [event], ctx));
        } catch (e) {
          if (failsWhateverTheEvent(e)) throw e;
          await recordQuarantine(tx, build, event, e);
          failed.push({ ...q, error: errorText(e), attempts: q.attempts + 1 });
          continue;
        }
        await markRetried(tx, build.schema_name, q.eventId);
        retried.push({ ...q, status: 'retried', attempts: q.attempts + 1 });
        deps.log.info('quarantined event applied', { projection: p.name, schema: build.schema_name, event: q.eventId });
      }
    }
  });
  return { retried, failed };
}

/** A new build from zero applies every event in order; what it set aside again is still quarantined. */
async function retryByReplay(
  deps: RunnerDeps,
  name: string,
  open: readonly QuarantinedEvent[],
  signal: AbortSignal | undefined,
): Promise<RetryResult> {
  deps.log.info('quarantined events applied again by a replay from zero (a new build beside the live one)', {
    projection: name,
    events: open.length,
  });
  await rebuildProjection(deps, name, signal ? { signal } : {});
  // another runner (the worker's follower) may hold the projection meanwhile: it carries the new build on
  // too; the retry waits until no build of the projection is under way
  while ((await buildsOf(deps.sql, name)).some((b) => b.status === 'building')) {
    if (signal?.aborted)
      throw new Interrupted(`projection ${name}: the replay from zero was interrupted; run the retry again`);
    await new Promise((r) => setTimeout(r, 200));
    await runProjections(deps, { names: [name], ...(signal ? { signal } : {}) });
  }
  const again = new Map((await listQuarantine(deps.sql, { projection: name })).map((q) => [q.eventId, q]));
  const retried: QuarantinedEvent[] = [];
  const failed: QuarantinedEvent[] = [];
  for (const q of open) {
    const still = again.get(q.eventId);
    if (still) failed.push(still);
    else {
      await markRetried(deps.sql, q.build, q.eventId);
      retried.push({ ...q, status: 'retried', attempts: q.attempts + 1 });
    }
  }
  return { retried, failed };
}
