import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { draftRun } from '../../src/payout-runs/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { BANK, decide, ENV, issue, NONE_PAID, person, register, revoke } from '../payout-runs/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A hold a statement of an earlier month held, released into this month's statement on a decision to pay, the
 * decision revoked since: the money is in doubt again and a run leaves it out (hold_in_force). The run read what
 * was held before from the previous month's last statement run alone; the statement builds on the latest run
 * that covered the sub-merchant (previous.ts previousRunOf), up to three years back. So when the previous
 * month's last run was one for another sub-merchant, or the previous month was never issued, the run saw no
 * hold released, and paid the money whose release was taken back.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => db?.drop());

const ana = person('ana', 'analyst');
const NOW = new Date('2026-11-26T09:00:00.000Z');
const draft = (month: string) => draftRun(store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID, now: NOW });
const row = (sm: string, ref: string, payable: string, holds: [string, string][] = []) => ({
  subMerchantId: sm,
  currency: 'EUR',
  reference: ref,
  amountDue: payable,
  held: holds.reduce((s, [, a]) => s + BigInt(a), 0n).toString(),
  payable,
  holds,
});

async function issueFor(month: string, subMerchantId: string, payouts: ReturnType<typeof row>[], position: string) {
  const e = newEvent(StatementIssued, {
    month,
    timezone: 'Europe/Kyiv',
    subMerchantId,
    position,
    figuresSha256: 'b'.repeat(64),
    statements: payouts.length,
    files: [],
    payouts,
  });
  await store.append(statementStream(month), [e]);
}

describe('money released from an earlier statement, its decision revoked since', () => {
  it('the previous month last issued for another sub-merchant: left out as hold_in_force', async () => {
    const D = '21111111-1111-4111-8111-111111111111';
    await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
    await register(store, 'SM-B', { payoutAccount: 'DE89370400440532013000' });
    await issue(store, '2026-08', [
      row('SM-A', 'RS-SM-A-2026-08-EUR', '100000', [[D, '50000']]),
      row('SM-B', 'RS-SM-B-2026-08-EUR', '100000'),
    ]);
    // August issued again for SM-B alone (a correction of its figures): SM-A's statement still builds on the first
    await issueFor('2026-08', 'SM-B', [row('SM-B', 'RS-SM-B-2026-08-EUR-2', '1000')], '900/900');
    const acceptance = await decide(store, D, 'pay');
    // September releases the 500.00 into SM-A's amount due
    await issue(store, '2026-09', [row('SM-A', 'RS-SM-A-2026-09-EUR', '80000')]);
    await revoke(store, D, acceptance);
    const plan = (await draft('2026-09')).plan;
    expect(plan.lines.map((l) => l.reference)).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.reason])).toEqual([['RS-SM-A-2026-09-EUR', 'hold_in_force']]);
  });

  it('the month between never issued: left out as hold_in_force', async () => {
    const D = '31111111-1111-4111-8111-111111111111';
    await register(store, 'SM-C', { payoutAccount: 'FR1420041010050500013M02606' });
    await issue(store, '2026-05', [row('SM-C', 'RS-SM-C-2026-05-EUR', '100000', [[D, '50000']])]);
    const acceptance = await decide(store, D, 'pay');
    // June never issued; July releases the 500.00
    await issue(store, '2026-07', [row('SM-C', 'RS-SM-C-2026-07-EUR', '80000')]);
    await revoke(store, D, acceptance);
    const plan = (await draft('2026-07')).plan;
    expect(plan.lines.map((l) => l.reference)).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.reason])).toEqual([['RS-SM-C-2026-07-EUR', 'hold_in_force']]);
  });
});
