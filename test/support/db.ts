import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { connect, type Sql } from '../../src/db/connect';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';

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

/**
 * A fresh, migrated database of its own on the test server: a copy of the run's template, which global
 * setup migrated with `migrate` (what a fresh database migrated here would hold, row for row). The one thing
 * a copy does not carry is the database's own privileges (kept in the server's catalog, not in the copied
 * database): the grant migration 0250 gives the auditors' role on it is given again. With `migrate: false`,
 * an empty database that the test migrates (or not) itself.
 */
export async function createTestDatabase(opts: { migrate?: boolean; max?: number } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = connect(serverUrl(), { max: 1 });
  const copy = opts.migrate !== false;
  if (copy) {
    await admin.unsafe(`create database ${name} template ${inject('pgTemplate')}`);
    const [auditor] = await admin`select 1 from pg_roles where rolname = 'recon_auditor'`;
    if (auditor) await admin.unsafe(`grant connect on database ${name} to recon_auditor`);
  } else await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = withDatabase(serverUrl(), name);
  const sql = connect(url, { max: opts.max ?? 10 });
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

/**
 * For a block that needs several databases (a reference and the copies compared with it): each call of the
 * returned function makes a fresh one, and all are dropped after the enclosing file's or block's tests.
 */
export function useTestDatabases(): () => Promise<TestDatabase> {
  const made: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of made) await db.drop();
  });
  return async () => {
    const db = await createTestDatabase();
    made.push(db);
    return db;
  };
}

export interface TestStore {
  readonly db: TestDatabase;
  readonly store: EventStore;
}

/**
 * A database of its own and a PostgreSQL event store on it for the enclosing file or describe block: made
 * before its tests, dropped after them (so the drop is not forgotten). Read `db` and `store` in hooks and
 * tests only: they exist once the block's beforeAll has run.
 */
export function useTestStore(): TestStore {
  let made: TestStore | undefined;
  beforeAll(async () => {
    const db = await createTestDatabase();
    made = { db, store: createPostgresEventStore(db.sql) };
  });
  afterAll(async () => {
    await made?.db.drop();
  });
  const ready = (): TestStore => {
    if (!made) throw new Error('useTestStore: the database is made in beforeAll; read it in hooks and tests');
    return made;
  };
  return {
    get db() {
      return ready().db;
    },
    get store() {
      return ready().store;
    },
  };
}
