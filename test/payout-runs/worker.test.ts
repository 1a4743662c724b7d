import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';

/** The worker (`recon start`) serves /api/payout-runs beside the auditor API, which keeps its own paths. */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let worker: ChildProcess | undefined;
let url = '';
let token = '';

beforeAll(async () => {
  db = await createTestDatabase();
  token = (await addUser(createPostgresEventStore(db.sql), undefined, { id: 'olena', name: 'O', role: 'admin' })).token;
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--no-scheduler', '--no-projections'], {
    env: reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error' } }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker = child;
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /recon worker listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the worker exited (${code})`)));
  });
}, 180_000);
afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await db.drop();
});

describe('the worker mounts the payout runs API', () => {
  it('answers /api/payout-runs with the token’s roles, and the auditor API still answers its own paths', async () => {
    expect((await fetch(`${url}/api/payout-runs`)).status).toBe(401);
    const auth = { authorization: `Bearer ${token}` };
    const list = await fetch(`${url}/api/payout-runs`, { headers: auth });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([]);
    // an admin decides no money: approving is refused on the server
    expect((await fetch(`${url}/api/payout-runs/PR-2026-10-1/approve`, { method: 'POST', headers: auth })).status).toBe(
      403,
    );
    expect((await fetch(`${url}/api/payout-runs/PR-2026-10-1`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url}/api/discrepancies?limit=1`)).status).toBe(401);
  }, 60_000);
});
