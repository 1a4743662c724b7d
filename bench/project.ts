import { handlesAny } from '../src/projector/handlers';
import type { Projection } from '../src/projector/projection';
import { defaultThreads, loadProjections, rebuildProjection, type RunnerDeps } from '../src/projector/runner';
import { createPostgresEventStore } from '../src/store/postgres';
import type { Position } from '../src/store/types';
import { appendChunks, scenarioEvents, scenarioFor } from '../fixtures/scenario-events';
import { cpuPer, serverCpuMeter } from './cpu';
import { perSecond, sampleRss, timed, type BenchContext } from './harness';

/**
 * Issue 5's projection benchmark: rebuild every projection of projections/ from zero over ~1M events
 * derived from the sandbox's scenario (register rows per receiver, period records, webhooks, the
 * directory), beside `readAll` alone over the same events (the ceiling). Peak RSS is sampled during the
 * rebuild, and RSS is compared between the middle and the end of the rebuild: it must not grow with the
 * number of events. BENCH_PROJECTIONS=journal,... restricts the projections, BENCH_PROJECT_EVENTS sets the
 * number of events, BENCH_BATCH the batch size (default 5,000), BENCH_THREADS the threads the rebuild is spread
 * over (default 1, as `recon project --rebuild`; src/projector/threads.ts). The
 * peak RSS is the whole process's (every thread's heap); the heap after each collection is the main thread's.
 *
 * Then the reference of issue 26, in the same run over the same events: the same rebuild with every projection
 * held to the pace of the slowest at each batch (`inLockstep`: none starts batch k+1 before all applied batch k,
 * as the runner did before), so that the gain of independent projections is a ratio measured here
 * (BENCH_NO_LOCKSTEP=1 leaves it out).
 */

/**
 * The projections held in lockstep: each one's k-th batch waits until every one has reached its k-th batch.
 * Every batch reaches apply (`handles: 'every event'`), so that all count the same batches.
 */
function inLockstep(list: readonly Projection[]): Projection[] {
  const barriers = new Map<number, { arrived: number; all: Promise<void>; open: () => void }>();
  const calls = new Map<string, number>();
  const arrive = (k: number): Promise<void> => {
    let b = barriers.get(k);
    if (!b) {
      let open!: () => void;
      const all = new Promise<void>((r) => {
        open = r;
      });
      b = { arrived: 0, all, open };
      barriers.set(k, b);
    }
    if (++b.arrived === list.length) {
      b.open();
      barriers.delete(k);
    }
    return b.all;
  };
  return list.map((p) => ({
    ...p,
    handles: 'every event' as const,
    async apply(tx, events, ctx) {
      const k = calls.get(p.name) ?? 0;
      calls.set(p.name, k + 1);
      await arrive(k);
      if (handlesAny(p.handles, events)) await p.apply(tx, events, ctx);
    },
  }));
}

const MB = 1024 * 1024;

