import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { isEvent } from '../../src/events/catalog';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 14: the console's bulk apply does exactly what its preview listed, each decision's money included;
 * `recon exceptions bulk accept --dry-run` listed no money and its real run planned everything again, so a
 * write-off previewed while 100.00 UAH was in doubt was written off at 500.00 after a webhook re-send. The dry run now
 * lists each decision's money and a preview (the console's digest); `--expect PREVIEW` applies exactly that, or
 * is refused (exit 2, nothing written).
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: 100.00 in doubt

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

const bulk = ['exceptions', 'bulk', 'accept', '--type', 'amount_mismatch', '--decision', 'write_off'];
const writeOff = [...bulk, '--reason', 'the PSP will not pay'];
const acceptances = async () =>
  (await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e));

async function preview(): Promise<{ stdout: string; digest: string }> {
  const dry = await recon([...writeOff, '--dry-run'], team.analyst.token);
  expect(dry.code, dry.stderr).toBe(0);
  const digest = /^preview (\S+) /m.exec(dry.stdout)?.[1] ?? '';
  expect(digest).not.toBe('');
  return { stdout: dry.stdout, digest };
}

describe('review14: recon exceptions bulk applies what its dry run listed, money included', () => {
  it('refuses to apply a preview whose write-off grew since, then applies the one previewed again', async () => {
    const first = await preview();
    expect(first.stdout).toContain(`would accept: write_off (100.00 UAH in doubt): ${psp}`);
    await appendAll(store, [
      webhook({
        paymentId: 'pay-a',
        orderId: 'ord-a',
        processedAt: at('2024-03-10T10:00:00Z'),
        amount: 500_00n,
        fee: 100n,
        receivedAt: at('2024-03-12T10:00:00Z'),
      }),
    ]);
    const stale = await recon([...writeOff, '--expect', first.digest], team.analyst.token);
    expect(stale.stderr).toContain('no longer those previewed');
    expect(stale.code).toBe(EXIT_CODE.usage);
    expect(await acceptances()).toHaveLength(0);

    const again = await preview();
    expect(again.stdout).toContain(`would accept: write_off (500.00 UAH in doubt): ${psp}`);
    const done = await recon([...writeOff, '--expect', again.digest], team.analyst.token);
    expect(done.code, done.stderr).toBe(0);
    expect(await acceptances()).toHaveLength(1);
  }, 600_000);
});
