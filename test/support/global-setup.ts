import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../src/db/embedded';
import { silentLogger } from '../../src/log';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
    pgDataDir: string;
  }
}

/**
 * One real PostgreSQL for the whole run, started from node_modules in a fresh directory (or the server
 * given by TEST_DATABASE_URL). Each test file makes its own database on it (test/support/db.ts).
 */
export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgUrl', process.env.TEST_DATABASE_URL);
    project.provide('pgDataDir', '');
    return () => {};
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-test-pg-'));
  const server = await ensureEmbeddedPostgres(dir, silentLogger);
  project.provide('pgUrl', server.url);
  project.provide('pgDataDir', dir);
  return async () => {
    await stopEmbeddedPostgres(dir, silentLogger);
    rmSync(dir, { recursive: true, force: true });
  };
}
