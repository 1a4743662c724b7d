import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * `recon` commands given a day that has the shape YYYY-MM-DD but is not a day of the calendar, or a count
 * that is not one: a usage error, exit code 2, with a message naming the option (src/cli/options.ts), as
 * `--month 2025-13` or `--format xml` get. They once got exit 1 and a message naming no option.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
const out = mkdtempSync(path.join(tmpdir(), 'recon-cli-options-'));

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db.drop();
});

const PROJECT = {
  name: 'default',
  posId: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
  baseUrl: 'http://127.0.0.1:9',
  reportUrl: 'http://127.0.0.1:9',
  apiKey: 'pk_test_123',
  apiSecret: 'sk_test_456',
  endpointsKey: 'ek_test_789',
};

function recon(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, project: PROJECT, extra: { RECON_LOG_LEVEL: 'error', RECON_OUT_DIR: out } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('recon with an impossible day', () => {
  it('recon report nightly --date 2025-02-30: exit 2 and a message naming --date', async () => {
    const r = await recon(['report', 'nightly', '--date', '2025-02-30', '--out', out]);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('--date') });
  });

  it('recon sync --from 2025-02-30 --to 2025-03-05: exit 2 and a message naming --from', async () => {
    const r = await recon(['sync', '--from', '2025-02-30', '--to', '2025-03-05']);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('--from') });
  });

  it('recon jobs --history=-3: exit 2 and a message naming --history', async () => {
    const r = await recon(['jobs', '--history=-3']);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({
      code: 2,
      stderr: expect.stringContaining('--history'),
    });
  });
});
