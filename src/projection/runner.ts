import { ReconError } from '../errors';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Sql } from '../db/connect';
import type { BankConfig } from '../config/bank';
import { ident } from '../db/identifier';
import type { Logger } from '../log';
import { memoize } from '../memoize';
import {
  comparePositions,
  formatPosition,
  parsePosition,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../store/types';
import { bankSettingsOf, bankSettingsText } from './bank-settings';
import type { Projection, ProjectionContext, Tx } from './projection';

/**
 * The projection runner. Every projection in projections/ is caught up from its checkpoint: each batch of
 * events and the checkpoint move in one transaction (exactly once). A transaction-scoped advisory lock per
 * projection name keeps a second runner from working on the same projection at the same time (it skips),
 * and the checkpoint is re-read under a row lock before applying, so a batch read by a runner that lost
 * the race is never applied. A crashed runner resumes from the last committed checkpoint.
 *
 * A projection whose `version` differs from its live build (or a forced rebuild) is built from zero in a
 * new schema beside the live one; when caught up, one transaction re-points the `recon.*` views to it,
 * marks it live and drops the old build.
 */

export interface RunnerDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly timezone: string;
  readonly graceHours: number;
  /** RECON_CONFIG's bank object, handed to the projections (absent: no bank accounts) */
  readonly bank?: BankConfig;
  /** the projections to run; default: every file of projections/ */
  readonly projections?: readonly Projection[];
}

export interface ProjectionProgress {
  readonly name: string;
  readonly schema: string;
  readonly status: 'live' | 'building';
  readonly applied: number;
  readonly position: string | null;
}

export interface RunOptions {
  /** only these projections (default: all) */
  readonly names?: readonly string[];
  /** events per transaction (default 1000) */
  readonly batchSize?: number;
  /** stop once this position is applied (events after it are left for a later run) */
  readonly until?: Position;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: ProjectionProgress) => void;
}

export interface ProjectionReport {
  readonly name: string;
  readonly version: number;
  /** schema of the build that is live after the run (or still building) */
  readonly schema: string;
  readonly status: 'live' | 'building';
  /** events applied by this run, over every build of the projection */
  readonly applied: number;
  /** events applied to the reported build since it started */
  readonly totalApplied: number;
  /** checkpoint of the reported build ("commit/prepare"), null when nothing was applied */
  readonly position: string | null;
  /** a new build replaced the previous live one during this run */
  readonly wentLive: boolean;
  /** another runner held the projection: nothing or only part was done by this one */
  readonly busy: boolean;
}

export interface Report {
  readonly projections: readonly ProjectionReport[];
  /** head of the event store when the run ended */
  readonly head: string | null;
}

export const PROJECTIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../projections');

// Advisory lock class of projection locks (the second key is hashtext(name)).
const LOCK_CLASS = 7315;

let loaded: Promise<Projection[]> | undefined;

/** Every projections/*.ts exporting `projection`, sorted by file name (new files need no registration). */
export function loadProjections(dir: string = PROJECTIONS_DIR): Promise<Projection[]> {
  if (dir === PROJECTIONS_DIR && loaded) return loaded;
  const p = (async () => {
    const files = readdirSync(dir)
      .filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
      .sort();
    const out: Projection[] = [];
    const names = new Set<string>();
    for (const f of files) {
      const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { projection?: Projection };
      if (!mod.projection) continue;
      if (names.has(mod.projection.name)) throw new Error(`two projections are named ${mod.projection.name} (${f})`);
      if (!/^[a-z][a-z0-9_]{0,30}$/.test(mod.projection.name))
        throw new Error(`projection name ${JSON.stringify(mod.projection.name)} (${f}) must be lower-case snake_case`);
      names.add(mod.projection.name);
      out.push(mod.projection);
    }
    return out;
  })();
  if (dir === PROJECTIONS_DIR) loaded = p;
  return p;
}

/**
 * A build's checkpoint is past the event store's head: the read model holds events the store no longer
 * has (the store was restored from an older backup, or replaced, and the read models were not). Carrying
 * on would skip every event appended below the checkpoint, silently; the build must be rebuilt.
 */
