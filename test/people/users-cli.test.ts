import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { createTestDatabase, type TestDatabase } from '../support/db';

/** `recon users …` as an operator types it, through the real binary. */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

function recon(args: string[], token?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({
        databaseUrl: db.url,
        extra: { RECON_LOG_LEVEL: 'error', ...(token ? { RECON_TOKEN: token } : {}) },
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('recon users', () => {
  it('adds, lists, rotates and revokes, the token printed once on stdout and never listed', async () => {
    const first = await recon(['users', 'add', 'olena', '--name', 'Olena Koval', '--role', 'admin']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('shown this once');
    const admin = first.stdout.trim();
    expect(admin).toMatch(/^recon_[A-Za-z0-9_-]{43}$/);

    const refused = await recon(['users', 'add', 'ivan', '--name', 'Ivan', '--role', 'analyst']);
    expect(refused.code).toBe(EXIT_CODE.usage);
    expect(refused.stderr).toContain('RECON_TOKEN: not set');
    expect(refused.stdout).toBe('');

    const second = await recon(['users', 'add', 'ivan', '--name', 'Ivan Petrenko', '--role', 'analyst'], admin);
    expect(second.code, second.stderr).toBe(0);
    const analyst = second.stdout.trim();

    const forbidden = await recon(['users', 'revoke', 'olena', '--reason', 'x'], analyst);
    expect(forbidden.code).toBe(EXIT_CODE.usage);
    expect(forbidden.stderr).toContain('ivan is an analyst; users.manage is not theirs');

    const list = await recon(['users', 'list', '--format', 'json'], analyst);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([
      { id: 'olena', role: 'admin', status: 'active', addedBy: 'bootstrap' },
      { id: 'ivan', role: 'analyst', status: 'active', addedBy: 'olena' },
    ]);
    expect(list.stdout).not.toContain(admin);

    const rotated = await recon(['users', 'rotate', 'ivan'], analyst);
    expect(rotated.code, rotated.stderr).toBe(0);
    const table = await recon(['users', 'list'], rotated.stdout.trim());
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+name\s+role\s+status/);

    const revoked = await recon(['users', 'revoke', 'ivan', '--reason', 'left the team'], admin);
    expect(revoked).toMatchObject({ code: 0, stdout: 'revoked ivan\n' });
    const last = await recon(['users', 'revoke', 'olena', '--reason', 'x'], admin);
    expect(last.stderr).toContain('last active admin');
  }, 400_000);
});
