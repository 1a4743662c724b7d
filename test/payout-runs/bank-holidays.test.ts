import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { bankConfigFrom, bankConfigSchema, executionHolidays } from '../../src/config/bank';
import { createPayoutRunsApi } from '../../src/http/payout-runs-api';
import { approveRun, draftRun } from '../../src/payout-runs/actions';
import { directoryReader } from '../../src/people/authenticate';
import { addUser } from '../../src/people/manage';
import { bankSettingsText } from '../../src/projector/bank-settings';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person, register, weekdayAhead } from './fixtures';

/**
 * A payout run is never dated on the payouts bank's holiday (`bank.payouts.holidays`, else
 * `bank.settlement.holidays`): an asked holiday is refused naming the option, and the default date moves past
 * holidays as past a weekend. Through the actions, the HTTP API and the real `recon` binary.
 */

let db: TestDatabase;
let store: EventStore;
let adminToken = '';
const dir = mkdtempSync(path.join(tmpdir(), 'payout-holidays-'));
const CONFIG = path.join(dir, 'recon.json');
const BIN = path.resolve('bin/recon.mjs');
// a Tuesday two weeks ahead is the bank's holiday in the CLI's and the API's configuration
const HOLIDAY = weekdayAhead(2);

const payout = (sm: string, month: string) => ({
  subMerchantId: sm,
  currency: 'EUR',
  reference: `RS-${sm}-${month}-EUR`,
  amountDue: '1000',
  held: '0',
  payable: '1000',
  holds: [],
});

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  adminToken = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  for (const month of ['2026-07', '2026-08', '2026-09', '2026-10']) await issue(store, month, [payout('SM-A', month)]);
  writeFileSync(
    CONFIG,
    JSON.stringify({
      bank: {
        accounts: [{ id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' }],
        payouts: { holidays: [HOLIDAY] },
      },
    }),
  );
}, 120_000);
afterAll(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const draft = async (month: string) =>
  (await draftRun(store, person('ana', 'analyst'), { month, bank: BANK, env: ENV, paidByBank: NONE_PAID, now })).run!
    .id;
const now = new Date('2026-12-24T10:00:00.000Z'); // Thursday 24 December in Kyiv
const at = { timezone: 'Europe/Kyiv', now };
const iryna = person('iryna', 'approver');

describe('payout runs and the bank holidays', () => {
  it('the configuration: the payouts holidays, else the settlement holidays; neither part of the bank settings a build records', () => {
    const settlementOnly = bankConfigFrom(bankConfigSchema.parse({ settlement: { holidays: ['2026-12-25'] } }));
    expect([...executionHolidays(settlementOnly)]).toEqual(['2026-12-25']);
    const both = bankConfigFrom(
      bankConfigSchema.parse({
        settlement: { holidays: ['2026-12-25'] },
        payouts: { holidays: ['2026-12-31', '2026-12-28', '2026-12-31'] },
      }),
    );
    expect([...executionHolidays(both)]).toEqual(['2026-12-28', '2026-12-31']);
    expect([...executionHolidays(undefined)]).toEqual([]);
    // the payouts holidays date runs only: setting them must not rebuild any read model
    const without = bankConfigFrom(bankConfigSchema.parse({ settlement: { holidays: ['2026-12-25'] } }));
    expect(bankSettingsText(both)).not.toContain('2026-12-31');
    expect(bankSettingsText(without)).toBe(bankSettingsText(settlementOnly));
    expect(() => bankConfigSchema.parse({ payouts: { holidays: ['2026-13-01'] } })).toThrow(/holidays/);
  });

  it('an asked holiday is refused naming the option; the default moves past holidays and the weekend', async () => {
    const holidays = new Set(['2026-12-24', '2026-12-25', '2026-12-28']);
    const first = await draft('2026-07');
    await expect(
      approveRun(store, iryna, first, { ...at, holidays, executionDate: '2026-12-25' }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message:
        '--execution-date (executionDate): 2026-12-25 is a bank holiday (bank.payouts.holidays, or bank.settlement.holidays when none); the bank executes no transfers on it',
    });
    // Thursday and Friday are holidays, then the weekend, then Monday: Tuesday 29 December
    expect((await approveRun(store, iryna, first, { ...at, holidays })).executionDate).toBe('2026-12-29');
    // without holidays the day of approval, as before
    const second = await draft('2026-08');
    expect((await approveRun(store, iryna, second, at)).executionDate).toBe('2026-12-24');
  });

  it('over HTTP: a holiday in the configuration is refused (400) naming the field', async () => {
    const irynaToken = (await addUser(store, adminToken, { id: 'iryna', name: 'Iryna', role: 'approver' })).token;
    const id = await draft('2026-09');
    const api = createPayoutRunsApi({
      store,
      directory: directoryReader(store, 0),
      timezone: 'Europe/Kyiv',
      bank: bankConfigFrom(bankConfigSchema.parse({ payouts: { holidays: [HOLIDAY] } })),
    });
    const server: Server = createServer((req, res) => {
      void api(req, res).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const post = (executionDate: string) =>
        fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/payout-runs/${id}/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${irynaToken}` },
          body: JSON.stringify({ executionDate }),
        });
      const refused = await post(HOLIDAY);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(await refused.json())).toContain(`${HOLIDAY} is a bank holiday`);
      const ok = await post(weekdayAhead(3));
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ id, status: 'approved', executionDate: weekdayAhead(3) });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('recon payout-runs approve --execution-date <a holiday in RECON_CONFIG> exits with a usage error', async () => {
    const id = await draft('2026-10');
    const approverToken = (await addUser(store, adminToken, { id: 'petro', name: 'Petro', role: 'approver' })).token;
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], {
          env: reconEnv({
            databaseUrl: db.url,
            timezone: 'Europe/Kyiv',
            extra: { RECON_LOG_LEVEL: 'error', RECON_CONFIG: CONFIG, RECON_TOKEN: approverToken },
          }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.once('exit', (code) => resolve({ code, stdout, stderr }));
      });
    const refused = await run(['payout-runs', 'approve', id, '--execution-date', HOLIDAY]);
    expect(refused.code).toBe(EXIT_CODE.usage);
    expect(refused.stderr).toContain(`--execution-date (executionDate): ${HOLIDAY} is a bank holiday`);
    const approved = await run(['payout-runs', 'approve', id, '--execution-date', weekdayAhead(3)]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`approved ${id}`);
  }, 60_000);
});