export class ProjectionAheadOfStoreError extends ReconError {
  readonly kind = 'configuration';
  readonly code = 'PROJECTION_AHEAD_OF_STORE';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly checkpoint: string,
    readonly head: string | null,
  ) {
    super(
      `projection ${projection} (build ${schema}) is at position ${checkpoint}, past the event store's head ${head ?? '(empty store)'}: ` +
        'the event store was restored from an older backup or replaced while the read models were not; rebuild them with recon project --rebuild',
    );
    this.name = 'ProjectionAheadOfStoreError';
  }
}

/**
 * The event at a build's checkpoint is not the one the build last applied (or there is none): the event
 * store was restored from an older backup and appended to again past the checkpoint, or replaced, while
 * the read models were not. The checkpoint is below the head, so the head alone cannot show it; carrying
 * on would skip the events now stored below the checkpoint and keep effects of events the store lost.
 */
export class ProjectionCheckpointMismatchError extends ReconError {
  readonly kind = 'configuration';
  readonly code = 'PROJECTION_CHECKPOINT_MISMATCH';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly checkpoint: string,
    readonly applied: string | null,
    readonly found: string | null,
  ) {
    super(
      `projection ${projection} (build ${schema}) last applied event ${applied ?? '(not recorded)'} at position ${checkpoint}, ` +
        `but the event store holds ${found ? `event ${found}` : 'no event'} there: the event store was restored from an older backup and ` +
        'appended to since, or replaced, while the read models were not; rebuild them with recon project --rebuild',
    );
    this.name = 'ProjectionCheckpointMismatchError';
  }
}

interface BuildRow {
  schema_name: string;
  name: string;
  version: number;
  build: number;
  status: 'building' | 'live' | 'retired';
  checkpoint: string | null;
  /** id of the event at the checkpoint (migration 0800); null before the first check since, or when nothing was applied */
  checkpoint_event_id: string | null;
  events_applied: bigint;
  /** the settings this build applies events with (migration 0700); null only before its first run since */
  timezone: string | null;
  grace_hours: number | null;
  /** RECON_CONFIG's bank object this build applies events with (migration 1700), canonical JSON */
  bank_settings: string | null;
}

export function buildSchemaName(name: string, version: number, build: number): string {
  return `rm_${name}_v${version}_b${build}`;
}

/** A build applies events with its own recorded settings, which may differ from the current ones while a new build replaces it. */
function contextFor(
  deps: RunnerDeps,
  build: Pick<BuildRow, 'schema_name' | 'timezone' | 'grace_hours' | 'bank_settings'>,
): ProjectionContext {
  const bank = build.bank_settings != null ? bankSettingsOf(build.bank_settings) : deps.bank;
  return {
    schema: build.schema_name,
    timezone: build.timezone ?? deps.timezone,
    graceHours: build.grace_hours ?? deps.graceHours,
    ...(bank ? { bank } : {}),
  };
}

/** The settings differ from the current configuration: the build must be replaced. */
function settingsChanged(deps: RunnerDeps, b: BuildRow, p: Projection): string | undefined {
  const changed = [
    p.usesBank && b.bank_settings !== null && b.bank_settings !== bankSettingsText(deps.bank) ? 'bank settings' : '',
    b.timezone !== null && b.timezone !== deps.timezone ? `timezone ${b.timezone} → ${deps.timezone}` : '',
    b.grace_hours !== null && b.grace_hours !== deps.graceHours
      ? `grace hours ${b.grace_hours} → ${deps.graceHours}`
      : '',
  ].filter(Boolean);
  return changed.length ? changed.join(', ') : undefined;
}

async function selectProjections(deps: RunnerDeps, names?: readonly string[]): Promise<Projection[]> {
  const all = deps.projections ? [...deps.projections] : await loadProjections();
  if (!names || names.length === 0) return all;
  const unknown = names.filter((n) => !all.some((p) => p.name === n));
  if (unknown.length)
    throw new Error(
      `unknown projection${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${all.map((p) => p.name).join(', ') || 'none'})`,
    );
  return all.filter((p) => names.includes(p.name));
}

async function buildsOf(sql: Sql | Tx, name: string): Promise<BuildRow[]> {
  return (await sql<BuildRow[]>`
    select schema_name, name, version, build, status, checkpoint, checkpoint_event_id::text, events_applied, timezone, grace_hours, bank_settings
    from projection_builds where name = ${name} and status in ('building', 'live') order by build`) as unknown as BuildRow[];
}

