import type { Sql } from '../db/connect';
import { bankSettingsText } from './bank-settings';
import { lockBlocking } from './locks';
import type { Projection, Tx } from './projection';
import type { BuildRow, RunnerDeps } from './runner-types';
import { contextFor, settingsChanged } from './settings';

/**
 * The builds of each projection (table projection_builds): a build is a schema of its own, `building`
 * from zero beside the `live` one until it goes live, then `retired` and its schema dropped.
 */

function buildSchemaName(name: string, version: number, build: number): string {
  return `rm_${name}_v${version}_b${build}`;
}

/** The projection's building and live builds, oldest first. */
export async function buildsOf(sql: Sql | Tx, name: string): Promise<BuildRow[]> {
  return (sql as Sql)<BuildRow[]>`
    select schema_name, name, version, build, status, checkpoint, checkpoint_event_id::text as checkpoint_event_id,
      events_applied, timezone, grace_hours, bank_settings
    from projection_builds where name = ${name} and status in ('building', 'live') order by build`;
}

/** Every building and live build, by projection. */
export async function allBuilds(sql: Sql): Promise<BuildRow[]> {
  return sql<BuildRow[]>`
    select schema_name, name, version, build, status, checkpoint, checkpoint_event_id::text as checkpoint_event_id,
      events_applied, timezone, grace_hours, bank_settings
    from projection_builds where status in ('building', 'live') order by name, build`;
}

/** The build as it is now (another runner may have moved it), undefined once it is retired. */
export async function currentBuild(sql: Sql, build: BuildRow): Promise<BuildRow | undefined> {
  return (await buildsOf(sql, build.name)).find((b) => b.schema_name === build.schema_name);
}

export async function dropBuild(tx: Tx, schema: string): Promise<void> {
  await tx`update projection_builds set status = 'retired', retired_at = now(), updated_at = now() where schema_name = ${schema}`;
  await tx`drop schema if exists ${tx(schema)} cascade`;
}

/** Creates a new build (schema + tables) of the projection's current version. Caller holds the lock. */
async function createBuild(tx: Tx, deps: RunnerDeps, p: Projection): Promise<void> {
  const [m] = await tx<
    { n: number }[]
  >`select coalesce(max(build), 0)::int as n from projection_builds where name = ${p.name}`;
  const build = (m?.n ?? 0) + 1;
  const schema = buildSchemaName(p.name, p.version, build);
  await tx`drop schema if exists ${tx(schema)} cascade`;
  await tx`create schema ${tx(schema)}`;
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
  await tx`
    insert into projection_builds (schema_name, name, version, build, status, timezone, grace_hours, bank_settings)
    values (${schema}, ${p.name}, ${p.version}, ${build}, 'building', ${deps.timezone}, ${deps.graceHours}, ${bankSettings})`;
  deps.log.info('projection build started', {
    projection: p.name,
    version: p.version,
    schema,
    timezone: deps.timezone,
    graceHours: deps.graceHours,
  });
}

/**
 * Makes sure the projection has a build of its current version and settings (live or building): drops a
 * building build of another version or other settings, starts one when the live build is of another
 * version, has other settings, or is missing (`fresh`: always, a rebuild). Builds without recorded
 * settings (made before migration 0700) are given the current ones.
 */
export async function ensureBuilds(deps: RunnerDeps, p: Projection, fresh: boolean): Promise<void> {
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
