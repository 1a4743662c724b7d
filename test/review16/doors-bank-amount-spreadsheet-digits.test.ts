import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { renderCamt053 } from '../../src/sandbox/bank-files';
import { killAll, runRecon } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 16: the bank doors took amounts of up to 15 whole digits (999,999,999,999,999.99: 17 significant
 * digits), where every other door takes at most 10^15 minor units, and a workbook holds 15 significant digits
 * exactly (an amount beyond is refused, EXPORT_AMOUNT_TOO_LARGE, rather than written as a wrong figure). A
 * statement entry of 12,345,678,901,234.56 EUR was imported, and from then on the nightly report failed
 * every night on the unmatched credit it left. The bank doors now refuse an amount or a balance above 10^15
 * minor units (10,000,000,000,000.00) naming the file, line and element, nothing imported.
 */

const ACCOUNT = 'DE89370400440532013000';
const RUN_MS = 180_000;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-bank-'));
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ bank: { accounts: [{ id: ACCOUNT, currency: 'EUR', role: 'settlement' }] } }));
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: config, RECON_LOG_LEVEL: 'error' } });
}, 120_000);

afterAll(async () => {
  await killAll();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const events = async () => Number((await db.sql<{ n: string }[]>`select count(*)::text as n from es_events`)[0]!.n);

/** The projections run to the head, then the nightly report of the statement's day. */
async function nightly(): Promise<{ code: number | null; stderr: string }> {
  const project = await runRecon(['project'], env, RUN_MS);
  expect(project.code, project.stderr).toBe(0);
  const r = await runRecon(['report', 'nightly', '--date', '2025-06-01', '--out', dir], env, RUN_MS);
  return { code: r.code, stderr: r.stderr };
}

function statement(id: string, amount: bigint): string {
  return renderCamt053({
    accountId: ACCOUNT,
    currency: 'EUR',
    statementId: id,
    openingDate: '2025-06-01',
    closingDate: '2025-06-01',
    openingBalance: 0n,
    entries: [
      {
        direction: 'credit',
        amount,
        bookingDate: '2025-06-01',
        bankRef: `${id}-A`,
        details: [{ remittance: 'settlement', counterpartyName: 'PSP' }],
      },
    ],
  });
}

describe('review16: a bank amount beyond what the outputs hold', () => {
  it('is refused at the import naming the element; the nightly report is then written', async () => {
    expect((await runRecon(['migrate'], env, RUN_MS)).code).toBe(0);
    const before = await events();
    const file = path.join(dir, 'huge.xml');
    writeFileSync(file, statement('R16-HUGE', 1_234_567_890_123_456n));
    const r = await runRecon(['bank', 'import', file], env, RUN_MS);
    expect(r.stderr).toContain('huge.xml');
    expect(r.stderr).toMatch(/Amt/);
    expect(r.stderr).toMatch(/amount too large/);
    expect(r.code, r.stderr).toBe(65);
    expect(await events()).toBe(before);

    expect(await nightly()).toEqual({ code: 0, stderr: '' });
  }, 600_000);

  it('takes the largest amount every door takes, 10^15 minor units', async () => {
    const file = path.join(dir, 'largest.xml');
    writeFileSync(file, statement('R16-LARGEST', 10n ** 15n));
    const r = await runRecon(['bank', 'import', file], env, RUN_MS);
    expect(r.code, r.stderr).toBe(0);
    expect(await nightly()).toEqual({ code: 0, stderr: '' });
  }, 600_000);
});