async function lockBlocking(tx: Tx, name: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${name}))`;
}

async function tryLock(tx: Tx, name: string): Promise<boolean> {
  const [r] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(${name})) as ok`;
  return r?.ok === true;
}

async function dropBuild(tx: Tx, schema: string): Promise<void> {
  await tx`update projection_builds set status = 'retired', retired_at = now(), updated_at = now() where schema_name = ${schema}`;
  await tx.unsafe(`drop schema if exists ${ident(schema)} cascade`);
}

/** Creates a new build (schema + tables) of the projection's current version. Caller holds the lock. */
async function createBuild(tx: Tx, deps: RunnerDeps, p: Projection): Promise<BuildRow> {
  const [m] = await tx<
    { n: number }[]
  >`select coalesce(max(build), 0)::int as n from projection_builds where name = ${p.name}`;
  const build = (m?.n ?? 0) + 1;
  const schema = buildSchemaName(p.name, p.version, build);
  await tx.unsafe(`drop schema if exists ${ident(schema)} cascade`);
  await tx.unsafe(`create schema ${ident(schema)}`);
  const bankSettings = bankSettingsText(deps.bank);
  await p.setup(
    tx,
    contextFor(deps, {
      schema_name: schema,
      timezone: deps.timezone,
      grace_hours: deps.graceHours,
      bank_settings: bankSettings,
    }),
  );
  const [row] = await tx<BuildRow[]>`
    insert into projection_builds (schema_name, name, version, build, status, timezone, grace_hours, bank_settings)
    values (${schema}, ${p.name}, ${p.version}, ${build}, 'building', ${deps.timezone}, ${deps.graceHours}, ${bankSettings})
    returning schema_name, name, version, build, status, checkpoint, checkpoint_event_id::text, events_applied, timezone, grace_hours, bank_settings`;
  deps.log.info('projection build started', {
    projection: p.name,
    version: p.version,
    schema,
    timezone: deps.timezone,
    graceHours: deps.graceHours,
  });
  return row as BuildRow;
}

/**
 * Makes sure the projection has a build of its current version and settings (live or building): drops a
 * building build of another version or other settings, starts one when the live build is of another
 * version, has other settings, or is missing. Builds without recorded settings (made before migration
 * 0700) are given the current ones.
 */
async function ensureBuilds(deps: RunnerDeps, p: Projection, fresh: boolean): Promise<void> {
  await deps.sql.begin(async (tx) => {
    await lockBlocking(tx, p.name);
    await tx`
      update projection_builds set timezone = coalesce(timezone, ${deps.timezone}), grace_hours = coalesce(grace_hours, ${deps.graceHours}),
        bank_settings = coalesce(bank_settings, ${bankSettingsText(deps.bank)})
      where name = ${p.name} and status in ('building', 'live') and (timezone is null or grace_hours is null or bank_settings is null)`;
    const builds = await buildsOf(tx, p.name);
    const live = builds.find((b) => b.status === 'live');
    let building = builds.find((b) => b.status === 'building');
    if (building && (building.version !== p.version || fresh || settingsChanged(deps, building, p))) {
      deps.log.info('projection build abandoned', {
        projection: p.name,
        schema: building.schema_name,
        version: building.version,
        settingsChanged: settingsChanged(deps, building, p) ?? null,
      });
      await dropBuild(tx, building.schema_name);
      building = undefined;
    }
    const changed = live ? settingsChanged(deps, live, p) : undefined;
    if (changed && !building)
      deps.log.warn('projection settings changed: a new build replaces the live one when caught up', {
        projection: p.name,
        schema: live!.schema_name,
        changed,
      });
    if (!building && (fresh || !live || live.version !== p.version || changed)) await createBuild(tx, deps, p);
  });
}

type StepResult = { kind: 'applied'; count: number } | { kind: 'busy' } | { kind: 'moved' } | { kind: 'gone' };

/** Events read past a batch's last complete transaction: the head of the next batch read after `after`. */
interface Carry {
  readonly after: string | null;
  readonly events: RecordedEvent[];
  /** where the store's next page starts (the last event read) */
  readonly readFrom: Position;
}

