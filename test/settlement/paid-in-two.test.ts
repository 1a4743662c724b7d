import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ACCOUNT, credit, projectCash, rebuildCash, sale, statement } from './support';

/**
 * A settlement paid in two credits (a transfer the bank or the PSP split): the day's 99,100 arrives as 60,000
 * and, a day later, 39,097 (3 short: under the tolerance of 5, a bank charge). Before, the first read as a short
 * payment and the second as unexpected money; now the day is paid in full by the two, late by the second's
 * day, and the journal clears the PSP's receivable whole, the 3 booked as a bank fee. While only the first has
 * arrived, the day is short, as it is.
 */

let db: TestDatabase;
let store: EventStore;

async function appendEach(requests: readonly AppendRequest[]) {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

const settlementRows = async () => ({
  expected: await db.sql<{ due_on: string; status: string; received_on: string | null }[]>`
    select due_on, status, received_on from recon.settlements_expected order by due_on`,
  open: await db.sql<{ type: string }[]>`
    select type from recon.settlement_discrepancies where status = 'open' order by type`,
});

const balances = async () => {
  const lines = await db.sql<{ account: string; balance: string }[]>`
    select account, sum(amount)::text as balance from recon.journal_lines
    where account in ('bank_fees', 'psp_clearing', 'psp_fees') or account like 'bank:%' group by account`;
  return Object.fromEntries(lines.map((l) => [l.account, BigInt(l.balance)]));
};

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // activity Fri 01-02, due Tue 01-06 (Mon 01-05 a holiday): 100,000 less a fee of 900
  await appendEach([sale('p1', '2026-01-02', 100_000n, 900n)]);
  await projectCash(db.sql, store);
});
afterAll(async () => db?.drop());

describe('a settlement paid in two credits', () => {
  it('with the first alone, the day is short', async () => {
    await appendEach([
      credit('B1', '2026-01-06', 60_000n),
      statement('S1', '2026-01-01', '2026-01-06', 0n, 60_000n, 1),
    ]);
    await projectCash(db.sql, store);
    const { expected, open } = await settlementRows();
    expect(expected).toEqual([{ due_on: '2026-01-06', status: 'short', received_on: '2026-01-06' }]);
    expect(open.map((d) => d.type)).toEqual(['settlement_short']);
  });

  it('with the rest, the day is paid in full (late by the second), neither short nor unexpected', async () => {
    await appendEach([
      credit('B2', '2026-01-07', 39_097n),
      statement('S2', '2026-01-07', '2026-01-08', 60_000n, 99_097n, 1),
    ]);
    await projectCash(db.sql, store);
    const { expected, open } = await settlementRows();
    expect(expected).toEqual([{ due_on: '2026-01-06', status: 'paid_late', received_on: '2026-01-07' }]);
    expect(open.map((d) => d.type)).toEqual(['settlement_late']);
    const matches = await db.sql<{ received: string; expected: string; bank_fee: string; shortfall: string }[]>`
      select received::text, expected::text, bank_fee::text, shortfall::text from recon.settlement_matches order by booked_on`;
    expect(matches).toEqual([
      { received: '60000', expected: '60000', bank_fee: '0', shortfall: '0' },
      { received: '39097', expected: '39100', bank_fee: '3', shortfall: '0' },
    ]);
  });

  it('the journal clears the receivable whole: both credits in the bank, the 3 a bank fee, the fee booked once', async () => {
    const b = await balances();
    expect(b[`bank:${ACCOUNT}`]).toBe(99_097n);
    expect(b['bank_fees']).toBe(3n);
    expect(b['psp_clearing']! + b['psp_fees']!).toBe(0n);
    const [sum] = await db.sql<{ total: string }[]>`select sum(amount)::text as total from recon.journal_lines`;
    expect(sum!.total).toBe('0');
  });

  it('a rebuild in batches of 1 gives the same rows', async () => {
    const before = { ...(await settlementRows()), balances: await balances() };
    await rebuildCash(db.sql, store, 1);
    expect({ ...(await settlementRows()), balances: await balances() }).toEqual(before);
  });
});
