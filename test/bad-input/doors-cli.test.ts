import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { BankEntryBooked, BankStatementImported, bankAccountStream } from '../../src/events/bank-events';
import { newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { SyncWindowCompleted, syncStream } from '../../src/events/ingest-events';
import { registerObserved } from '../../src/ingest/observations';
import { saleRecord } from '../export/support';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { killAll, ROOT, runRecon } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * What the command line prints (issue 23), through the real binary: `recon config` never shows a password or
 * a secret; the listings of external text (`recon bank entries`, `recon sub-merchants list`) show control
 * characters, ANSI escapes and bidirectional overrides as escapes; the file doors refuse with exit 65 naming
 * file and line (never 70), and leave the store as it was.
 */

const RUN_MS = 180_000;
const dir = mkdtempSync(path.join(tmpdir(), 'recon-doors-cli-'));
let db: TestDatabase;
let store: EventStore;
let env: NodeJS.ProcessEnv;
const ACCOUNT = 'DE89370400440532013000';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ bank: { accounts: [{ id: ACCOUNT, currency: 'EUR', role: 'settlement' }] } }));
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: config, RECON_LOG_LEVEL: 'error' } });
});
afterAll(async () => {
  await killAll();
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const eventCount = async () => (await store.readAll()).length;

describe('recon config hides every secret', () => {
  /** only the given variables (plus PATH/HOME): nothing from the test's own environment */
  const config = (vars: Record<string, string>) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...vars },
      encoding: 'utf8',
      timeout: 30_000,
    });
  const SECRETS = {
    PSP_BASE_URL: 'https://api.psp.example',
    PSP_REPORT_URL: 'https://report.psp.example/?x=1',
    PSP_POS_ID: '11111111-2222-4333-8444-555555555555',
    PSP_API_KEY: 'pk_live_TOPSECRET_2',
    PSP_API_SECRET: 'sk_live_TOPSECRET_3',
    PSP_ENDPOINTS_KEY: 'ek_live_TOPSECRET_4',
    DATABASE_URL: 'postgres://recon:db_TOPSECRET_5@localhost:5432/recon',
    EVENTSTORE_URL: 'esdb://admin:es_TOPSECRET_6@localhost:2113?tls=false',
    RECON_SMTP_URL: 'smtps://mailer:smtp_TOPSECRET_7%21@smtp.example:465',
    RECON_MAIL_FROM: 'statements@marketplace.example',
    RECON_AUDITOR_TOKEN: 'auditor_TOPSECRET_8_0123456789',
    RECON_ORDERS_TOKEN: 'orders_TOPSECRET_9_0123456789',
  };

  it('prints the SMTP URL without its password, and no secret anywhere', () => {
    const r = config(SECRETS);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/TOPSECRET/);
    const shown = JSON.parse(r.stdout) as { mail: { smtpUrl: string; from: string }; projects: { baseUrl: string }[] };
    expect(shown.mail).toEqual({
      smtpUrl: 'smtps://mailer:***@smtp.example:465',
      from: 'statements@marketplace.example',
    });
    expect(shown.projects[0]!.baseUrl).toBe('https://api.psp.example');
  });

  it('a PSP URL carrying a password is refused without showing it (fetch would refuse every request to it)', () => {
    const r = config({ ...SECRETS, PSP_BASE_URL: 'https://psp-user:PSPURL_TOPSECRET_1@api.psp.example' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('PSP_BASE_URL');
    expect(r.stderr + r.stdout).not.toMatch(/TOPSECRET/);
  });

  it('an invalid SMTP URL is refused without showing it', () => {
    const r = config({ ...SECRETS, RECON_SMTP_URL: 'http://mailer:smtp_TOPSECRET_7@smtp.example' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain(
      'RECON_SMTP_URL: expected smtp://user:password@host:port or smtps://… (value not shown)',
    );
    expect(r.stderr + r.stdout).not.toMatch(/TOPSECRET/);
  });
});

describe('listings of external text are escaped for the terminal', () => {
  it('recon bank entries and recon sub-merchants list show escapes, never act on the terminal', async () => {
    // texts stored before any door checked them (a bank file's remittance keeps line breaks by policy)
    const statement = newEvent(BankStatementImported, {
      accountId: ACCOUNT,
      currency: 'EUR',
      statementId: 'st-\u001b[2J-1',
      format: 'csv',
      openingDate: '2026-01-01',
      closingDate: '2026-01-31',
      openingBalance: '0',
      closingBalance: '1000',
      entries: 1,
      fileSha256: '0'.repeat(64),
    });
    const entry = newEvent(BankEntryBooked, {
      accountId: ACCOUNT,
      currency: 'EUR',
      direction: 'credit',
      amount: '1000',
      bookingDate: '2026-01-15',
      valueDate: null,
      bankRef: 'ref\u009b2J',
      batchRef: null,
      detail: 0,
      endToEndId: null,
      remittance: 'pay\u202Eevil\nline2\u0007',
      counterpartyName: '\u001b[31mEvil\u001b[0m',
      counterpartyAccount: null,
      isReturn: false,
      transactionCode: null,
      statementId: 'st-\u001b[2J-1',
    });
    await store.append(bankAccountStream(ACCOUNT), [statement, entry]);
    await store.append(subMerchantStream('sm-ansi'), [
      newEvent(SubMerchantRegistered, {
        subMerchantId: 'sm-ansi',
        name: '\u001b]0;pwned\u0007Shop\u202E',
        reserveHoldDays: 1,
      }),
    ]);
    // a register row paid to a receiver the directory does not know (its report complete): an
    // unknown_sub_merchant naming the receiver, which `recon discrepancies` prints
    const ghost = saleRecord('pos-cli', 'pay-ghost', '2026-01-10T10:00:00.000Z', '\u001b[31mGhost\u202E', 5_000n);
    const window = { from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' };
    const observed = registerObserved('pos-cli', JSON.stringify(ghost), ghost, {
      source: 'register',
      reportId: 'rep-1',
      window,
      observedAt: '2026-02-01T01:00:00.000Z',
    });
    await store.append(observed.stream, [observed.event]);
    await store.append(syncStream('pos-cli'), [
      newEvent(SyncWindowCompleted, {
        posId: 'pos-cli',
        window,
        reportId: 'rep-1',
        announcedCount: 1,
        registerRecords: 1,
        periodRecords: 0,
        rejected: 0,
        appended: 1,
        durationMs: 1,
        completedAt: '2026-02-01T01:00:00.000Z',
      }),
    ]);
    const projected = await runRecon(['project'], env, RUN_MS);
    expect(projected.code, projected.stderr).toBe(0);

    const bank = await runRecon(['bank', 'entries'], env, RUN_MS);
    expect(bank.code, bank.stderr).toBe(0);
    expect(bank.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(bank.stdout).toContain('\\u{1b}[31mEvil\\u{1b}[0m');
    expect(bank.stdout).toContain('pay\\u{202e}evil\\nline2\\u{7}');
    expect(bank.stdout).toContain('ref\\u{9b}2J');
    // one entry is one line of the table: header, the row, the count
    expect(bank.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(bank.stdout).toMatch(/1 row\n$/);

    const list = await runRecon(['sub-merchants', 'list'], env, RUN_MS);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(list.stdout).toContain('sm-ansi          \\u{1b}]0;pwned\\u{7}Shop\\u{202e}  1');

    const found = await runRecon(['discrepancies', '--type', 'unknown_sub_merchant'], env, RUN_MS);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(found.stdout).toContain('\\u{1b}[31mGhost\\u{202e}');
    expect(found.stdout).toMatch(/1 discrepancy\n$/);
  });
});

describe('the file doors through the binary: exit 65 naming file and line, the store unchanged', () => {
  it('recon orders import of created_at 9999 and a NUL reference', async () => {
    const before = await eventCount();
    const file = path.join(dir, 'orders.csv');
    writeFileSync(
      file,
      'order_id,amount,currency,created_at,customer_reference\n' +
        'o-ok,10.00,EUR,2026-01-05T10:00:00Z,\n' +
        'o-9999,10.00,EUR,9999-12-31T23:59:59Z,\n' +
        'o-big,10.00,EUR,+275760-09-13T00:00:00Z,\n' +
        'o-nul,10.00,EUR,2026-01-05T10:00:00Z,"a\u0000b"\n',
    );
    const r = await runRecon(['orders', 'import', file], env, RUN_MS);
    expect(r.code).toBe(65);
    const latest = new Date();
    latest.setUTCFullYear(latest.getUTCFullYear() + 10);
    expect(r.stderr).toContain(`recon: ${file}: 3 bad records (nothing imported) (ORDERS_FILE_INVALID):`);
    expect(r.stderr).toContain(
      `orders.csv:3 (field created_at): date 9999-12-31 is after ${latest.toISOString().slice(0, 10)}`,
    );
    expect(r.stderr).toContain(
      'orders.csv:4 (field created_at): not a date-time in ISO 8601 form with a zone (YYYY-MM-DDTHH:MM:SSZ): "+275760-09-13T00:00:00Z"',
    );
    expect(r.stderr).toContain('orders.csv:5 (field customer_reference): a NUL character at character 2');
    expect(r.stderr).not.toMatch(/ZodError|"code":|\u0000/);
    expect(await eventCount()).toBe(before);
  });

  it('recon sub-merchants import of a NUL and a line break in names', async () => {
    const before = await eventCount();
    const file = path.join(dir, 'directory.csv');
    writeFileSync(
      file,
      'sub_merchant_id,name,reserve_hold_days\nsm-1,Good,1\nsm-2,Bad\u0000Name,1\nsm-3,"Two\r\nlines",1\n',
    );
    const r = await runRecon(['sub-merchants', 'import', file], env, RUN_MS);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${file}:3 (column name): a NUL character at character 4`);
    expect(r.stderr).toContain(`${file}:4 (column name): a control character (U+000D) at character 4`);
    expect(r.stderr).not.toContain('INTERNAL');
    expect(await eventCount()).toBe(before);
  });
});
