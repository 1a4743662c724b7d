import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect, type Sql } from '../../src/db/connect';
import { migrate } from '../../src/db/migrate';
import { silentLogger } from '../../src/log';

export interface TestDatabase {
  readonly url: string;
  readonly sql: Sql;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  return inject('pgUrl');
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** A fresh, migrated database of its own on the test server. */
export async function createTestDatabase(opts: { migrate?: boolean; max?: number } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = connect(serverUrl(), { max: 1 });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = withDatabase(serverUrl(), name);
  const sql = connect(url, { max: opts.max ?? 10 });
  if (opts.migrate !== false) await migrate(sql, silentLogger);
  return {
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      const a = connect(serverUrl(), { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
