import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 16: a proposal's note and an approval's note are each taken up to 4,000 characters (the door's rule,
 * the console's textarea), and the approval records the acceptance with both in one note, which the acceptance
 * holds to 4,000. A proposal noted at length (3,000 characters) could then never be approved: every approval
 * failed as an internal error (exit 70, a schema's refusal) and the exception stayed pending. The acceptance's
 * note now keeps the approver's note whole and as much of the proposer's as fits; the proposal keeps it all.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = '';
let dir = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  // a write-off above 50.00 needs a second person (as test/exceptions/cli.test.ts)
  dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-approve-'));
  writeFileSync(path.join(dir, 'recon.json'), JSON.stringify({ exceptions: { writeOff: { approvalAbove: '5000' } } }));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recon(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({
        databaseUrl: db.url,
        extra: { RECON_LOG_LEVEL: 'error', RECON_CONFIG: path.join(dir, 'recon.json'), RECON_TOKEN: token },
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

const long = (sentence: string, size: number) => sentence.repeat(Math.ceil(size / sentence.length)).slice(0, size);

describe('review16: approving a proposal noted at length', () => {
  it('records the acceptance, the approver named, the approver note whole', async () => {
    const proposerNote = long('The PSP confirmed in writing it will not pay the difference. ', 3000).trim();
    const proposed = await recon(
      ['exceptions', 'accept', psp, '--decision', 'write_off', '--note', proposerNote],
      team.analyst.token,
    );
    expect(proposed.code, proposed.stderr).toBe(0);
    expect(proposed.stdout).toContain("needs a second person's approval");

    const approverNote = long('Checked against the PSP letter of 12 March. ', 2000).trim();
    const approved = await recon(['exceptions', 'approve', psp, '--note', approverNote], team.approver.token);
    expect(approved.code, approved.stderr).toBe(0);

    const accepted = (await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e));
    expect(accepted).toHaveLength(1);
    const data = dataOf(DiscrepancyAccepted, accepted[0]!);
    expect(data.acceptedBy).toBe(team.approver.id);
    expect(data.decision).toBe('write_off');
    expect(data.note.length).toBeLessThanOrEqual(4000);
    expect(data.note.startsWith(approverNote)).toBe(true);
    expect(data.note).toContain(`proposed by ${team.analyst.id}: The PSP confirmed`);
  }, 60_000);
});
