import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';

/**
 * EVENTSTORE_URL is a secret variable (SECRET_VARIABLES, README: "secret values are never echoed"), and a
 * connection string with credentials (esdb://admin:PASSWORD@host:2113) is how a secured KurrentDB is
 * reached. recon hands the raw string to @eventstore/db-client (src/store/eventstoredb.ts:63), whose parser
 * console.warn()s the whole string for an ignored option (e.g. the common `tlsVerifyCert=false`), and whose
 * errors quote parts of it; src/cli/main.ts prints error messages unscrubbed, and the logger's scrubber
 * (secretValues) does not know this secret.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const PASSWORD = 'Sup3rSecretPw';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

function recon(args: string[], extra: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
      cwd: ROOT,
      env: reconEnv({ databaseUrl: db.url, extra }),
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('EVENTSTORE_URL credentials never reach the output', () => {
  it('an option the client ignores (tlsVerifyCert=false): the password is not printed', async () => {
    const r = await recon(['store', 'check'], {
      EVENTSTORE_URL: `esdb://admin:${PASSWORD}@127.0.0.1:1?tls=false&tlsVerifyCert=false`,
    });
    expect(r.out).not.toContain(PASSWORD);
  }, 60_000);

  it('a password holding "@" (a valid URL, accepted by the configuration check): no part of it is printed', async () => {
    const r = await recon(['store', 'check'], { EVENTSTORE_URL: `esdb://admin:Sup3r@Secret@127.0.0.1:1?tls=false` });
    expect(r.out).not.toContain('Secret@');
  }, 60_000);
});
