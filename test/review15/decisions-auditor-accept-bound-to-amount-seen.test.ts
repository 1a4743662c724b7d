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
 * Review 15: `recon discrepancies accept ID` (the auditor's accept) could not say what amount in doubt its person
 * saw, so an auditor who read 100.00 UAH in doubt withheld whatever was in doubt when the command ran (500.00 after
 * a webhook re-send). It now takes `--amount-in-doubt MINOR|none --currency C|none` as `recon exceptions accept`
 * does, and refuses (exit 2, nothing written) with the same words when the money changed since; without them it
 * accepts as before (scripted use in README).
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: register 100.00, webhook 90.00 (the payment in doubt)

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

const money = (minor: string) => `${BigInt(minor) / 100n}.${minor.slice(-2)} UAH`;
const acceptances = async () =>
  (await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e));
/** What the auditor reads: `recon discrepancies --format json`, the one discrepancy's amount in doubt. */
const inDoubt = async () => {
  const r = await recon(['discrepancies', '--format', 'json', '--type', 'amount_mismatch'], team.viewer.token);
  expect(r.code, r.stderr).toBe(0);
  const [d] = JSON.parse(r.stdout) as Array<{ id: string; amount_in_doubt: string }>;
  expect(d?.id).toBe(psp);
  return d!.amount_in_doubt;
};

describe('review15: recon discrepancies accept names the amount in doubt its person saw', () => {
  it('refuses a withhold on an amount that changed since it was shown, and takes it on the amount now', async () => {
    const seen = await inDoubt();
    // the PSP re-sends the webhook with another amount: more in doubt now
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
    const accept = ['discrepancies', 'accept', psp, '--decision', 'withhold', '--note', 'ask the PSP'];
    const stale = await recon([...accept, '--amount-in-doubt', seen, '--currency', 'UAH'], team.analyst.token);
    expect(stale.code, stale.stderr).toBe(EXIT_CODE.usage);
    const now = await inDoubt();
    expect(now).not.toBe(seen);
    expect(stale.stderr).toContain(
      `discrepancy ${psp}: the decision was taken on ${money(seen)}, the amount in doubt is now ${money(now)}: look again and decide on the amount now`,
    );
    expect(await acceptances()).toHaveLength(0);

    const half = await recon([...accept, '--amount-in-doubt', now], team.analyst.token);
    expect(half.code).toBe(EXIT_CODE.usage);
    expect(half.stderr).toContain('--currency: required with --amount-in-doubt');
    const other = await recon([...accept, '--amount-in-doubt', now, '--currency', 'EUR'], team.analyst.token);
    expect(other.code).toBe(EXIT_CODE.usage);
    expect(other.stderr).toContain(`the amount in doubt is now ${money(now)}`);
    expect(await acceptances()).toHaveLength(0);

    const taken = await recon([...accept, '--amount-in-doubt', now, '--currency', 'UAH'], team.analyst.token);
    expect(taken.code, taken.stderr).toBe(0);
    const written = await acceptances();
    expect(written).toHaveLength(1);
    expect(written[0]!.data).toMatchObject({ amount: now, currency: 'UAH', decision: 'withhold' });
  }, 600_000);
});
