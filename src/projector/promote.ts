import { buildsOf, dropBuild } from './builds';
import { tryLock } from './locks';
import type { Projection, Tx } from './projection';
import type { BuildRow, RunnerDeps } from './runner-types';
import { contextFor } from './settings';

/**
 * Rebuild beside live: a new build is made from zero in its own schema while the live one keeps serving;
 * when caught up, one transaction re-points the `recon.*` views to it, marks it live and drops the old one.
 */

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
    // the name as written (schema.view, each part quoted or not) given as an identifier, "schema"."view"
    const parts = name
      .match(/"[^"]+"|[^.]+/g)!
      .map((part) => (part.startsWith('"') ? part.slice(1, -1) : part.toLowerCase()));
    await tx`drop view if exists ${tx(parts.join('.'))}`;
    // the projection's own statement (views(ctx)), as the first try ran it
    await tx.unsafe(statement);
  }
}

/** Re-points the views to the build, marks it live and drops the previous live build; false when busy. */
export async function promote(deps: RunnerDeps, p: Projection, build: BuildRow): Promise<boolean> {
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