export async function run(ctx: BenchContext): Promise<void> {
  // BENCH_PROJECT_EVENTS: another size (to compare memory at two sizes)
  const sized = Number(process.env['BENCH_PROJECT_EVENTS'] ?? '');
  const target = Number.isInteger(sized) && sized > 0 ? sized : ctx.quick ? 50_000 : 1_000_000;
  // about 4.7 events per order in the sandbox's default mix
  const payments = Math.ceil(target / 4.7);
  const store = createPostgresEventStore(ctx.sql);
  const scenario = scenarioFor({
    seed: 'bench-project',
    payments,
    month: '2025-01',
    timezone: 'Europe/Kyiv',
    subMerchants: 200,
  });

  const fill = await timed(async () => {
    let n = 0;
    for (const requests of appendChunks(scenarioEvents(scenario), 2_000)) {
      await store.appendMany(requests);
      n += requests.reduce((s, r) => s + r.events.length, 0);
      if (n >= target) break;
    }
    return n;
  });
  const events = fill.result;
  ctx.note(
    `${events.toLocaleString('en-US')} events from the sandbox scenario (${payments.toLocaleString('en-US')} orders) appended in ${(fill.ms / 1000).toFixed(1)} s`,
  );

  // the ceiling: readAll alone, same batch size as the rebuild
  const batchSize = Number(process.env['BENCH_BATCH'] ?? '') || 5_000;
  const read = await timed(async () => {
    let from: Position | undefined;
    let n = 0;
    for (;;) {
      const batch = await store.readAll(from, { maxCount: batchSize });
      if (batch.length === 0) break;
      n += batch.length;
      from = batch[batch.length - 1]!.position;
    }
    return n;
  });

  const only = process.env['BENCH_PROJECTIONS']?.split(',');
  const projections = (await loadProjections()).filter((p) => !only || only.includes(p.name));
  ctx.note(`projections: ${projections.map((p) => `${p.name} v${p.version}`).join(', ')}; batch ${batchSize}`);
  const deps: RunnerDeps = {
    sql: ctx.sql,
    store,
    log: ctx.log,
    timezone: 'Europe/Kyiv',
    graceHours: 48,
    projections,
    threadSource: { databaseUrl: ctx.url },
  };
  // the measured rebuild over the process's threads, as `recon project --rebuild` (BENCH_THREADS=1: one thread);
  // the lockstep reference stays on one (its projections are wrapped, so no worker thread can load them)
  const threads = Number(process.env['BENCH_THREADS'] ?? '') || defaultThreads();
  ctx.note(`rebuild over ${threads} thread${threads === 1 ? '' : 's'} (BENCH_THREADS)`);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const rss = sampleRss(50);
  // heap after a full collection at each quarter of the events, per projection: flat when memory does not grow
  // heap after a full collection at each quarter of the rebuild (every projection's events together): four
  // collections a rebuild, not four per projection (28 full collections cost a third of a 20,000-event rebuild)
  const marks = [0.25, 0.5, 0.75, 1].map((q) => Math.max(1, Math.floor(events * projections.length * q)));
  const samples: Array<{ name: string; applied: number; heap: number }> = [];
  /** calls `at` once at each quarter of the events applied by every projection together */
  const quarters = (at: (applied: number) => void) => {
    const applied = new Map<string, number>();
    let i = 0;
    return (p: { name: string; applied: number }) => {
      applied.set(p.name, p.applied);
      let total = 0;
      for (const n of applied.values()) total += n;
      while (i < marks.length && total >= marks[i]!) {
        i++;
        at(total);
      }
    };
  };
  // when each projection applied its last batch: the fast ones no longer wait for the slowest (issue 26)
  const lastBatchAt = new Map<string, number>();
  let rebuildStarted = 0;
  const serverCpu = await serverCpuMeter(ctx.sql);
  // the lockstep reference runs after the measured rebuild, or before it with BENCH_LOCKSTEP_FIRST=1 (the
  // first rebuild of a run meets cold caches: both orders show how much of a difference is order)
  // the same full collections at the same marks as the measured rebuild (they cost as much in both)
  const lockstep = () => {
    const mark = quarters(() => {
      gc?.();
      process.memoryUsage();
    });
    return cpuPer(
      () => events,
      { serverCpu },
      () =>
        timed(() =>
          rebuildProjection({ ...deps, projections: inLockstep(projections) }, undefined, {
            batchSize,
            onProgress: mark,
          }),
        ),
    );
  };
  const lockstepFirst = process.env['BENCH_LOCKSTEP_FIRST'] === '1' ? await lockstep() : undefined;
  const mark = quarters((applied) => {
    gc?.();
    samples.push({ name: 'all projections', applied, heap: process.memoryUsage().heapUsed });
  });
  const measured = await cpuPer(
    () => events,
    { serverCpu },
    () =>
      timed(() => {
        rebuildStarted = performance.now();
        return rebuildProjection(deps, undefined, {
          batchSize,
          threads,
          onProgress: (p) => {
            lastBatchAt.set(p.name, performance.now() - rebuildStarted);
            mark(p);
          },
        });
      }),
  );
  const rebuild = measured.result;
  const peak = rss.stop();
  ctx.note(
    `  CPU per event: this process ${measured.self} µs, PostgreSQL ${measured.server} µs (of which background processes ${measured.serverBackground} µs); wall ${((rebuild.ms * 1000) / events).toFixed(0)} µs (2 cores shared)`,
  );
  const applied = rebuild.result.projections.reduce((s, p) => s + p.totalApplied, 0);
  for (const p of rebuild.result.projections)
    ctx.note(
      `  ${p.name}: ${p.totalApplied.toLocaleString('en-US')} events, ${p.status}, last batch applied at ${((lastBatchAt.get(p.name) ?? 0) / 1000).toFixed(1)} s`,
    );
  for (const s of samples)
    ctx.note(
      `  heap after gc, after ${s.applied.toLocaleString('en-US')} events applied by the projections together: ${(s.heap / MB).toFixed(1)} MB`,
    );

  const perProjection = projections.length ? perSecond(events * projections.length, rebuild.ms) : 0;
  ctx.figure({
    name: 'rebuild of all projections',
    value: perSecond(events, rebuild.ms),
    unit: 'events/s',
    reference: { name: 'readAll alone', value: perSecond(read.result, read.ms) },
    // issue 26: a quarter of readAll on 2 cores (issue 5's absolute floor kept beside it)
    target: { minRatio: 0.25, min: 20_000, text: '≥ 0.25 of readAll and ≥ 20,000 events/s' },
  });
  ctx.note(
    `(${projections.length} projections: ${Math.round(perProjection).toLocaleString('en-US')} projection-events/s; applied ${applied.toLocaleString('en-US')})`,
  );
  const [journal] = await ctx.sql<{ n: bigint }[]>`select count(*)::int8 as n from recon.journal_lines`;
  ctx.note(`journal lines: ${journal?.n.toLocaleString('en-US')}`);
  ctx.figure({
    name: 'peak RSS during the rebuild',
    value: peak / MB,
    unit: 'MB',
    target: { max: 512, text: '< 512 MB' },
  });
  const byName = new Map<string, number[]>();
  for (const s of samples) byName.set(s.name, [...(byName.get(s.name) ?? []), s.heap]);
  const growth = Math.max(
    0,
    ...[...byName.values()].filter((v) => v.length >= 2).map((v) => (v[v.length - 1]! - v[0]!) / MB),
  );
  ctx.figure({
    name: 'heap growth from 1/4 to all events',
    value: growth,
    unit: 'MB',
    target: { max: 32, text: '< 32 MB (flat)' },
  });

  if (process.env['BENCH_NO_LOCKSTEP'] === '1') return;
  const lockstepMeasured = lockstepFirst ?? (await lockstep());
  const stepped = lockstepMeasured.result;
  ctx.note(
    `  lockstep CPU per event: this process ${lockstepMeasured.self} µs, PostgreSQL ${lockstepMeasured.server} µs; wall ${((stepped.ms * 1000) / events).toFixed(0)} µs`,
  );
  ctx.figure({
    name: 'rebuild of all projections in lockstep (before issue 26), same events',
    value: perSecond(events, stepped.ms),
    unit: 'events/s',
    reference: { name: 'readAll alone', value: perSecond(read.result, read.ms) },
  });
  ctx.note(
    `independent / lockstep: ${(stepped.ms / rebuild.ms).toFixed(2)} (the same rebuild, ${(rebuild.ms / 1000).toFixed(1)} s against ${(stepped.ms / 1000).toFixed(1)} s)`,
  );
}
