import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { discrepancyStream } from '../../src/events/audit-events';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 16: `recon discrepancies accept ID --note TEXT` took the note as typed, though every other door of a
 * decision (the exceptions' actions, the console, the decisions sheet) holds a note to the shared rule: one of
 * 4,200 characters failed as an internal error (exit 70, a schema's refusal of the acceptance), and one with an
 * escape sequence was recorded, to be printed by every listing of the decision. Both are now refused as the
 * command's usage (exit 2) naming --note, nothing written.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
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

const head = async () => (await store.readStream(discrepancyStream(psp))).length;

describe('review16: recon discrepancies accept holds its note to the door rule', () => {
  it.each([
    ['4,200 characters', 'The PSP will not pay the difference. '.repeat(114).slice(0, 4200), /longer than 4000/],
    ['an escape sequence', 'ok \u001b[2J\u001b[Hcleared', /control character \(U\+001B\)/],
  ])(
    'refuses a note of %s naming --note, nothing written',
    async (_what, note, reason) => {
      const before = await head();
      const r = await recon(
        ['discrepancies', 'accept', psp, '--decision', 'withhold', '--note', note],
        team.approver.token,
      );
      expect(r.stderr).toMatch(/--note/);
      expect(r.stderr).toMatch(reason);
      expect(r.code, r.stderr).toBe(EXIT_CODE.usage);
      expect(await head()).toBe(before);
    },
    60_000,
  );

  it('accepts a note of 4,000 characters with line breaks', async () => {
    const note = `Line one.\n${'x'.repeat(3990)}`;
    const r = await recon(
      ['discrepancies', 'accept', psp, '--decision', 'withhold', '--note', note],
      team.approver.token,
    );
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
});
