import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/connect';
import { trialBalance } from '../../src/ledger/balances';
import { statementFigures } from '../../src/ledger/ledger-queries';
import { silentLogger } from '../../src/log';
import { rebuildProjection, type RunnerDeps } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { registerRows } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, bank, booked, issued, PAYOUTS_ACCOUNT, payee, payouts, TZ } from './support';
import { catchUp } from '../support/projection-spec';

/**
 * The journal books what the payout matching pays: payable → bank:<payouts account>, reversed on a return and
 * when a later bank line changes the match. Shop One sells 50,000 (fee 500) in January; its February statement
 * asks for 49,500 under RS-SM-A-2026-01-EUR.
 */

const REF = 'RS-SM-A-2026-01-EUR';
const deps = (sql: Sql, store: EventStore): RunnerDeps => ({
  sql,
  store,
  log: silentLogger,
  timezone: TZ,
  graceHours: 48,
  bank,
  projections: [journal, payouts],
});

async function project(sql: Sql, store: EventStore, batchSize = 1000) {
  await catchUp(deps(sql, store), { batchSize });
}

const balanceOf = async (sql: Sql) => {
  const rows = await sql<{ balance: string }[]>`
    select coalesce(sum(amount), 0)::text as balance from recon.settlement_ledger where sub_merchant_id = 'SM-A'`;
  return BigInt(rows[0]!.balance);
};
const bankBalance = async (sql: Sql) => {
  const rows = await sql<{ b: string }[]>`
    select coalesce(sum(amount), 0)::text as b from recon.journal_lines where account = ${`bank:${PAYOUTS_ACCOUNT}`}`;
  return BigInt(rows[0]!.b);
};
async function balances(sql: Sql) {
  const tb = await trialBalance(sql);
  const byCurrency = new Map<string, bigint>();
  for (const r of tb) byCurrency.set(r.currency, (byCurrency.get(r.currency) ?? 0n) + BigInt(r.balance));
  return byCurrency;
}
async function snapshot(sql: Sql) {
  return {
    entries: await sql`select * from recon.journal_entries order by entry_id`,
    lines: await sql`select * from recon.journal_lines order by entry_id, line_no`,
  };
}

describe('the journal books payouts', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await appendAll(store, [
      payee('SM-A', 'Shop One', 'DE02100100109307118603'),
      registerRows({
        paymentId: 'p1',
        dateTime: '2026-01-10T12:00:00.000Z',
        amount: 50_000n,
        currency: 'EUR',
        receivers: [{ name: 'Shop One', amount: 49_500n, fee: 500n }],
        reportId: 'report-1',
        observedAt: '2026-01-10T23:00:00.000Z',
      }),
      issued('2026-01', '2026-02-02T08:00:00.000Z', [{ subMerchantId: 'SM-A', reference: REF, payable: 49_500n }]),
    ]);
    await project(db.sql, store, 2);
  });
  afterAll(async () => db?.drop());

  it('a matched debit brings the settlement ledger down by the payout; the trial balance still balances', async () => {
    const before = await balanceOf(db.sql);
    expect(before).toBe(49_500n);
    await appendAll(store, [booked({ amount: 49_500n, bookingDate: '2026-02-04', remittance: REF, bankRef: 'D1' })]);
    await project(db.sql, store);
    expect(await balanceOf(db.sql)).toBe(0n);
    expect(await bankBalance(db.sql)).toBe(-49_500n);
    const payout = await db.sql<{ kind: string; status: string; booked_on: string; net: string }[]>`
      select kind, status, to_char(booked_on, 'YYYY-MM-DD') as booked_on, net::text from recon.journal_entries
      where row_key like 'payout:%'`;
    expect(payout).toEqual([{ kind: 'payout', status: 'paid', booked_on: '2026-02-04', net: '-49500' }]);
    for (const total of (await balances(db.sql)).values()) expect(total).toBe(0n);
  });

  it('an earlier debit for the same statement takes the match: the later one is booked again as a duplicate', async () => {
    await appendAll(store, [booked({ amount: 49_500n, bookingDate: '2026-02-03', remittance: REF, bankRef: 'D0' })]);
    await project(db.sql, store);
    const rows = await db.sql<{ kind: string; status: string; payment_id: string }[]>`
      select kind, status, payment_id, reverses is not null as reverses from recon.journal_entries
      where row_key like 'payout:%' order by commit_pos, kind, status`;
    const [d1] = rows.filter((r) => r.kind === 'payout' && r.status === 'paid');
    expect(rows.map((r) => [r.kind, r.status, r.payment_id === d1!.payment_id])).toEqual([
      ['payout', 'paid', true],
      ['payout', 'duplicate', true],
      ['payout', 'paid', false],
      ['reversal', 'paid', true],
    ]);
    // paid twice: the marketplace is owed 49,500 back
    expect(await balanceOf(db.sql)).toBe(-49_500n);
    expect(await bankBalance(db.sql)).toBe(-99_000n);
  });

  it('a return gives the money back to the payable and the bank', async () => {
    await appendAll(store, [
      booked({
        amount: 49_500n,
        bookingDate: '2026-02-06',
        direction: 'credit',
        isReturn: true,
        remittance: `RETURN ${REF}`,
        bankRef: 'R1',
      }),
    ]);
    await project(db.sql, store);
    expect(await balanceOf(db.sql)).toBe(0n);
    expect(await bankBalance(db.sql)).toBe(-49_500n);
    for (const total of (await balances(db.sql)).values()) expect(total).toBe(0n);
  });

  it('statements keep reading the payout from the bank: the month figures leave the payout lines out', async () => {
    // the payout lines are dated in February: March would open at 0 if the figures counted them
    const [march] = await statementFigures(db.sql, { month: '2026-03', timezone: TZ, subMerchantId: 'SM-A' });
    expect(march!.opening).toBe(49_500n);
  });

  it('a rebuild in batches of 1 gives exactly the live journal (replay equals live)', async () => {
    const live = await snapshot(db.sql);
    await rebuildProjection(deps(db.sql, store), 'journal', { batchSize: 1 });
    await project(db.sql, store, 1);
    expect(await snapshot(db.sql)).toEqual(live);
  });
});
