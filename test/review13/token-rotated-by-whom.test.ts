import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { addUser, rotateToken } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 13: an admin may rotate another user's token — another admin's, an approver's — and is then handed a
 * token that acts as that person. The event records who rotated it (`rotatedBy`), but the directory's fold
 * dropped it, so `recon users list` (table and JSON) showed when a token was rotated and never by whom: an
 * admin taking over an approver's token left no trace anyone could read. The list now names who rotated it.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let olena = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  olena = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
  await addUser(store, olena, { id: 'taras', name: 'Taras', role: 'admin' });
  await addUser(store, olena, { id: 'anna', name: 'Anna', role: 'approver' });
  await rotateToken(store, olena, 'taras');
  await rotateToken(store, olena, 'anna');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

function recon(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error', RECON_TOKEN: token } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('review13: who rotated a token', () => {
  it('recon users list names the admin who rotated another admin’s and an approver’s token', async () => {
    const json = await recon(['users', 'list', '--format', 'json'], olena);
    expect(json.code, json.stderr).toBe(0);
    const users = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(users.find((u) => u.id === 'taras')).toMatchObject({ tokenRotatedBy: 'olena' });
    expect(users.find((u) => u.id === 'anna')).toMatchObject({ tokenRotatedBy: 'olena' });
    expect(users.find((u) => u.id === 'olena')).toMatchObject({ tokenRotatedBy: null });
    const table = await recon(['users', 'list'], olena);
    expect(table.stdout.split('\n')[0]).toContain('rotated by');
    expect(table.stdout.split('\n').find((l) => l.startsWith('anna'))).toMatch(/\bolena\s*$/);
  });
});
