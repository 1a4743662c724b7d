import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import { pspEnv } from '../../fixtures/psp-env';
import { useTestDatabases, type TestDatabase } from '../support/db';

const BIN = path.resolve('bin/recon.mjs');
const RANGE = ['--from', '2025-01-01', '--to', '2025-02-23'];
let sandbox: Sandbox;
const freshDb = useTestDatabases();

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'ingest-cli', month: '2025-01', timezone: 'UTC', payments: 160 },
    // Period reads are slow, so that a kill lands in the middle of a window.
    faults: { reportNotReadyPolls: 0, slowRate: 1, slowMs: 300, appliesTo: (r) => r.path.endsWith('/transactions') },
  });
});
afterAll(async () => {
  await sandbox.close();
});

function envFor(db: TestDatabase): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: db.url,
    RECON_TIMEZONE: 'UTC',
    RECON_LOG_LEVEL: 'warn',
    RECON_REPORT_MAX_WAIT_MS: '5000',
    ...pspEnv(sandbox.projects[0]!),
  };
}

async function ids(db: TestDatabase): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    select event_id::text as id from es_events where stream_id like 'payment-%' or stream_id like 'rejections-%' order by 1`;
  return rows.map((r) => r.id);
}

describe('recon sync as a process', () => {
  it('killed with SIGKILL mid-window and run again: the same events as an uninterrupted sync', async () => {
    const reference = await freshDb();
    await syncRange(
      {
        store: createPostgresEventStore(reference.sql),
        projects: sandbox.projects,
        log: silentLogger,
        timezone: 'UTC',
        reportMaxWaitMs: 5000,
      },
      { from: '2025-01-01', to: '2025-02-23' },
    );
    const expected = await ids(reference);

    const db = await freshDb();
    const child = spawn(process.execPath, [BIN, 'sync', ...RANGE], { env: envFor(db), stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let seen = 0;
    for (let i = 0; i < 600 && seen === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      seen = (await ids(db).catch(() => [])).length;
    }
    expect(seen).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await exited;
    const partial = await ids(db);
    expect(partial.length).toBeLessThan(expected.length);

    const rerun = spawn(process.execPath, [BIN, 'sync', ...RANGE], {
      env: envFor(db),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    rerun.stdout!.on('data', (c) => (out += c));
    const code = await new Promise<number | null>((resolve) => rerun.once('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    expect(out).toMatch(/sync: 2 windows completed, 0 failed/);
    expect(await ids(db)).toEqual(expected);
  });
});
