import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import {
  ExceptionDecisionApproved,
  ExceptionDecisionProposed,
  exceptionStream,
} from '../../src/events/exception-events';
import { isEvent } from '../../src/events/catalog';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 14: the console and the API bind a decision to what its person was shown (the amount in doubt of an
 * acceptance, the proposal of an approval); `recon exceptions accept|approve|reject` could not say what was seen,
 * so an analyst who read 100.00 UAH in `recon exceptions show` proposed writing off 500.00 after a webhook re-send, and an
 * approver approved whichever proposal waited. They now take `--amount-in-doubt`/`--currency` and `--proposal`,
 * and refuse (exit 2, nothing written) when what is there now is not that.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: register 100.00, webhook 90.00
let dir = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  // a write-off above 50.00 waits for a second person
  dir = mkdtempSync(path.join(tmpdir(), 'recon-review14-'));
  writeFileSync(path.join(dir, 'recon.json'), JSON.stringify({ exceptions: { writeOff: { approvalAbove: '5000' } } }));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recon(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const extra = { RECON_LOG_LEVEL: 'error', RECON_CONFIG: path.join(dir, 'recon.json'), RECON_TOKEN: token };
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, extra }),
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
const events = async () => store.readStream(exceptionStream(psp));
const shownOf = async (token: string) => {
  const r = await recon(['exceptions', 'show', psp, '--format', 'json'], token);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { amountInDoubt: string; currency: string; pending: { id: string } | null };
};

describe('review14: recon exceptions accept|approve|reject name what their person saw', () => {
  it('refuses a write-off on an amount that grew since it was shown, and an approval of another proposal', async () => {
    const seen = await shownOf(team.analyst.token);
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
    const writeOff = ['exceptions', 'accept', psp, '--decision', 'write_off', '--note', 'the PSP will not pay'];
    const stale = await recon(
      [...writeOff, '--amount-in-doubt', seen.amountInDoubt, '--currency', seen.currency],
      team.analyst.token,
    );
    expect(stale.stderr).toContain(`decision was taken on ${money(seen.amountInDoubt)}, the amount in doubt is now`);
    expect(stale.code).toBe(EXIT_CODE.usage);
    expect((await events()).filter((e) => isEvent(ExceptionDecisionProposed, e))).toHaveLength(0);

    const half = await recon([...writeOff, '--currency', 'UAH'], team.analyst.token);
    expect(half.code).toBe(EXIT_CODE.usage);
    expect(half.stderr).toContain('--currency: goes with --amount-in-doubt');

    // looked again: more in doubt, proposed (above 50.00), and the approver reads that proposal
    const now = (await shownOf(team.analyst.token)).amountInDoubt;
    expect(BigInt(now)).toBeGreaterThan(BigInt(seen.amountInDoubt));
    expect(stale.stderr).toContain(`the amount in doubt is now ${money(now)}`);
    const proposed = await recon([...writeOff, '--amount-in-doubt', now, '--currency', 'UAH'], team.analyst.token);
    expect(proposed.code, proposed.stderr).toBe(0);
    const first = (await shownOf(team.approver2.token)).pending!.id;

    // meanwhile another approver rejects it and the analyst proposes again, with another reason
    const rejected = await recon(
      ['exceptions', 'reject', psp, '--note', 'ask the PSP first', '--proposal', first],
      team.approver.token,
    );
    expect(rejected.code, rejected.stderr).toBe(0);
    const again = await recon(
      [
        'exceptions',
        'accept',
        psp,
        '--decision',
        'write_off',
        '--note',
        'asked; still no',
        '--amount-in-doubt',
        now,
        '--currency',
        'UAH',
      ],
      team.analyst.token,
    );
    expect(again.code, again.stderr).toBe(0);
    const second = (await shownOf(team.approver2.token)).pending!.id;
    expect(second).not.toBe(first);

    const unseen = await recon(
      ['exceptions', 'approve', psp, '--note', 'agreed', '--proposal', first],
      team.approver2.token,
    );
    expect(unseen.stderr).toContain('the proposal waiting is no longer the one shown');
    expect(unseen.code).toBe(EXIT_CODE.usage);
    expect((await events()).filter((e) => isEvent(ExceptionDecisionApproved, e))).toHaveLength(0);

    const approved = await recon(
      ['exceptions', 'approve', psp, '--note', 'agreed', '--proposal', second],
      team.approver2.token,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect((await events()).filter((e) => isEvent(ExceptionDecisionApproved, e))).toHaveLength(1);
  }, 900_000);
});
