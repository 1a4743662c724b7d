import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { ROLES } from '../../src/events/people-events';
import {
  approveRun,
  cancelRun,
  draftRun,
  listRuns,
  paymentFile,
  sendRun,
  showRun,
} from '../../src/payout-runs/actions';
import { foldRuns, totalsOf } from '../../src/payout-runs/runs';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, decide, ENV, issue, person, register, revoke, NONE_PAID, weekdayAhead } from './fixtures';
import { texts, wasmErrors } from './validate';

/**
 * Payout runs from the statements' payouts (docs/exceptions.md, "Payout runs"): maker-checker, roles, a re-run
 * never pays twice, holds not paid and released holds paid once a statement asks for them, a sub-merchant
 * without a payout account listed and left out, the file valid and exact.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db.drop();
});

const ana = person('ana', 'analyst');
const petro = person('petro', 'approver');
const iryna = person('iryna', 'approver');
const D1 = '11111111-1111-4111-8111-111111111111';
const D2 = '22222222-2222-4222-8222-222222222222';
const D3 = '33333333-3333-4333-8333-333333333333';
const MONTH = '2026-10';
const NOW = new Date('2026-11-27T09:00:00.000Z');
const AT = { timezone: 'Europe/Kyiv', now: NOW };
const draft = (who = ana, month = MONTH) =>
  draftRun(store, who, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW });
const revision = async () => (await store.readStream(PAYOUT_RUNS_STREAM)).length;

describe('payout runs', () => {
  let first = '';

  it('drafts the month’s payables; holds in force are not paid; no payout account: listed, left out', async () => {
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606', legalName: 'A & Sons <SARL>' });
    await register(store, 'SM-B');
    // an account that is not an IBAN, with its bank's BIC
    await register(store, 'SM-C', { payoutAccount: 'JP0001', payoutBic: 'BOTKJPJTXXX' });
    await issue(store, MONTH, [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-10-EUR',
        amountDue: '100000',
        held: '2500',
        payable: '100000',
        holds: [[D1, '2500']],
      },
      {
        subMerchantId: 'SM-A',
        currency: 'UAH',
        reference: 'RS-SM-A-2026-10-UAH',
        amountDue: '1234567',
        held: '700',
        payable: '1234567',
        holds: [[D2, '700']],
      },
      {
        subMerchantId: 'SM-B',
        currency: 'EUR',
        reference: 'RS-SM-B-2026-10-EUR',
        amountDue: '5000',
        held: '0',
        payable: '5000',
        holds: [],
      },
      {
        subMerchantId: 'SM-C',
        currency: 'JPY',
        reference: 'RS-SM-C-2026-10-JPY',
        amountDue: '500000',
        held: '0',
        payable: '500000',
        holds: [],
      },
      {
        subMerchantId: 'SM-C',
        currency: 'EUR',
        reference: null,
        amountDue: '-300',
        held: '0',
        payable: '0',
        holds: [],
      },
      {
        subMerchantId: 'receiver:Unknown shop',
        currency: 'EUR',
        reference: null,
        amountDue: '0',
        held: '900',
        payable: '0',
        holds: [['', '900']],
      },
    ]);
    await decide(store, D2, 'withhold');
    const r = await draft();
    expect(r.created).toBe(true);
    first = r.run!.id;
    expect(first).toBe('PR-2026-10-1');
    expect(
      r.run!.lines.map((l) => [l.reference, l.amount, l.creditorName, l.creditorAccount, l.creditorAgent]),
    ).toEqual([
      ['RS-SM-A-2026-10-EUR', '100000', 'A & Sons <SARL>', 'FR1420041010050500013M02606', undefined],
      ['RS-SM-A-2026-10-UAH', '1234567', 'A & Sons <SARL>', 'FR1420041010050500013M02606', undefined],
      ['RS-SM-C-2026-10-JPY', '500000', 'SM-C shop', 'JP0001', 'BOTKJPJTXXX'],
    ]);
    expect(r.run!.leftOut).toEqual([
      {
        subMerchantId: 'SM-B',
        currency: 'EUR',
        amount: '5000',
        reference: 'RS-SM-B-2026-10-EUR',
        reason: 'no_payout_account',
      },
    ]);
    expect(r.run!.heldInForce.map((h) => [h.subMerchantId, h.discrepancyId, h.amount])).toEqual([
      ['SM-A', D1, '2500'],
      ['SM-A', D2, '700'],
      ['receiver:Unknown shop', '', '900'],
    ]);
    expect(r.run!.debtors).toEqual([
      { currency: 'EUR', account: 'DE89370400440532013000', name: 'Marketplace & Co', bic: 'COBADEFFXXX' },
      { currency: 'JPY', account: '10010010/1234567890', name: 'Marketplace & Co', bic: 'COBADEFFXXX' },
      { currency: 'UAH', account: 'UA213223130000026007233566001', name: 'Marketplace & Co', bic: 'COBADEFFXXX' },
    ]);
    expect(r.run!.draftedBy).toBe('ana');
  });

  it('drafted again: the same run, nothing appended', async () => {
    const before = await revision();
    const again = await draft(petro);
    expect(again).toMatchObject({ created: false, run: { id: first, status: 'draft', draftedBy: 'ana' } });
    expect(await revision()).toBe(before);
  });

  it('maker-checker and roles: the drafter never approves; an analyst, a viewer or an admin never approve', async () => {
    const own = await draft(petro, '2026-09');
    expect(own.run).toBeNull(); // no statement of September: nothing to pay, nothing appended
    await expect(approveRun(store, ana, first, { timezone: 'Europe/Kyiv', now: NOW })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'ana is an analyst; payout-run.approve is not theirs',
    });
    for (const role of ['viewer', 'admin'] as const)
      await expect(approveRun(store, person('x', role), first, { timezone: 'Europe/Kyiv' })).rejects.toMatchObject({
        code: 'FORBIDDEN',
      });
    await expect(
      draftRun(store, person('v', 'viewer'), { month: MONTH, bank: BANK, env: ENV, paidByBank: NONE_PAID }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(paymentFile(store, person('v', 'viewer'), first, AT)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(paymentFile(store, ana, first, AT)).rejects.toMatchObject({ code: 'RUN_NOT_APPROVED' });
  });

  it('an approver who drafted a run cannot approve it', async () => {
    await issue(store, '2026-08', [
      {
        subMerchantId: 'SM-C',
        currency: 'JPY',
        reference: 'RS-SM-C-2026-08-JPY',
        amountDue: '100',
        held: '0',
        payable: '100',
        holds: [],
      },
    ]);
    const r = await draft(petro, '2026-08');
    await expect(approveRun(store, petro, r.run!.id, { timezone: 'Europe/Kyiv', now: NOW })).rejects.toMatchObject({
      code: 'MAKER_CHECKER',
      message: expect.stringContaining('another approver must approve it'),
    });
    // cancelled: a draft only, with a reason; its references can be drafted again
    await expect(cancelRun(store, petro, r.run!.id, ' ')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await cancelRun(store, petro, r.run!.id, 'wrong month')).status).toBe('cancelled');
    const again = await draft(ana, '2026-08');
    expect(again.run).toMatchObject({ id: 'PR-2026-08-2', status: 'draft' });
    // 100 hundredths of a yen is one yen: whole, paid
    expect(again.run!.lines.map((l) => l.amount)).toEqual(['100']);
  });

  it('leaves out, listed with the reason, a fraction of a yen and a sub-merchant the directory does not know', async () => {
    await issue(store, '2026-06', [
      {
        subMerchantId: 'SM-C',
        currency: 'JPY',
        reference: 'RS-SM-C-2026-06-JPY',
        amountDue: '12345',
        held: '0',
        payable: '12345',
        holds: [],
      },
      {
        subMerchantId: 'SM-Z',
        currency: 'EUR',
        reference: 'RS-SM-Z-2026-06-EUR',
        amountDue: '100',
        held: '0',
        payable: '100',
        holds: [],
      },
    ]);
    const before = await revision();
    const r = await draft(ana, '2026-06');
    expect(r.run).toBeNull(); // nothing the file can carry: no run
    expect(await revision()).toBe(before);
    expect(r.plan.leftOut.map((l) => [l.reference, l.reason])).toEqual([
      ['RS-SM-C-2026-06-JPY', 'not_whole_units'],
      ['RS-SM-Z-2026-06-EUR', 'not_registered'],
    ]);
  });

  it('refuses a bad month or run id, naming it; of two approvals at once, one lands', async () => {
    await expect(draft(ana, '2026-13')).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('--month'),
    });
    await expect(showRun(store, ana, 'PR-x')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(showRun(store, ana, 'PR-2026-10-7')).rejects.toMatchObject({ code: 'NO_SUCH_RUN' });
    await issue(store, '2026-07', [
      {
        subMerchantId: 'SM-C',
        currency: 'JPY',
        reference: 'RS-SM-C-2026-07-JPY',
        amountDue: '200',
        held: '0',
        payable: '200',
        holds: [],
      },
    ]);
    const r = await draft(ana, '2026-07');
    const both = await Promise.allSettled(
      [petro, iryna].map((who) => approveRun(store, who, r.run!.id, { timezone: 'Europe/Kyiv', now: NOW })),
    );
    expect(both.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await showRun(store, ana, r.run!.id)).status).toBe('approved');
  });

  it('approved by a second person: the file is valid, exact and names the statement references', async () => {
    await expect(
      approveRun(store, iryna, first, { timezone: 'Europe/Kyiv', executionDate: '2026-11-01', now: NOW }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const r = await approveRun(store, iryna, first, { timezone: 'Europe/Kyiv', executionDate: '2026-11-30', now: NOW });
    expect(r).toMatchObject({ status: 'approved', approvedBy: 'iryna', executionDate: '2026-11-30' });
    expect(await showRun(store, person('v', 'viewer'), first)).toEqual(r);
    await expect(approveRun(store, petro, first, { timezone: 'Europe/Kyiv' })).rejects.toMatchObject({
      code: 'RUN_NOT_DRAFT',
    });
    const f = await paymentFile(store, ana, first, AT);
    expect(await wasmErrors(f.xml)).toEqual([]);
    const t = texts(f.xml);
    const amounts = t.filter((x) => x.path.endsWith('InstdAmt')).map((x) => `${x.text} ${x.attributes.Ccy}`);
    expect(amounts).toEqual(['1000.00 EUR', '5000 JPY', '12345.67 UAH']);
    expect(t.find((x) => x.path.endsWith('GrpHdr/CtrlSum'))!.text).toBe('18345.67');
    expect(t.filter((x) => x.path.endsWith('Cdtr/Nm')).map((x) => x.text)).toContain('A & Sons <SARL>');
    expect(totalsOf(r)).toEqual([
      { currency: 'EUR', amount: 100000n, count: 1 },
      { currency: 'JPY', amount: 500000n, count: 1 },
      { currency: 'UAH', amount: 1234567n, count: 1 },
    ]);
  });

  it('sent: the sha-256 of the file is kept; a sent run is neither cancelled nor sent again', async () => {
    const r = await sendRun(store, ana, first, AT);
    expect(r.fileSha256).toBe((await paymentFile(store, ana, first, AT)).sha256);
    await expect(sendRun(store, ana, first, AT)).rejects.toMatchObject({ code: 'RUN_ALREADY_SENT' });
    await expect(cancelRun(store, ana, first, 'x')).rejects.toMatchObject({
      code: 'RUN_NOT_DRAFT',
      message: expect.stringContaining('is sent; only a draft or an approved run not yet sent is cancelled'),
    });
  });

  it('a re-run never asks for money twice: nothing new once every reference is in a run', async () => {
    const before = await revision();
    const r = await draft();
    expect(r.run).toBeNull();
    expect(await revision()).toBe(before);
  });

  it('a hold released since the statement is listed, and paid once a statement asks for it (the difference only)', async () => {
    await decide(store, D1, 'pay');
    const acceptance = await decide(store, D3, 'write_off');
    await revoke(store, D3, acceptance); // revoked: open again, still held
    const listed = await draft();
    expect(listed.run).toBeNull();
    expect(listed.plan.releasedSinceStatement).toEqual([
      { subMerchantId: 'SM-A', currency: 'EUR', discrepancyId: D1, amount: '2500', decision: 'pay' },
    ]);
    // the month issued again: its amount due has the 25.00 released; payable asks only for the difference
    await issue(store, MONTH, [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-10-EUR-2',
        amountDue: '102500',
        held: '0',
        payable: '2500',
        holds: [],
      },
      {
        subMerchantId: 'SM-A',
        currency: 'UAH',
        reference: null,
        amountDue: '1234567',
        held: '700',
        payable: '0',
        holds: [[D2, '700']],
      },
      {
        subMerchantId: 'SM-C',
        currency: 'JPY',
        reference: null,
        amountDue: '500000',
        held: '0',
        payable: '0',
        holds: [[D3, '100']],
      },
    ]);
    const r = await draft();
    expect(r.run!.id).toBe('PR-2026-10-2');
    expect(r.run!.lines).toEqual([
      expect.objectContaining({
        reference: 'RS-SM-A-2026-10-EUR-2',
        amount: '2500',
        releasedHolds: [{ discrepancyId: D1, amount: '2500', decision: 'pay' }],
      }),
    ]);
    // withheld and revoked holds stay held, as does an unregistered receiver's money; SM-B still has no account (its reference is asked again, listed again)
    expect(r.run!.heldInForce.map((h) => h.discrepancyId)).toEqual([D2, D3, '']);
    expect(r.run!.leftOut.map((l) => l.subMerchantId)).toEqual(['SM-B']);
  });

  it('an approved run whose execution date has passed is neither filed nor sent: cancelled, drafted again', async () => {
    // PR-2026-07-1 was approved on Friday 2026-11-27 for that day; on Monday the bank would not run it that day
    const monday = { timezone: 'Europe/Kyiv', now: new Date('2026-11-30T09:00:00.000Z') };
    for (const act of [
      () => paymentFile(store, ana, 'PR-2026-07-1', monday),
      () => sendRun(store, ana, 'PR-2026-07-1', monday),
    ])
      await expect(act()).rejects.toMatchObject({
        code: 'EXECUTION_DATE_PASSED',
        message: expect.stringContaining('2026-11-27, which has passed (today is 2026-11-30 in Europe/Kyiv)'),
      });
    expect((await cancelRun(store, ana, 'PR-2026-07-1', 'execution date passed')).status).toBe('cancelled');
    const again = await draftRun(store, ana, {
      month: '2026-07',
      bank: BANK,
      env: ENV,
      paidByBank: NONE_PAID,
      now: monday.now,
    });
    expect(again.run).toMatchObject({ id: 'PR-2026-07-2', status: 'draft' });
    expect(again.run!.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-C-2026-07-JPY', '200']]);
    expect((await approveRun(store, petro, 'PR-2026-07-2', monday)).executionDate).toBe('2026-11-30');
    expect((await sendRun(store, ana, 'PR-2026-07-2', monday)).status).toBe('sent');
    // a sent run is not cancelled; its file stays readable whatever the day
    await expect(cancelRun(store, ana, 'PR-2026-07-2', 'x')).rejects.toMatchObject({ code: 'RUN_NOT_DRAFT' });
    const later = { timezone: 'Europe/Kyiv', now: new Date('2027-01-04T09:00:00.000Z') };
    expect((await paymentFile(store, ana, 'PR-2026-07-2', later)).sha256).toBe(
      (await showRun(store, ana, 'PR-2026-07-2')).fileSha256,
    );
  });

  it('lists runs newest first and folds the same runs again from the stream (replay)', async () => {
    const runs = await listRuns(store, person('v', 'viewer'));
    expect(runs.map((r) => [r.id, r.status])).toEqual([
      ['PR-2026-07-2', 'sent'],
      ['PR-2026-10-2', 'draft'],
      ['PR-2026-07-1', 'cancelled'],
      ['PR-2026-08-2', 'draft'],
      ['PR-2026-08-1', 'cancelled'],
      ['PR-2026-10-1', 'sent'],
    ]);
    const folded = foldRuns(await store.readStream(PAYOUT_RUNS_STREAM));
    expect([...folded.runs.values()].reverse()).toEqual(runs);
  });

  it('every role against every action', async () => {
    const can: Record<string, string[]> = {};
    for (const role of ROLES) {
      const who = person(`role-${role}`, role);
      const tries = {
        read: () => listRuns(store, who),
        create: () => draftRun(store, who, { month: '2026-01', bank: BANK, env: ENV, paidByBank: NONE_PAID }),
        approve: () =>
          approveRun(store, who, 'PR-2026-10-2', { timezone: 'Europe/Kyiv', executionDate: weekdayAhead(4) }),
        file: () => paymentFile(store, who, 'PR-2026-10-1', AT),
      };
      can[role] = [];
      for (const [action, run] of Object.entries(tries)) {
        try {
          await run();
          can[role].push(action);
        } catch (e) {
          if ((e as { code?: string }).code !== 'FORBIDDEN') can[role].push(action);
        }
      }
    }
    expect(can).toEqual({
      viewer: ['read'],
      analyst: ['read', 'create', 'file'],
      approver: ['read', 'create', 'approve', 'file'],
      admin: ['read'],
    });
  });
});
