import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log';
import { sha256Hex } from '../events/ids';
import type { Sql } from './connect';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

/** Plain SQL files named NNNN_name.sql, in version order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(path.join(dir, f), 'utf8');
      return { version: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: text, checksum: sha256Hex(text) };
    });
}

// Any fixed 64-bit key: every recon process agrees on it, nothing else uses it.
const MIGRATION_LOCK = 7_315_220_001n;

/**
 * Applies pending migrations, each in its own transaction, recorded in schema_migrations. A session
 * advisory lock on one reserved connection makes concurrent runs from several processes wait for each
 * other; a dropped connection releases it, so a killed process never leaves it behind.
 */
export async function migrate(sql: Sql, log: Logger, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  const applied: number[] = [];
  const conn = await sql.reserve();
  try {
    await conn`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await conn`create table if not exists schema_migrations (
      version int primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
    const done = new Map((await conn<{ version: number; checksum: string }[]>`select version, checksum from schema_migrations`).map((r) => [r.version, r.checksum]));
    for (const m of migrations) {
      const seen = done.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum) throw new Error(`migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`);
        continue;
      }
      try {
        await conn`begin`;
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
        await conn`commit`;
      } catch (e) {
        await conn`rollback`.catch(() => {});
        throw new Error(`migration ${m.version}_${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.version);
      log.info('migration applied', { version: m.version, name: m.name });
    }
  } finally {
    await conn`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {});
    conn.release();
  }
  return applied;
}