/**
 * Reads the batch after a checkpoint (cut at `until`); `reachedEnd`: nothing more to read for now.
 * A batch never splits an append (consecutive events sharing `appendId`): a projection may act once per
 * append (the reconciliation judges a payment once per append), and that must not depend on where
 * batches end. The events of a trailing append that may continue in the next page are carried into the
 * next batch; an append longer than the batch size makes a longer batch. A page shorter than the batch
 * size ends with a complete append on PostgreSQL (readAll shows committed transactions only); on
 * EventStoreDB the parts of an append become visible one by one (docs/store.md).
 */
async function readBatch(
  store: EventStore,
  checkpoint: string | null,
  batchSize: number,
  until: Position | undefined,
  carry: Carry | undefined,
): Promise<{ events: RecordedEvent[]; reachedEnd: boolean; carry: Carry | undefined }> {
  let events: RecordedEvent[] = [];
  let from = checkpoint ? parsePosition(checkpoint) : undefined;
  if (carry && carry.after === checkpoint) {
    events = carry.events;
    from = carry.readFrom;
  }
  for (;;) {
    const page = await store.readAll(from, { maxCount: batchSize });
    events = events.length ? events.concat(page) : page;
    let reachedEnd = page.length < batchSize;
    if (until) {
      const kept = events.filter((e) => comparePositions(e.position, until) <= 0);
      if (
        kept.length < events.length ||
        (kept.length > 0 && comparePositions(kept[kept.length - 1]!.position, until) === 0)
      )
        reachedEnd = true;
      if (reachedEnd) return { events: kept, reachedEnd, carry: undefined };
    }
    if (reachedEnd || events.length === 0) return { events, reachedEnd, carry: undefined };
    const last = events[events.length - 1]!.position;
    let cut = events.length;
    const lastAppend = events[events.length - 1]!.appendId;
    while (cut > 0 && events[cut - 1]!.appendId === lastAppend) cut--;
    if (cut > 0) {
      const head = events.slice(0, cut);
      return {
        events: head,
        reachedEnd: false,
        carry: { after: formatPosition(head[head.length - 1]!.position), events: events.slice(cut), readFrom: last },
      };
    }
    from = last; // one transaction fills the whole page: read on
  }
}

/**
 * Applies one batch to one build: lock, re-check checkpoint, apply, move the checkpoint; one transaction.
 * The lock, the checkpoint's row lock and the commit setting go in one statement (fewer round trips per
 * batch); the row is only locked when the advisory lock was taken, so a runner that finds the projection
 * busy never waits for the other one.
 */
async function step(
  deps: RunnerDeps,
  p: Projection,
  build: BuildRow,
  events: readonly RecordedEvent[],
): Promise<StepResult> {
  const lastEvent = events[events.length - 1]!;
  const last = lastEvent.position;
  return deps.sql.begin(async (tx): Promise<StepResult> => {
    // A read model is rebuilt from the log: losing the last commits in a server crash only moves the
    // checkpoint back with the data (same transaction), so the commit need not wait for the disk.
    const [row] = await tx<{ ok: boolean; checkpoint: string | null; status: string | null }[]>`
      with l as materialized (
        select pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(${p.name})) as ok, set_config('synchronous_commit', 'off', true))
      select l.ok, b.checkpoint, b.status from l
      left join lateral (select checkpoint, status from projection_builds where schema_name = ${build.schema_name} and l.ok for update) b on true`;
    if (row?.ok !== true) return { kind: 'busy' };
    if (!row.status || row.status === 'retired') return { kind: 'gone' };
    if (row.checkpoint !== build.checkpoint) return { kind: 'moved' };
    await p.apply(tx, events, contextFor(deps, build));
    const text = formatPosition(last);
    await tx`
      update projection_builds set checkpoint = ${text}, checkpoint_commit = ${last.commit.toString()}::numeric,
        checkpoint_prepare = ${last.prepare.toString()}::numeric, checkpoint_event_id = ${lastEvent.id}::uuid,
        events_applied = events_applied + ${events.length}, updated_at = now()
      where schema_name = ${build.schema_name}`;
    build.checkpoint = text;
    build.checkpoint_event_id = lastEvent.id;
    build.events_applied += BigInt(events.length);
    return { kind: 'applied', count: events.length };
  }) as Promise<StepResult>;
}

