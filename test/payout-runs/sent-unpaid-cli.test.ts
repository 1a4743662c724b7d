import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { issue, register } from './fixtures';

/**
 * A sent run's transfer the bank rejected or paid only in part, through the real binary. Found by a reviewer: a
 * sent run for a reference of 1,000.00 the bank paid 600.00 of (or nothing) still took the whole reference, so
 * `draft` said "nothing new to pay" and the rest could only be paid by hand, outside the audit trail. Now a named
 * person releases what the bank did not pay (`release-unpaid`), on their word that the bank will execute nothing
 * more of the file or once it is unpaid past its due window, and the next draft pays it under the same
 * reference; what the bank paid is never asked again, and the old transfer's debit arriving late is a duplicate.
 */

const BIN = path.resolve('bin/recon.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'sent-unpaid-'));
const CONFIG = path.join(dir, 'recon.json');
const PAYOUTS = 'DE89370400440532013000';
const REF_A = 'RS-SM-A-2026-10-EUR';
const REF_B = 'RS-SM-B-2026-09-EUR';
let db: TestDatabase;
let store: EventStore;
const tokens: Record<string, string> = {};
const day = (n: number) => DateTime.now().setZone('Europe/Kyiv').plus({ days: n }).toISODate()!;

function recon(args: string[], who?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({
        databaseUrl: db.url,
        timezone: 'Europe/Kyiv',
        extra: {
          RECON_LOG_LEVEL: 'error',
          RECON_CONFIG: CONFIG,
          RECON_ISSUER_NAME: 'Marketplace LLC',
          ...(who ? { RECON_TOKEN: tokens[who]! } : {}),
        },
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

/** The bank's debit on the payouts account naming `reference`, its statement imported. */
async function debit(reference: string, amount: bigint, bookingDate: string, bankRef: string) {
  const d = booked({ account: PAYOUTS, currency: 'EUR', amount, bookingDate, bankRef, remittance: reference });
  await store.append(d.stream, [...d.events]);
}

/** Drafted by ana, approved by iryna, its file taken and sent by ana. */
async function sentRun(month: string, runId: string) {
  const drafted = await recon(['payout-runs', 'draft', '--month', month], 'ana');
  expect(drafted.stdout, drafted.stderr).toContain(`drafted ${runId}`);
  const approved = await recon(['payout-runs', 'approve', runId], 'iryna');
  expect(approved.code, approved.stderr).toBe(0);
  const file = await recon(['payout-runs', 'file', runId, '--out', path.join(dir, `${runId}.xml`)], 'ana');
  expect(file.code, file.stderr).toBe(0);
  const sent = await recon(['payout-runs', 'send', runId], 'ana');
  expect(sent.code, sent.stderr).toBe(0);
}

async function statusOf(month: string, reference: string) {
  const r = await recon(['payouts', '--month', month, '--format', 'json'], 'ana');
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { reference: string; status: string; paidOut: string; duplicated: string }[]).find(
    (l) => l.reference === reference,
  );
}

const releases = async () =>
  (await store.readStream(PAYOUT_RUNS_STREAM)).filter((e) => e.type === 'PayoutRunUnpaidReleased').length;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  writeFileSync(CONFIG, JSON.stringify({ bank: { accounts: [{ id: PAYOUTS, currency: 'EUR', role: 'payouts' }] } }));
  for (const sm of ['SM-A', 'SM-B']) await register(store, sm, { payoutAccount: 'FR1420041010050500013M02606' });
  const row = { currency: 'EUR', held: '0', holds: [] };
  await issue(store, '2026-10', [
    { ...row, subMerchantId: 'SM-A', reference: REF_A, amountDue: '100000', payable: '100000' },
  ]);
  await issue(store, '2026-09', [
    { ...row, subMerchantId: 'SM-B', reference: REF_B, amountDue: '50000', payable: '50000' },
  ]);
  tokens.olena = (await recon(['users', 'add', 'olena', '--name', 'Olena', '--role', 'admin'])).stdout.trim();
  for (const [id, role] of [
    ['ana', 'analyst'],
    ['iryna', 'approver'],
    ['vera', 'viewer'],
  ] as const)
    tokens[id] = (await recon(['users', 'add', id, '--name', id, '--role', role], 'olena')).stdout.trim();
}, 120_000);
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recon payout-runs release-unpaid: a sent run the bank paid in part', () => {
  it('pays the rest once, on a named person’s word; a late debit of the old transfer is a duplicate', async () => {
    await sentRun('2026-10', 'PR-2026-10-1');
    await debit(REF_A, 60000n, day(1), 'B-PART');
    expect((await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana')).stdout).toContain(
      'nothing new to pay for 2026-10',
    );
    expect((await statusOf('2026-10', REF_A))?.status).toBe('partial');

    // within the bank's window nobody's word: refused, naming the flag
    const early = await recon(['payout-runs', 'release-unpaid', 'PR-2026-10-1', '--reason', 'short'], 'ana');
    expect(early.code).toBe(EXIT_CODE.usage);
    expect(early.stderr).toContain(`${REF_A} (the bank's window runs to`);
    expect(early.stderr).toContain('--bank-did-not-execute');
    const viewer = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-10-1', '--reason', 'x', '--bank-did-not-execute'],
      'vera',
    );
    expect(viewer.code).toBe(EXIT_CODE.usage);
    expect(await releases()).toBe(0);

    const why = 'the bank rejected 400.00 of the transfer: account limit';
    const released = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-10-1', '--reason', why, '--bank-did-not-execute'],
      'ana',
    );
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain(
      `released PR-2026-10-1's unpaid ${REF_A} 400.00 EUR (the bank paid 600.00 EUR); recon payout-runs draft --month 2026-10 pays it`,
    );
    const again = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-10-1', '--reason', why, '--bank-did-not-execute'],
      'ana',
    );
    expect(again.code).toBe(EXIT_CODE.usage);
    expect(again.stderr).toContain('nothing to release');
    const shown = await recon(['payout-runs', 'show', 'PR-2026-10-1'], 'vera');
    expect(shown.stdout).toContain('sent');
    expect(shown.stdout).toContain(`unpaid released by ana at`);
    expect(shown.stdout).toContain(
      `saying the bank will execute nothing more of its file: ${REF_A} 400.00 EUR: ${why}`,
    );

    // the rest, once, under the same reference
    const redraft = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana');
    expect(redraft.stdout, redraft.stderr).toContain('drafted PR-2026-10-2');
    const run2 = JSON.parse((await recon(['payout-runs', 'show', 'PR-2026-10-2', '--format', 'json'], 'ana')).stdout);
    expect(run2.lines.map((l: { reference: string; amount: string }) => [l.reference, l.amount])).toEqual([
      [REF_A, '40000'],
    ]);
    const notSent = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-10-2', '--reason', 'x', '--bank-did-not-execute'],
      'ana',
    );
    expect(notSent.stderr).toContain('PR-2026-10-2 is draft');
    expect((await recon(['payout-runs', 'approve', 'PR-2026-10-2'], 'iryna')).code).toBe(0);
    expect((await recon(['payout-runs', 'send', 'PR-2026-10-2'], 'ana')).code).toBe(0);
    // the new run's transfer not yet booked does not free the old run's line again
    const twice = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-10-1', '--reason', why, '--bank-did-not-execute'],
      'ana',
    );
    expect(twice.stderr).toContain('nothing to release');

    await debit(REF_A, 40000n, day(2), 'B-REST');
    expect(await statusOf('2026-10', REF_A)).toMatchObject({ status: 'paid', paidOut: '100000' });
    expect((await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana')).stdout).toContain(
      'nothing new to pay for 2026-10',
    );
    // the bank executes the old transfer's rest after all: paid twice, shown as money to recover
    await debit(REF_A, 40000n, day(3), 'B-LATE');
    expect(await statusOf('2026-10', REF_A)).toMatchObject({ status: 'duplicated', duplicated: '40000' });
    expect((await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana')).stdout).toContain(
      'nothing new to pay for 2026-10',
    );
  }, 300_000);

  it('a transfer still unpaid past its due window is released without anyone’s word on the bank', async () => {
    await sentRun('2026-09', 'PR-2026-09-1');
    // the bank's statements imported reach well past the window (an unrelated debit booked then): nothing for REF_B
    const d = booked({ account: PAYOUTS, currency: 'EUR', amount: 100n, bookingDate: day(20), bankRef: 'B-FEE' });
    await store.append(d.stream, [...d.events]);
    expect((await statusOf('2026-09', REF_B))?.status).toBe('missing');

    const released = await recon(
      ['payout-runs', 'release-unpaid', 'PR-2026-09-1', '--reason', 'no debit on the statements to the 20th'],
      'iryna',
    );
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain(`${REF_B} 500.00 EUR (the bank paid 0.00 EUR)`);
    expect((await recon(['payout-runs', 'show', 'PR-2026-09-1'], 'ana')).stdout).toContain(
      `past the due window: ${REF_B} 500.00 EUR`,
    );
    const redraft = await recon(['payout-runs', 'draft', '--month', '2026-09'], 'ana');
    expect(redraft.stdout, redraft.stderr).toContain('drafted PR-2026-09-2');
    const run2 = JSON.parse((await recon(['payout-runs', 'show', 'PR-2026-09-2', '--format', 'json'], 'ana')).stdout);
    expect(run2.lines.map((l: { amount: string }) => l.amount)).toEqual(['50000']);
  }, 300_000);
});
