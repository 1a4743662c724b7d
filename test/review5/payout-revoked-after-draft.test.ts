import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveRun, draftRun, paymentFile, sendRun } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, decide, ENV, issue, person, register, revoke, NONE_PAID } from '../payout-runs/fixtures';

/**
 * Review 5: money whose release is taken back after a run was drafted. A run drafted after the revocation leaves
 * the released amount out (`hold_in_force`); a run drafted before it was still approved, filed and sent with it
 * (the order of two clicks decided whether money in doubt was paid). Now refused, HOLD_IN_FORCE.
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
const iryna = person('iryna', 'approver');
const D1 = '11111111-1111-4111-8111-111111111111';
const MONTH = '2026-10';
const NOW = new Date('2026-11-26T09:00:00.000Z'); // a Thursday
const AT = { timezone: 'Europe/Kyiv', now: NOW };

describe('review5: a release revoked between draft and approval', () => {
  it('the run that carries the released hold is not approved once the release is revoked', async () => {
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, MONTH, [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-10-EUR',
        amountDue: '102500',
        held: '2500',
        payable: '100000',
        holds: [[D1, '2500']],
      },
    ]);
    const first = (await draftRun(store, ana, { month: MONTH, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW }))
      .run!;
    await approveRun(store, iryna, first.id, AT);
    await sendRun(store, ana, first.id, AT);
    const acceptance = await decide(store, D1, 'pay');
    // the month issued again: the 25.00 released into a correction's reference
    await issue(store, MONTH, [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-10-EUR-2',
        amountDue: '2500',
        held: '0',
        payable: '2500',
        holds: [],
      },
    ]);
    const second = (await draftRun(store, ana, { month: MONTH, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW }))
      .run!;
    expect(second.lines.map((l) => [l.reference, l.amount, l.releasedHolds.map((h) => h.decision)])).toEqual([
      ['RS-SM-A-2026-10-EUR-2', '2500', ['pay']],
    ]);
    // new evidence: the decision to pay is taken back; the 25.00 is in doubt again
    await revoke(store, D1, acceptance);
    // a draft made now would leave it out (hold_in_force); the waiting one must not pay it either
    await expect(approveRun(store, iryna, second.id, AT)).rejects.toMatchObject({
      code: 'HOLD_IN_FORCE',
      message: expect.stringContaining('RS-SM-A-2026-10-EUR-2'),
    });
  });

  it('approved, then the release revoked: neither filed nor sent', async () => {
    const D2 = '22222222-2222-4222-8222-222222222222';
    await register(store, 'SM-B', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-09', [
      {
        subMerchantId: 'SM-B',
        currency: 'EUR',
        reference: 'RS-SM-B-2026-09-EUR',
        amountDue: '1000',
        held: '1000',
        payable: '0',
        holds: [[D2, '1000']],
      },
    ]);
    const acceptance = await decide(store, D2, 'pay');
    await issue(store, '2026-09', [
      {
        subMerchantId: 'SM-B',
        currency: 'EUR',
        reference: 'RS-SM-B-2026-09-EUR-2',
        amountDue: '1000',
        held: '0',
        payable: '1000',
        holds: [],
      },
    ]);
    const run = (
      await draftRun(store, ana, { month: '2026-09', bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW })
    ).run!;
    await approveRun(store, iryna, run.id, AT);
    await revoke(store, D2, acceptance);
    await expect(paymentFile(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'HOLD_IN_FORCE' });
    await expect(sendRun(store, ana, run.id, AT)).rejects.toMatchObject({ code: 'HOLD_IN_FORCE' });
  });
});