const VIEW_NAME =
  /^\s*create\s+(?:or\s+replace\s+)?view\s+((?:"[^"]+"|[a-z_][a-z0-9_]*)(?:\.(?:"[^"]+"|[a-z_][a-z0-9_]*))?)/i;

/** Runs a view statement; a view whose columns changed cannot be replaced in place, so it is dropped first. */
async function publishView(tx: Tx, statement: string): Promise<void> {
  try {
    await tx.savepoint((sp) => sp.unsafe(statement));
  } catch (e) {
    const name = VIEW_NAME.exec(statement)?.[1];
    const code = (e as { code?: string }).code;
    if (!name || (code !== '42P16' && code !== '42809' && code !== '42804')) throw e;
    await tx.unsafe(`drop view if exists ${name}`);
    await tx.unsafe(statement);
  }
}

/** Re-points the views to the build, marks it live and drops the previous live build. */
async function promote(deps: RunnerDeps, p: Projection, build: BuildRow): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    if (!(await tryLock(tx, p.name))) return false;
    const [row] = await tx<
      { status: string }[]
    >`select status from projection_builds where schema_name = ${build.schema_name} for update`;
    if (row?.status !== 'building') return false;
    const old = (await buildsOf(tx, p.name)).find((b) => b.status === 'live');
    await tx`create schema if not exists recon`;
    for (const statement of p.views(contextFor(deps, build))) await publishView(tx, statement);
    if (old) await dropBuild(tx, old.schema_name);
    await tx`update projection_builds set status = 'live', live_at = now(), updated_at = now() where schema_name = ${build.schema_name}`;
    build.status = 'live';
    deps.log.info('projection build live', {
      projection: p.name,
      version: p.version,
      schema: build.schema_name,
      replaced: old?.schema_name ?? null,
    });
    return true;
  }) as Promise<boolean>;
}

interface Target {
  readonly p: Projection;
  readonly build: BuildRow;
  applied: number;
  active: boolean;
  caughtUp: boolean;
  busy: boolean;
  /** the batch it could not apply (the others carry on without it) */
  failed?: ProjectionApplyError;
}

/**
 * A projection's `apply` threw on a batch: nothing of that batch was written (its transaction rolled back
 * with the checkpoint), and the next run tries it again. Names the projection, its build and the batch.
 */
