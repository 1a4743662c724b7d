import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema, type BankConfig } from '../../src/config/bank';
import type { Sql } from '../../src/db/connect';
import { settlementCredit, statementImported } from '../../fixtures/bank-events';
import { silentLogger } from '../../src/log';
import type { Tx } from '../../src/projector/projection';
import { rebuildProjection, type RunnerDeps } from '../../src/projector/runner';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import {
  appendsOf,
  applyCashAppend,
  cashStateTables,
  judgeCurrency,
  newCashMemory,
} from '../../src/reconciliation/settlement/state';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { projection as settlement } from '../../projections/settlement';
import { catchUp } from '../support/projection-spec';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { sale } from './support';

/**
 * The cash leg judges each currency after every append from state read once per batch and then kept in
 * memory (src/reconciliation/settlement/state.ts `CashMemory`, the discrepancies' and the journal bookings'
 * memories beside it). What that relies on: the memory moved append by append equals the tables read afresh,
 * so the read models are the same whatever the batches. Shown here on three currencies over three weeks of
 * settlement days, with corrections, credits paying several days, short, late, missing and unexpected ones,
 * statements, and an acceptance taken back: live (small batches, after each append), then rebuilt from zero
 * in batches of 1 and of 1000.
 */

const CURRENCIES = ['EUR', 'UAH', 'USD'] as const;
const ACCOUNTS: Record<string, string> = {
  EUR: 'DE89370400440532013000',
  UAH: 'DE89370400440532013001',
  USD: 'DE89370400440532013002',
};
const BANK3: BankConfig = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: CURRENCIES.map((c) => ({ id: ACCOUNTS[c], currency: c, role: 'settlement', name: `Settlement ${c}` })),
    settlement: {
      lagBusinessDays: 1,
      holidays: ['2026-01-19'],
      tolerance: { EUR: '5', UAH: '20', USD: '5' },
      lateBusinessDays: 2,
    },
  }),
);

const deps = (sql: Sql, store: EventStore): RunnerDeps => ({
  sql,
  store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  bank: BANK3,
  projections: [journal, settlement],
});

function bankCredit(currency: string, ref: string, day: string, amount: bigint): AppendRequest {
  const statementId = `stmt-${currency}-${day}`;
  return settlementCredit({ accountId: ACCOUNTS[currency]!, currency, bankRef: ref, day, amount, statementId });
}

function bankStatement(currency: string, from: string, to: string): AppendRequest {
  return statementImported({ accountId: ACCOUNTS[currency]!, currency, statementId: `S-${currency}-${to}`, from, to });
}

/** Business days of January 2026 from the 5th (weekends and the 19th, a holiday, left out). */
const DAYS = Array.from({ length: 24 }, (_, i) => `2026-01-${String(i + 5).padStart(2, '0')}`).filter((d) => {
  const w = new Date(`${d}T00:00:00Z`).getUTCDay();
  return w !== 0 && w !== 6 && d !== '2026-01-19';
});

/** Each currency's sales of day k (amount, fee): the PSP owes their net on the next business day. */
function salesOf(c: string, k: number): Array<[string, bigint, bigint]> {
  const base = BigInt(1_000 * (CURRENCIES.indexOf(c as (typeof CURRENCIES)[number]) + 1));
  return [0, 1, 2]
    .slice(0, 1 + ((k + c.length) % 3))
    .map((i) => [`${c}-${k}-${i}`, base * BigInt(10 + k + i), BigInt(k + i + 1)]);
}
const netOf = (c: string, k: number) => salesOf(c, k).reduce((s, [, a, f]) => s + a - f, 0n);

/**
 * The appends, day by day: each currency's sales as one append, then the credits for earlier days (EUR
 * pays each day on time less a bank charge within tolerance, UAH pays two days at once, USD varies: short,
 * late, missing, unexpected), a correction of an earlier sale, and a statement every few days.
 */
function scenario(): AppendRequest[][] {
  const out: AppendRequest[][] = [];
  for (let k = 0; k < DAYS.length; k++) {
    const day = DAYS[k]!;
    for (const c of CURRENCIES) out.push(salesOf(c, k).map(([id, a, f]) => sale(id, day, a, f, c)));
    if (k >= 1) out.push([bankCredit('EUR', `E${k}`, day, netOf('EUR', k - 1) - 3n)]);
    if (k >= 2 && k % 2 === 0) out.push([bankCredit('UAH', `H${k}`, day, netOf('UAH', k - 2) + netOf('UAH', k - 1))]);
    if (k >= 1 && k % 5 === 1) out.push([bankCredit('USD', `U${k}`, day, netOf('USD', k - 1))]);
    if (k >= 2 && k % 5 === 2) out.push([bankCredit('USD', `U${k}`, day, (netOf('USD', k - 1) * 3n) / 4n)]);
    if (k >= 3 && k % 5 === 3) out.push([bankCredit('USD', `U${k}`, day, netOf('USD', k - 3))]);
    if (k % 4 === 3) out.push([bankCredit('USD', `X${k}`, day, 777n)]);
    // a later observation of an earlier sale: the register's correction moves a day already paid
    if (k >= 4 && k % 3 === 1) out.push([sale(`EUR-${k - 3}-0`, DAYS[k - 3]!, 5_000n, 50n, 'EUR')]);
    if (k % 3 === 2) for (const c of CURRENCIES) out.push([bankStatement(c, DAYS[Math.max(0, k - 3)]!, day)]);
  }
  return out;
}

