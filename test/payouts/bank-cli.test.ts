import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, booked, issued, PAYOUTS_ACCOUNT, payee, SETTLEMENT_ACCOUNT } from './support';

/**
 * `recon payouts --month M` through the real binary: every payout the month's statements asked for, with what
 * the bank did (status, paid, when, bank reference, account paid to), as a table, as JSON and as a workbook.
 */

const RUN_MS = 180_000;
let db: TestDatabase;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-payouts-cli-'));

beforeAll(async () => {
  db = await createTestDatabase();
  const config = path.join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      bank: {
        accounts: [
          { id: PAYOUTS_ACCOUNT, currency: 'EUR', role: 'payouts' },
          { id: SETTLEMENT_ACCOUNT, currency: 'EUR', role: 'settlement' },
        ],
        payouts: { dueDays: 5, matchWindowDays: 10 },
      },
    }),
  );
  env = reconEnv({ databaseUrl: db.url, timezone: 'Europe/Kyiv', extra: { RECON_CONFIG: config } });
  await appendAll(createPostgresEventStore(db.sql), [
    payee('SM1', 'Shop One'),
    payee('SM2', 'Shop Two'),
    payee('SM3', 'Shop Three'),
    issued('2026-10', '2026-11-02T08:00:00Z', [
      { subMerchantId: 'SM1', reference: 'RS-SM1-2026-10-EUR', payable: 1000_00n },
      { subMerchantId: 'SM2', reference: 'RS-SM2-2026-10-EUR', payable: 250_00n },
      { subMerchantId: 'SM3', reference: 'RS-SM3-2026-10-EUR', payable: 75_00n },
    ]),
    booked({
      bankRef: 'B-1',
      amount: 1000_00n,
      bookingDate: '2026-11-03',
      remittance: 'RS-SM1-2026-10-EUR',
      counterpartyAccount: 'DE89370400440532013000',
    }),
    booked({ bankRef: 'B-2', amount: 100_00n, bookingDate: '2026-11-03', remittance: 'RS-SM2-2026-10-EUR' }),
    // the clock passes the due day (issue + 5 days): SM3 was never paid
    booked({ bankRef: 'B-9', amount: 3_00n, bookingDate: '2026-11-12', remittance: 'unrelated' }),
  ]);
});
afterAll(async () => {
  await killAll();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recon payouts', () => {
  it('lists each payout with what the bank did, as a table, as JSON and as a workbook', {
    timeout: 600_000,
  }, async () => {
    const t = await runRecon(['payouts', '--month', '2026-10'], env, RUN_MS);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(
      /RS-SM1-2026-10-EUR\s+Shop One\s+1000\.00 EUR paid\s+1000\.00 2026-11-03 B-1\s+DE89370400440532013000/,
    );
    expect(t.stdout).toMatch(/RS-SM2-2026-10-EUR\s+Shop Two\s+250\.00 EUR partial\s+100\.00 2026-11-03 B-2/);
    expect(t.stdout).toMatch(/RS-SM3-2026-10-EUR\s+Shop Three\s+75\.00 EUR missing\s+0\.00/);
    expect(t.stdout).toContain('3 payouts: 1 paid, 1 partial, 1 missing');

    const out = path.join(dir, 'out');
    const j = await runRecon(['payouts', '--month', '2026-10', '--format', 'json', '--out', out], env, RUN_MS);
    expect(j.code, j.stderr).toBe(0);
    const rows = JSON.parse(j.stdout) as { reference: string; status: string; paidOut: string; bankRef: string }[];
    expect(rows.map((r) => [r.reference, r.status, r.paidOut, r.bankRef])).toEqual([
      ['RS-SM1-2026-10-EUR', 'paid', '100000', 'B-1'],
      ['RS-SM2-2026-10-EUR', 'partial', '10000', 'B-2'],
      ['RS-SM3-2026-10-EUR', 'missing', '0', null],
    ]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, 'payout-status-2026-10.xlsx'));
    const sheet = wb.getWorksheet('Payout status')!;
    expect(sheet.getRow(2).getCell(1).value).toBe('RS-SM1-2026-10-EUR');
    expect(sheet.getRow(2).getCell(7).value).toBe('paid');

    const other = await runRecon(['payouts', '--month', '2026-09'], env, RUN_MS);
    expect(other.stdout).toContain('0 payouts');
    const bad = await runRecon(['payouts', '--month', '2026-13'], env, RUN_MS);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--month: expected YYYY-MM')]);
  });
});
