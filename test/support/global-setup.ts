import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { compiledSources } from '../../bin/sources.mjs';
import { connect } from '../../src/db/connect';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../src/db/embedded';
import { migrate } from '../../src/db/migrate';
import { silentLogger } from '../../src/log';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
    pgDataDir: string;
    /** A database migrated once for the run: each test file's migrated database is a copy of it. */
    pgTemplate: string;
  }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * Migrates a database once for the whole run. `CREATE DATABASE … TEMPLATE` copies it in about a third of
 * the time migrating a fresh one takes (measured: 0.2 s against 0.6 s), and some 270 databases are made
 * per run. Its connections are closed: PostgreSQL copies only a template nobody is connected to.
 */
async function migratedTemplate(url: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `t_template_${randomBytes(4).toString('hex')}`;
  const admin = connect(url, { max: 1 });
  await admin.unsafe(`create database ${name}`);
  const sql = connect(withDatabase(url, name), { max: 1 });
  await migrate(sql, silentLogger);
  await sql.end();
  await admin.end();
  return {
    name,
    async drop() {
      const a = connect(url, { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

/**
 * The run's own server, thrown away after it, need not survive the machine's crash: it is told not to wait
 * for the disk (fsync, the commit's WAL flush, full pages after a checkpoint). What a test can see is the
 * same: a commit is visible to every session at once either way, and no test stops or kills this server
 * (those that do start their own, with the product's settings). The suite waited on the disk at every
 * commit and every database made (docs/testing.md, "Where the time goes").
 */
async function withoutDiskFlushes(url: string): Promise<void> {
  const admin = connect(url, { max: 1 });
  for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes'])
    await admin.unsafe(`alter system set ${setting} = off`);
  await admin`select pg_reload_conf()`;
  await admin.end();
}

/**
 * One real PostgreSQL for the whole run, started from node_modules in a fresh directory (or the server
 * given by TEST_DATABASE_URL). Each test file makes its own database on it (test/support/db.ts).
 */
export default async function setup(project: TestProject) {
  // The binary's compiled copy of the sources (bin/sources.mjs), built here once rather than by the first
  // test files' starts of the binary together (which would not clash, only each build it).
  await compiledSources();
  if (process.env.TEST_DATABASE_URL) {
    const template = await migratedTemplate(process.env.TEST_DATABASE_URL);
    project.provide('pgUrl', process.env.TEST_DATABASE_URL);
    project.provide('pgDataDir', '');
    project.provide('pgTemplate', template.name);
    return () => template.drop();
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-test-pg-'));
  const server = await ensureEmbeddedPostgres(dir, silentLogger);
  await withoutDiskFlushes(server.url);
  const template = await migratedTemplate(server.url);
  project.provide('pgUrl', server.url);
  project.provide('pgDataDir', dir);
  project.provide('pgTemplate', template.name);
  return async () => {
    await stopEmbeddedPostgres(dir, silentLogger);
    rmSync(dir, { recursive: true, force: true });
  };
}