/** Every row of the cash leg's views and of the journal, as text, in one order. */
async function dump(sql: Sql): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const v of [
    'settlements_expected',
    'settlement_matches',
    'settlement_bank_lines',
    'settlement_statements',
    'settlement_discrepancies',
    'journal_lines',
  ]) {
    const rows = await sql<{ t: string }[]>`select t::text as t from ${sql('recon')}.${sql(v)} t order by 1`;
    out[v] = rows.map((r) => r.t);
  }
  return out;
}

describe('the cash leg judged from memory within a batch', () => {
  let db: TestDatabase;
  let store: EventStore;
  let live: Record<string, string[]>;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    const appends = scenario();
    const half = Math.floor(appends.length / 2);
    let decided = '';
    for (const [i, a] of appends.entries()) {
      await store.appendMany(a);
      await catchUp(deps(db.sql, store), { batchSize: 2 });
      // an auditor accepts an unexpected credit, then takes it back a few appends later
      if (i === half) {
        const [x] = await db.sql<{ id: string }[]>`select id::text from recon.settlement_discrepancies
          where type = 'settlement_unexpected' and status = 'open' order by id limit 1`;
        decided = x!.id;
        const at = new Date('2026-01-20T10:00:00Z');
        const r = await acceptDiscrepancy(
          { sql: db.sql, store },
          { id: decided, note: 'explained', by: 'Finance', at },
        );
        expect(r.ok).toBe(true);
      } else if (i === half + 6) {
        const at = new Date('2026-01-22T10:00:00Z');
        const r = await revokeDecision(store, { id: decided, reason: 'taken back', by: 'Finance', at });
        expect(r.ok).toBe(true);
      } else continue;
      await catchUp(deps(db.sql, store), { batchSize: 2 });
    }
    live = await dump(db.sql);
  }, 240_000);
  afterAll(async () => db?.drop());

  it('the scenario holds every kind of settlement, in every currency', () => {
    const statuses = new Set(live.settlements_expected!.map((r) => r.split(',')[8]));
    for (const s of ['paid', 'paid_late', 'short', 'missing', 'in_transit']) expect(statuses).toContain(s);
    const currencies = new Set(live.settlement_matches!.map((r) => r.split(',')[2]));
    expect([...currencies].sort()).toEqual([...CURRENCIES]);
    const types = live.settlement_discrepancies!.join('\n');
    for (const t of ['settlement_short', 'settlement_late', 'settlement_missing', 'settlement_unexpected'])
      expect(types).toContain(t);
    // the correction of a day already paid reversed a booking of the journal
    expect(live.journal_lines!.length).toBeGreaterThan(100);
  });

  it('a rebuild in batches of 1 and in batches of 1000 gives exactly the live rows', async () => {
    for (const batchSize of [1, 1000]) {
      for (const name of ['settlement', 'journal']) await rebuildProjection(deps(db.sql, store), name, { batchSize });
      await catchUp(deps(db.sql, store), { batchSize });
      const rebuilt = await dump(db.sql);
      for (const v of Object.keys(live)) expect(rebuilt[v], `${v}, batches of ${batchSize}`).toEqual(live[v]);
    }
  }, 240_000);

  it('after each append, the judgement from memory equals the one read from the tables', async () => {
    const events = await store.readAll();
    const ctx = { schema: 'cash_memory_check', timezone: 'UTC', graceHours: 48, bank: BANK3 };
    let compared = 0;
    await db.sql
      .begin(async (t) => {
        const tx = t as unknown as Tx;
        await tx.unsafe(`create schema cash_memory_check; ${cashStateTables('cash_memory_check')}`);
        const memory = newCashMemory();
        for (const append of appendsOf(events)) {
          const touched = await applyCashAppend(tx, ctx.schema, append, ctx, memory);
          for (const c of touched) await judgeCurrency(tx, ctx.schema, c, ctx, memory);
          for (const c of memory.cash.keys()) {
            const fromTables = await judgeCurrency(tx, ctx.schema, c, ctx, newCashMemory());
            expect(await judgeCurrency(tx, ctx.schema, c, ctx, memory)).toEqual(fromTables);
            compared++;
          }
        }
        throw new Error('rollback');
      })
      .catch((e: Error) => {
        if (e.message !== 'rollback') throw e;
      });
    expect(compared).toBeGreaterThan(100);
  }, 120_000);
});
