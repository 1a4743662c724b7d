import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { issue, register } from '../payout-runs/fixtures';
import { booked } from '../payouts/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 9, through the real binary: `recon payout-runs approve` of a run the bank paid by hand since it was
 * drafted is refused (it catches the read models up first, as `draft` does), and the month drafted again asks
 * nothing.
 */

const BIN = path.resolve('bin/recon.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'review9-paid-since-'));
const CONFIG = path.join(dir, 'recon.json');
const PAYOUTS = 'DE89370400440532013000';
const REF = 'RS-SM-A-2026-10-EUR';
let db: TestDatabase;
let store: EventStore;
const tokens: Record<string, string> = {};

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

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  writeFileSync(CONFIG, JSON.stringify({ bank: { accounts: [{ id: PAYOUTS, currency: 'EUR', role: 'payouts' }] } }));
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  await issue(store, '2026-10', [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: REF,
      amountDue: '123456',
      held: '0',
      payable: '123456',
      holds: [],
    },
  ]);
}, 120_000);
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('review9: recon payout-runs approve of a run paid by hand since its draft', () => {
  it('is refused naming the reference; cancelled, the month asks nothing', async () => {
    tokens.olena = (await recon(['users', 'add', 'olena', '--name', 'Olena', '--role', 'admin'])).stdout.trim();
    for (const [id, role] of [
      ['ana', 'analyst'],
      ['iryna', 'approver'],
    ] as const)
      tokens[id] = (await recon(['users', 'add', id, '--name', id, '--role', role], 'olena')).stdout.trim();

    const drafted = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana');
    expect(drafted.stdout, drafted.stderr).toContain('drafted PR-2026-10-1');
    // paid by hand meanwhile, the bank's statement imported
    const d = booked({
      account: PAYOUTS,
      currency: 'EUR',
      amount: 123456n,
      bookingDate: '2026-11-02',
      bankRef: 'B-HAND',
      remittance: REF,
    });
    await store.append(d.stream, [...d.events]);

    const approve = await recon(['payout-runs', 'approve', 'PR-2026-10-1'], 'iryna');
    expect(approve.code).toBe(EXIT_CODE.usage);
    expect(approve.stderr).toContain(`PR-2026-10-1 pays ${REF}, which the bank's debits paid since it was drafted`);
    const cancelled = await recon(['payout-runs', 'cancel', 'PR-2026-10-1', '--reason', 'paid by hand'], 'ana');
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const again = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana');
    expect(again.stdout, again.stderr).toContain('nothing new to pay for 2026-10');
  }, 180_000);
});
