import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as audit } from '../../projections/audit';
import { reconEnv } from '../../fixtures/psp-env';
import { silentLogger } from '../../src/log';
import { addUser, rotateToken } from '../../src/people/manage';
import { rebuildProjection } from '../../src/projector/run';
import type { RunnerDeps } from '../../src/projector/runner-types';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import { type EventStore, formatPosition } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { type EsdbStandin, startEsdbStandin } from '../support/esdb-standin/server';
import { catchUp } from '../support/projection-spec';

/**
 * Review 14: the audit journal on the EventStoreDB backend (against the gRPC stand-in, not EventStoreDB): the
 * same chain over the users' actions, a replay from zero gives the same rows, and `recon audit verify` (the real
 * binary, reading the stand-in) names the position of an event whose data was changed in place.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let standin: EsdbStandin;
let store: EventStore;

beforeAll(async () => {
  db = await createTestDatabase();
  standin = await startEsdbStandin();
  store = createEventStoreDbStore(standin.url);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await standin?.stop();
  await db?.drop();
});

const deps = (): RunnerDeps => ({
  sql: db.sql,
  store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  projections: [audit],
});

function verify(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'audit', 'verify'], {
      env: reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error', EVENTSTORE_URL: standin.url } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const rows = () =>
  db.sql`select seq::int as seq, position_text, event_id, type, actor, event_hash, chain from recon.audit_journal j order by j.seq`;

describe('review14: the audit journal on the EventStoreDB stand-in', () => {
  it('chains the users’ actions, replays to the same rows, and names an event changed in place', async () => {
    const admin = await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' });
    await addUser(store, admin.token, { id: 'anna', name: 'Anna', role: 'approver' });
    await rotateToken(store, admin.token, 'anna');
    await catchUp(deps());
    const live = await rows();
    expect(live.map((r) => [r.type, r.actor])).toEqual([
      ['UserAdded', 'bootstrap'],
      ['UserAdded', 'olena'],
      ['UserTokenRotated', 'olena'],
    ]);
    await rebuildProjection(deps(), 'audit', { batchSize: 1 });
    await catchUp(deps());
    expect(await rows()).toEqual(live);

    const ok = await verify();
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("audit journal intact: 3 people's actions");
    expect(ok.stdout).toContain(`head ${live[2]!.chain}`);

    const [rotated] = (await store.readStream('users')).filter((e) => e.type === 'UserTokenRotated');
    standin.rewrite(rotated!.id, JSON.stringify({ ...(rotated!.data as object), rotatedBy: 'anna' }));
    const r = await verify();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`NOT intact at position ${formatPosition(rotated!.position)}`);
    expect(r.stdout).toMatch(/altered/);
  }, 300_000);
});