export class ProjectionApplyError extends ReconError {
  readonly kind = 'internal';
  readonly code = 'PROJECTION_APPLY_FAILED';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly from: string,
    readonly to: string,
    cause: unknown,
  ) {
    super(
      `projection ${projection} (build ${schema}) could not apply the events ${from} to ${to}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'ProjectionApplyError';
  }
}

/** Every projection that failed in a run, after the others went as far as they could. */
export class ProjectionsFailedError extends ReconError {
  readonly kind = 'internal';
  readonly code = 'PROJECTIONS_FAILED';
  constructor(readonly failures: readonly ProjectionApplyError[]) {
    super(failures.map((f) => f.message).join('; '), { cause: failures[0] });
    this.name = 'ProjectionsFailedError';
  }
}

/**
 * Advances every target build to the head. Builds at the same checkpoint (every build of a rebuild from
 * zero, every live projection that is up to date) share one readAll per batch; each applies it in a
 * transaction of its own, all at the same time (on separate connections: the database works on one
 * projection's batch while another's is computed), and the store reads the next page meanwhile.
 */
async function advanceAll(deps: RunnerDeps, targets: Target[], opts: RunOptions): Promise<void> {
  const batchSize = Math.max(1, opts.batchSize ?? 1000);
  let carry: Carry | undefined;
  for (;;) {
    if (opts.signal?.aborted) return;
    const active = targets.filter((t) => t.active);
    if (active.length === 0) return;
    const key = (t: Target) => (t.build.checkpoint ? parsePosition(t.build.checkpoint) : { commit: -1n, prepare: -1n });
    const lowest = active.reduce((m, t) => (comparePositions(key(t), key(m)) < 0 ? t : m));
    const group = active.filter((t) => t.build.checkpoint === lowest.build.checkpoint);
    const read = await readBatch(deps.store, lowest.build.checkpoint, batchSize, opts.until, carry);
    const { events, reachedEnd } = read;
    carry = read.carry;
    if (events.length === 0) {
      for (const t of group) {
        t.caughtUp = true;
        t.active = false;
      }
      continue;
    }
    const results = await Promise.allSettled(group.map((t) => advanceOne(deps, t, events, reachedEnd, opts)));
    // A build that cannot apply a batch stops alone; the others read on (one failing
    // projection, always the lowest checkpoint, kept every other one from following the store).
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      const t = group[i]!;
      t.active = false;
      t.failed = new ProjectionApplyError(
        t.p.name,
        t.build.schema_name,
        formatPosition(events[0]!.position),
        formatPosition(events[events.length - 1]!.position),
        r.reason,
      );
      deps.log.error('projection could not apply a batch; the others carry on', {
        projection: t.p.name,
        schema: t.build.schema_name,
        error: t.failed.message,
      });
    });
  }
}

/** Applies one shared batch to one target build and updates the target's state. */
async function advanceOne(
  deps: RunnerDeps,
  t: Target,
  events: readonly RecordedEvent[],
  reachedEnd: boolean,
  opts: RunOptions,
): Promise<void> {
  const r = await step(deps, t.p, t.build, events);
  if (r.kind === 'busy' || r.kind === 'gone') {
    t.busy = r.kind === 'busy';
    t.active = false;
  } else if (r.kind === 'moved') {
    // another runner applied in between: continue from its checkpoint
    const fresh = (await buildsOf(deps.sql, t.p.name)).find((b) => b.schema_name === t.build.schema_name);
    if (!fresh) t.active = false;
    else {
      t.build.checkpoint = fresh.checkpoint;
      t.build.checkpoint_event_id = fresh.checkpoint_event_id;
      t.build.events_applied = fresh.events_applied;
    }
  } else {
    t.applied += r.count;
    opts.onProgress?.({
      name: t.p.name,
      schema: t.build.schema_name,
      status: t.build.status === 'live' ? 'live' : 'building',
      applied: t.applied,
      position: t.build.checkpoint,
    });
    if (reachedEnd) {
      t.caughtUp = true;
      t.active = false;
    }
  }
}

type EventAt = (at: string) => Promise<RecordedEvent | undefined>;

/** readAt, once per checkpoint (builds often share one). */
const eventAtOnce = (store: EventStore): EventAt => memoize((at: string) => store.readAt(parsePosition(at)));

/**
 * Why a build's checkpoint is not a place in this store's log, or undefined when it is: it must be below
 * the head (checkpoints never pass the head on their own: a reader only sees events below it, and it only
 * moves on) and hold the event the build last applied. A build past the head was made from another store
 * (ProjectionAheadOfStoreError); one whose checkpoint holds another event, or none, from a store since
 * restored to an older backup and appended to again (ProjectionCheckpointMismatchError). A build made
 * before the event ids were recorded has none: `record` takes the one at its checkpoint.
 */
async function offStore(
  deps: Pick<RunnerDeps, 'sql' | 'log'>,
  build: BuildRow,
  head: Position | undefined,
  eventAt: EventAt,
  record: boolean,
): Promise<ProjectionAheadOfStoreError | ProjectionCheckpointMismatchError | undefined> {
  const at = build.checkpoint;
  if (at === null) return undefined;
  if (head === undefined || comparePositions(parsePosition(at), head) > 0) {
    return new ProjectionAheadOfStoreError(build.name, build.schema_name, at, head ? formatPosition(head) : null);
  }
  const found = (await eventAt(at))?.id.toLowerCase() ?? null;
  const applied = build.checkpoint_event_id?.toLowerCase() ?? null;
  if (applied === null && found !== null) {
    if (record) {
      await deps.sql`update projection_builds set checkpoint_event_id = ${found}::uuid
        where schema_name = ${build.schema_name} and checkpoint = ${at} and checkpoint_event_id is null`;
      build.checkpoint_event_id = found;
      deps.log.info('projection checkpoint event recorded', {
        projection: build.name,
        schema: build.schema_name,
        checkpoint: at,
        event: found,
      });
    }
    return undefined;
  }
  // no event at a checkpoint (whatever was recorded) is never on this store: a follower only stops on events
  return found !== null && found === applied
    ? undefined
    : new ProjectionCheckpointMismatchError(build.name, build.schema_name, at, applied, found);
}

/**
 * Stops the run when a build is not on this store (see offStore). A live build in that state is left alone
 * while a new build of its projection is under way (the rebuild that repairs it, which replaces it when
 * caught up).
 */
async function refuseBuildsNotOnStore(
  deps: RunnerDeps,
  targets: Target[],
  plans: ReadonlyArray<{ p: Projection; building: BuildRow | undefined }>,
): Promise<void> {
  const head = await deps.store.headPosition();
  const eventAt = eventAtOnce(deps.store);
  for (const t of targets) {
    const problem = await offStore(deps, t.build, head, eventAt, true);
    if (!problem) continue;
    const rebuilding = plans.some((pl) => pl.p === t.p && pl.building !== undefined && pl.building !== t.build);
    if (!rebuilding) throw problem;
    deps.log.warn('live build not advanced: it is not on this event store; the build under way replaces it', {
      projection: t.p.name,
      schema: t.build.schema_name,
      checkpoint: t.build.checkpoint,
      reason: problem.message,
    });
    t.active = false;
  }
}

export interface BuildOnStore {
  readonly name: string;
  readonly schema: string;
  readonly status: 'building' | 'live';
  readonly checkpoint: string | null;
  /** null: the build's checkpoint is a place in this store's log */
  readonly problem: {
    readonly code: 'PROJECTION_AHEAD_OF_STORE' | 'PROJECTION_CHECKPOINT_MISMATCH';
    readonly message: string;
  } | null;
}

/**
 * Whether every projection build (building or live) is on this event store, without changing anything:
 * what `recon store check` reports after a restore. A build made before the event ids were recorded counts
 * as on the store when an event is at its checkpoint.
 */
export async function checkBuildsOnStore(deps: Pick<RunnerDeps, 'sql' | 'store' | 'log'>): Promise<BuildOnStore[]> {
  const builds = (await deps.sql<BuildRow[]>`
    select schema_name, name, version, build, status, checkpoint, checkpoint_event_id::text, events_applied, timezone, grace_hours, bank_settings
    from projection_builds where status in ('building', 'live') order by name, build`) as unknown as BuildRow[];
  const head = await deps.store.headPosition();
  const eventAt = eventAtOnce(deps.store);
  const out: BuildOnStore[] = [];
  for (const b of builds) {
    const problem = await offStore(deps, b, head, eventAt, false);
    out.push({
      name: b.name,
      schema: b.schema_name,
      status: b.status as 'building' | 'live',
      checkpoint: b.checkpoint,
      problem: problem ? { code: problem.code, message: problem.message } : null,
    });
  }
  return out;
}

async function runAll(
  deps: RunnerDeps,
  list: readonly Projection[],
  opts: RunOptions,
  fresh: boolean,
): Promise<ProjectionReport[]> {
  const targets: Target[] = [];
  const plans: Array<{ p: Projection; live: BuildRow | undefined; building: BuildRow | undefined }> = [];
  for (const p of list) {
    await ensureBuilds(deps, p, fresh);
    const builds = await buildsOf(deps.sql, p.name);
    const live = builds.find((b) => b.status === 'live');
    const building = builds.find((b) => b.status === 'building');
    plans.push({ p, live, building });
    // The live build keeps serving fresh data while a new one builds, when its code is still the current one.
    if (live && live.version === p.version)
      targets.push({ p, build: live, applied: 0, active: true, caughtUp: false, busy: false });
    if (building) targets.push({ p, build: building, applied: 0, active: true, caughtUp: false, busy: false });
  }
  await refuseBuildsNotOnStore(deps, targets, plans);
  await advanceAll(deps, targets, opts);
  const reports: ProjectionReport[] = [];
  for (const { p, live, building } of plans) {
    const mine = targets.filter((t) => t.p === p);
    let busy = mine.some((t) => t.busy);
    let wentLive = false;
    let shown = live;
    const b = mine.find((t) => t.build === building);
    if (building && b?.caughtUp && !opts.signal?.aborted) {
      if (await promote(deps, p, building)) {
        wentLive = true;
        shown = building;
      } else busy = true;
    } else if (building) shown = building;
    reports.push({
      name: p.name,
      version: p.version,
      schema: shown!.schema_name,
      status: shown!.status === 'live' ? 'live' : 'building',
      applied: mine.reduce((s, t) => s + t.applied, 0),
      totalApplied: Number(shown!.events_applied),
      position: shown!.checkpoint,
      wentLive,
      busy,
    });
  }
  // after every other projection went as far as it could, and every caught-up build went live
  const failures = targets.flatMap((t) => (t.failed ? [t.failed] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new ProjectionsFailedError(failures);
  return reports;
}

async function headText(store: EventStore): Promise<string | null> {
  const h = await store.headPosition();
  return h ? formatPosition(h) : null;
}

/** Catches every projection (or `opts.names`) up to the head of the store and returns. */
export async function runProjections(deps: RunnerDeps, opts: RunOptions = {}): Promise<Report> {
  const list = await selectProjections(deps, opts.names);
  const reports = await runAll(deps, list, opts, false);
  return { projections: reports, head: await headText(deps.store) };
}

/**
 * Rebuilds from zero, beside the live build, the named projection (or every one), then swaps it in.
 * The live build keeps serving (and following the store) until the new one has caught up.
 */
export async function rebuildProjection(
  deps: RunnerDeps,
  name?: string,
  opts: Omit<RunOptions, 'names'> = {},
): Promise<Report> {
  const list = await selectProjections(deps, name ? [name] : undefined);
  const reports = await runAll(deps, list, opts, true);
  return { projections: reports, head: await headText(deps.store) };
}

/** The builds table as it stands (for `recon project --status` and tests). */
export async function projectionBuilds(sql: Sql): Promise<
  Array<{
    name: string;
    version: number;
    schema: string;
    status: string;
    checkpoint: string | null;
    eventsApplied: bigint;
    updatedAt: Date;
    timezone: string | null;
    graceHours: number | null;
  }>
> {
  const rows = await sql<
    {
      name: string;
      version: number;
      schema_name: string;
      status: string;
      checkpoint: string | null;
      events_applied: bigint;
      updated_at: Date;
      timezone: string | null;
      grace_hours: number | null;
    }[]
  >`
    select name, version, schema_name, status, checkpoint, events_applied, updated_at, timezone, grace_hours from projection_builds
    where status <> 'retired' order by name, build`;
  return rows.map((r) => ({
    name: r.name,
    version: r.version,
    schema: r.schema_name,
    status: r.status,
    checkpoint: r.checkpoint,
    eventsApplied: r.events_applied,
    updatedAt: r.updated_at,
    timezone: r.timezone,
    graceHours: r.grace_hours,
  }));
}

/**
 * Live mode (the worker): catches up, then waits for new events (the event store's `watch`, or `pollMs`
 * at the latest) and catches up again, until the signal is aborted. A failing run is
 * logged and retried after `pollMs`.
 */
export async function followProjections(
  deps: RunnerDeps,
  opts: { signal: AbortSignal; pollMs?: number; batchSize?: number; onReport?: (r: Report) => void },
): Promise<void> {
  const pollMs = Math.max(10, opts.pollMs ?? 1000);
  let wake: (() => void) | undefined;
  let pending = false;
  const notify = () => {
    pending = true;
    wake?.();
  };
  let unlisten: (() => Promise<void>) | undefined;
  try {
    unlisten = await deps.store.watch(notify);
  } catch (e) {
    deps.log.warn('projection follower cannot listen for events; polling only', { error: e });
  }
  const onAbort = () => wake?.();
  opts.signal.addEventListener('abort', onAbort);
  try {
    while (!opts.signal.aborted) {
      pending = false;
      try {
        const r = await runProjections(deps, {
          signal: opts.signal,
          ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
        });
        opts.onReport?.(r);
      } catch (e) {
        if (opts.signal.aborted) break;
        deps.log.error('projection run failed; retrying', { error: e });
      }
      if (pending || opts.signal.aborted) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    await unlisten?.().catch(() => {});
  }
}
