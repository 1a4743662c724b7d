import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { PayeeAccountConfirmed, subMerchantStream } from '../../src/events/ledger-events';
import { importSubMerchants } from '../../src/ingest/sub-merchants';
import { draftRun } from '../../src/payout-runs/actions';
import { payeeOf } from '../../src/payout-runs/inputs';
import { confirmPayeeAccount } from '../../src/payout-runs/payees';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, NONE_PAID, person, register } from './fixtures';

/**
 * A payout account that replaces another in the directory (RECON_SUB_MERCHANTS, edited by whoever can edit the
 * file) is paid nothing until a named approver confirms exactly it: a changed file alone never redirects money.
 * The account of a sub-merchant's first registration is its onboarding, trusted as before; an account first given
 * in a later registration waits for a confirmation like a replacement.
 */

let db: TestDatabase;
let store: EventStore;
let approverToken = '';
const OLD = 'FR1420041010050500013M02606';
const NEW = 'DE89370400440532013000';
const NOW = new Date('2026-11-26T09:00:00.000Z');
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');

const payout = (sm: string, month: string) => ({
  subMerchantId: sm,
  currency: 'EUR',
  reference: `RS-${sm}-${month}-EUR`,
  amountDue: '5000',
  held: '0',
  payable: '5000',
  holds: [],
});
const draft = (month: string) => draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW });

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const admin = await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' });
  approverToken = (await addUser(store, admin.token, { id: 'petro', name: 'Petro', role: 'approver' })).token;
  await register(store, 'SM-A', { payoutAccount: OLD });
  await register(store, 'SM-B', { payoutAccount: OLD });
  await register(store, 'SM-C');
  await issue(store, '2026-05', [payout('SM-A', '2026-05')]);
  await issue(store, '2026-06', [payout('SM-B', '2026-06')]);
  await issue(store, '2026-07', [payout('SM-C', '2026-07')]);
}, 120_000);
afterAll(async () => {
  await db.drop();
});

describe("a payee's new payout account", () => {
  it('the first account is trusted; one that replaces it is left out of the run until confirmed', async () => {
    expect((await payeeOf(store, 'SM-A'))?.accountConfirmed).toBeUndefined();
    await register(store, 'SM-A', { payoutAccount: NEW });
    expect(await payeeOf(store, 'SM-A')).toMatchObject({ payoutAccount: NEW, accountConfirmed: false });
    const r = await draft('2026-05');
    expect(r.run).toBeNull();
    expect(r.plan.leftOut).toEqual([
      expect.objectContaining({
        subMerchantId: 'SM-A',
        reference: 'RS-SM-A-2026-05-EUR',
        reason: 'payee_account_unconfirmed',
      }),
    ]);
  });

  it('confirmed only by an approver, only as the directory gives it, with a note', async () => {
    const at = { subMerchantId: 'SM-A', note: 'called back on the number we have on file', now: NOW };
    await expect(confirmPayeeAccount(store, ana, { ...at, account: NEW })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(confirmPayeeAccount(store, iryna, { ...at, account: OLD })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^--account: the directory gives SM-A the account …3000 with no BIC, not …2606/),
    });
    await expect(confirmPayeeAccount(store, iryna, { ...at, account: NEW, bic: 'COBADEFFXXX' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(confirmPayeeAccount(store, iryna, { ...at, account: NEW, note: '  ' })).rejects.toMatchObject({
      message: '--note: say how the account was checked with the sub-merchant',
    });
    await expect(confirmPayeeAccount(store, iryna, { ...at, account: 'DE89 3704' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    // typed with spaces and in lower case, as read off a letter
    expect(await confirmPayeeAccount(store, iryna, { ...at, account: 'de89 3704 0044 0532 0130 00' })).toBe(true);
    expect(await confirmPayeeAccount(store, iryna, { ...at, account: NEW })).toBe(false);
    const confirmations = (await store.readStream(subMerchantStream('SM-A'))).filter(
      (e) => e.type === PayeeAccountConfirmed.type,
    );
    expect(confirmations.map((e) => e.data)).toEqual([
      expect.objectContaining({ payoutAccount: NEW, payoutBic: null, confirmedBy: 'iryna' }),
    ]);
    const r = await draft('2026-05');
    expect(r.run?.lines.map((l) => [l.reference, l.creditorAccount])).toEqual([['RS-SM-A-2026-05-EUR', NEW]]);
  });

  it('a directory imported again after the confirmation appends nothing; a later change needs a new one', async () => {
    const row = {
      subMerchantId: 'SM-A',
      name: 'SM-A shop',
      reserveHoldDays: 0,
      payoutAccount: NEW,
      file: 'x.csv',
      line: 2,
    };
    expect(await importSubMerchants(store, [row])).toMatchObject({ registered: 0, unchanged: 1 });
    // back to the old account, never confirmed as a replacement: left out again
    await importSubMerchants(store, [{ ...row, payoutAccount: OLD }]);
    expect(await payeeOf(store, 'SM-A')).toMatchObject({ payoutAccount: OLD, accountConfirmed: false });
  });

  it('an account first given after onboarding, money waiting with nowhere to go, is a change: confirmed first', async () => {
    const none = await draft('2026-07');
    expect(none.plan.leftOut).toEqual([
      expect.objectContaining({ subMerchantId: 'SM-C', reason: 'no_payout_account' }),
    ]);
    await register(store, 'SM-C', { payoutAccount: NEW });
    expect(await payeeOf(store, 'SM-C')).toMatchObject({ payoutAccount: NEW, accountConfirmed: false });
    const waiting = await draft('2026-07');
    expect(waiting.run).toBeNull();
    expect(waiting.plan.leftOut).toEqual([
      expect.objectContaining({ subMerchantId: 'SM-C', reason: 'payee_account_unconfirmed' }),
    ]);
    const at = { subMerchantId: 'SM-C', account: NEW, note: 'called back on the number we have on file', now: NOW };
    expect(await confirmPayeeAccount(store, iryna, at)).toBe(true);
    const paid = await draft('2026-07');
    expect(paid.run?.lines.map((l) => [l.reference, l.creditorAccount])).toEqual([['RS-SM-C-2026-07-EUR', NEW]]);
  });

  it('recon payout-runs confirm-payee, through the real binary', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [path.resolve('bin/recon.mjs'), 'payout-runs', 'confirm-payee', ...args], {
        env: reconEnv({
          databaseUrl: db.url,
          timezone: 'Europe/Kyiv',
          extra: { RECON_LOG_LEVEL: 'error', RECON_TOKEN: approverToken },
        }),
        encoding: 'utf8',
        timeout: 120_000,
      });
    const missing = run(['SM-B', '--account', NEW]);
    expect(missing.status).toBe(EXIT_CODE.usage);
    expect(missing.stderr).toContain("required option '--note <text>' not specified");
    const trusted = run(['SM-B', '--account', OLD, '--note', 'letter of 2026-11-20']);
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(trusted.stdout).toBe("SM-B's payout account is already trusted; nothing recorded\n");
    const unknown = run(['SM-Z', '--account', OLD, '--note', 'x']);
    expect(unknown.status).toBe(EXIT_CODE.usage);
    expect(unknown.stderr).toContain('sub-merchant: SM-Z is not in the directory');
  });
});
