import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { sha256Hex } from '../../src/canonical';
import { EXIT_CODE } from '../../src/cli/errors';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { issue, register, weekdayAhead } from './fixtures';
import { debianErrors, debianXmllint, wasmErrors } from './validate';

/** `recon payout-runs …` as finance types it, through the real binary, each person with their own token. */

const BIN = path.resolve('bin/recon.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'payout-runs-cli-'));
const CONFIG = path.join(dir, 'recon.json');
let db: TestDatabase;
const tokens: Record<string, string> = {};

function recon(args: string[], who?: string, extra: Record<string, string> = {}) {
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
          ...extra,
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
  writeFileSync(
    CONFIG,
    JSON.stringify({ bank: { accounts: [{ id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' }] } }),
  );
  const store = createPostgresEventStore(db.sql);
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606', legalName: 'Dupont & Fils' });
  await register(store, 'SM-B');
  await issue(store, '2026-10', [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: 'RS-SM-A-2026-10-EUR',
      amountDue: '123456',
      held: '0',
      payable: '123456',
      holds: [],
    },
    {
      subMerchantId: 'SM-B',
      currency: 'EUR',
      reference: 'RS-SM-B-2026-10-EUR',
      amountDue: '700',
      held: '0',
      payable: '700',
      holds: [],
    },
  ]);
}, 120_000);
afterAll(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recon payout-runs', () => {
  it('draft → approve by another person → file → send, refusals naming why', async () => {
    const admin = await recon(['users', 'add', 'olena', '--name', 'Olena', '--role', 'admin']);
    tokens.olena = admin.stdout.trim();
    for (const [id, role] of [
      ['ana', 'analyst'],
      ['iryna', 'approver'],
    ] as const) {
      const r = await recon(['users', 'add', id, '--name', id, '--role', role], 'olena');
      expect(r.code, r.stderr).toBe(0);
      tokens[id] = r.stdout.trim();
    }

    const drafted = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana');
    expect(drafted.code, drafted.stderr).toBe(0);
    expect(drafted.stdout).toContain('drafted PR-2026-10-1');
    expect(drafted.stdout).toContain('left out: SM-B 7.00 EUR RS-SM-B-2026-10-EUR (no_payout_account)');
    const again = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'iryna');
    expect(again.stdout).toContain('already drafted, waiting for approval: PR-2026-10-1');

    const byAnalyst = await recon(['payout-runs', 'approve', 'PR-2026-10-1'], 'ana');
    expect(byAnalyst.code).toBe(EXIT_CODE.usage);
    expect(byAnalyst.stderr).toContain('ana is an analyst; payout-run.approve is not theirs');
    const early = await recon(['payout-runs', 'file', 'PR-2026-10-1'], 'ana');
    expect(early.code).toBe(EXIT_CODE.usage);
    expect(early.stderr).toContain('PR-2026-10-1 is draft; its payment file exists once approved');

    // review: a Sunday is no day a bank executes on: refused, naming the option, exit usage
    const [aSunday, aMonday] = [weekdayAhead(7), weekdayAhead(1)];
    const sunday = await recon(['payout-runs', 'approve', 'PR-2026-10-1', '--execution-date', aSunday], 'iryna');
    expect(sunday.code).toBe(EXIT_CODE.usage);
    expect(sunday.stderr).toContain(`--execution-date (executionDate): ${aSunday} is a Sunday`);
    const approved = await recon(['payout-runs', 'approve', 'PR-2026-10-1', '--execution-date', aMonday], 'iryna');
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('approved PR-2026-10-1');

    const out = path.join(dir, 'run.xml');
    const file = await recon(['payout-runs', 'file', 'PR-2026-10-1', '--out', out], 'ana');
    expect(file.code, file.stderr).toBe(0);
    const xml = readFileSync(out, 'utf8');
    expect(file.stderr).toContain(sha256Hex(xml));
    expect(await wasmErrors(xml)).toEqual([]);
    if (debianXmllint) expect(debianErrors(xml)).toEqual([]);
    expect(xml).toContain('<InstdAmt Ccy="EUR">1234.56</InstdAmt>');
    expect(xml).toContain('<Nm>Dupont &amp; Fils</Nm>');
    expect(xml).toContain('<Dbtr><Nm>Marketplace LLC</Nm></Dbtr>');
    expect((await recon(['payout-runs', 'file', 'PR-2026-10-1'], 'iryna')).stdout).toBe(xml);

    const sent = await recon(['payout-runs', 'send', 'PR-2026-10-1'], 'ana');
    expect(sent.stdout).toBe(`sent PR-2026-10-1 (file sha-256 ${sha256Hex(xml)})\n`);
    const list = await recon(['payout-runs', 'list', '--format', 'json'], 'ana');
    expect(JSON.parse(list.stdout)).toMatchObject([
      { id: 'PR-2026-10-1', status: 'sent', draftedBy: 'ana', approvedBy: 'iryna', sentBy: 'ana' },
    ]);
    const show = await recon(['payout-runs', 'show', 'PR-2026-10-1'], 'ana');
    expect(show.stdout).toContain('RS-SM-A-2026-10-EUR  1234.56 EUR  to Dupont & Fils FR1420041010050500013M02606');
    const nothing = await recon(['payout-runs', 'draft', '--month', '2026-10'], 'ana');
    expect(nothing.stdout).toContain('nothing new to pay for 2026-10');
  }, 600_000);

  it('refuses drafting without the debtor’s name configured, naming the variable, and appends nothing', async () => {
    const store = createPostgresEventStore(db.sql);
    await issue(store, '2026-11', [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-11-EUR',
        amountDue: '100',
        held: '0',
        payable: '100',
        holds: [],
      },
    ]);
    const r = await recon(['payout-runs', 'draft', '--month', '2026-11'], 'ana', { RECON_ISSUER_NAME: '' });
    expect(r.code).toBe(EXIT_CODE.configuration);
    expect(r.stderr).toContain('RECON_PAYOUTS_DEBTOR_NAME: not set');
    const cancel = await recon(['payout-runs', 'cancel', 'PR-2026-11-1', '--reason', 'x'], 'ana');
    expect(cancel.stderr).toContain('no payout run "PR-2026-11-1"');
  }, 300_000);

  it('a run whose file was taken is not cancelled on one word: the bank may execute it (--bank-did-not-execute)', async () => {
    const store = createPostgresEventStore(db.sql);
    await issue(store, '2026-12', [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-12-EUR',
        amountDue: '5000',
        held: '0',
        payable: '5000',
        holds: [],
      },
    ]);
    expect((await recon(['payout-runs', 'draft', '--month', '2026-12'], 'ana')).code).toBe(0);
    const monday = weekdayAhead(1);
    const approve = await recon(['payout-runs', 'approve', 'PR-2026-12-1', '--execution-date', monday], 'iryna');
    expect(approve.code, approve.stderr).toBe(0);
    expect((await recon(['payout-runs', 'file', 'PR-2026-12-1'], 'ana')).code).toBe(0);
    const refused = await recon(['payout-runs', 'cancel', 'PR-2026-12-1', '--reason', 'wrong month'], 'ana');
    expect(refused.code).toBe(EXIT_CODE.usage);
    expect(refused.stderr).toContain("PR-2026-12-1's payment file was taken by ana at");
    expect(refused.stderr).toContain(
      `It is cancelled once the bank's imported statements show every transfer of it paid (execution date ${monday})`,
    );
    const show = await recon(['payout-runs', 'show', 'PR-2026-12-1'], 'ana');
    expect(show.stdout).toMatch(/^approved by iryna/m);
    expect(show.stdout).toMatch(/^payment file taken by ana at \d{4}-/m);
    const said = await recon(
      ['payout-runs', 'cancel', 'PR-2026-12-1', '--reason', 'the bank rejected the file', '--bank-did-not-execute'],
      'ana',
    );
    expect(said.code, said.stderr).toBe(0);
    expect((await recon(['payout-runs', 'show', 'PR-2026-12-1'], 'ana')).stdout).toContain(
      'saying the bank did not execute its file: the bank rejected the file',
    );
    const again = await recon(['payout-runs', 'draft', '--month', '2026-12'], 'ana');
    expect(again.stdout).toContain('PR-2026-12-2');
  }, 300_000);
});
