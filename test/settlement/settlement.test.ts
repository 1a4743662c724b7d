import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cashSheetData } from '../../src/export/nightly/cash-sheet';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { reportPeriods, writeNightlyReport } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ACCOUNT, BANK, credit, projectCash, rebuildCash, sale, statement } from './support';

/**
 * The cash leg end to end through both projections. The week (UTC, lag 1 business day, 2026-01-05 a
 * holiday, tolerance 5 EUR cents, late up to 2 business days):
 *   activity Fri 01-02 → due Tue 01-06 (Mon a holiday): 99,100   | paid with 01-07's in one credit on 01-07, less 3 (bank fee), 01-06 late
 *   activity Tue 01-06 → due Wed 01-07:                 49,500   |
 *   activity Wed 01-07 → due Thu 01-08:                 19,800   | 15,000 arrives: short by 4,800
 *   activity Thu 01-08 → due Fri 01-09:                 29,700   | never paid: missing (deadline 01-13, statement to 01-14)
 *   activity Fri 01-09 → due Mon 01-12:                 39,600   | paid 01-13: late by 1 business day
 *   activity Mon 01-12 → due Tue 01-13:                  9,900   | not paid yet, deadline 01-15: in transit
 *   a credit of 777 on 01-12 pays nothing: unexpected
 */
const sales = [
  sale('p1', '2026-01-02', 100_000n, 900n),
  sale('p2', '2026-01-06', 50_000n, 500n),
  sale('p3', '2026-01-07', 20_000n, 200n),
  sale('p4', '2026-01-08', 30_000n, 300n),
  sale('p5', '2026-01-09', 40_000n, 400n),
  sale('p6', '2026-01-12', 10_000n, 100n),
];
const credits = [
  credit('B1', '2026-01-07', 148_597n),
  credit('B2', '2026-01-08', 15_000n),
  credit('B3', '2026-01-12', 777n),
  credit('B4', '2026-01-13', 39_600n),
];
const received = 148_597n + 15_000n + 777n + 39_600n;
const closing = 1_000n + received;
const stmt = statement('S-2026-01', '2026-01-01', '2026-01-14', 1_000n, closing, credits.length);

async function appendEach(store: EventStore, requests: readonly AppendRequest[]) {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

async function snapshot(db: TestDatabase) {
  const expected = await db.sql`select * from recon.settlements_expected order by currency, due_on`;
  const matches = await db.sql`select * from recon.settlement_matches order by credit_event_id`;
  const all = await db.sql`select * from recon.settlement_discrepancies order by id`;
  const open = all.filter((d) => d['status'] === 'open');
  const lines = await db.sql`select account, sum(amount)::text as balance from recon.journal_lines
    where account in ('bank_fees', 'psp_clearing', 'psp_fees') or account like 'bank:%' group by account order by account`;
  return { expected, matches, all, open, lines };
}

describe('the cash leg', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    // live: the projections follow the store as each day's sync and the bank statement arrive
    for (const s of sales) {
      await appendEach(store, [s]);
      await projectCash(db.sql, store, 3);
    }
    await appendEach(store, [...credits, stmt]);
    await projectCash(db.sql, store, 2);
  });
  afterAll(async () => db?.drop());

  it('matches N:1 within tolerance and finds each discrepancy type', async () => {
    const expected = await db.sql<{ due_on: string; amount: bigint; status: string }[]>`
      select due_on, amount, status from recon.settlements_expected order by due_on`;
    expect(expected.map((e) => [e.due_on, Number(e.amount), e.status])).toEqual([
      ['2026-01-06', 99_100, 'paid_late'],
      ['2026-01-07', 49_500, 'paid'],
      ['2026-01-08', 19_800, 'short'],
      ['2026-01-09', 29_700, 'missing'],
      ['2026-01-12', 39_600, 'paid_late'],
      ['2026-01-13', 9_900, 'in_transit'],
    ]);
    const disc = await db.sql<{ type: string; operation_key: string; values: Record<string, unknown> }[]>`
      select type, operation_key, "values" from recon.settlement_discrepancies where status = 'open' order by type, operation_key`;
    expect(disc.map((d) => [d.type, d.values['due_on'] ?? d.values['amount']])).toEqual([
      ['settlement_late', '2026-01-06'],
      ['settlement_late', '2026-01-12'],
      ['settlement_missing', '2026-01-09'],
      ['settlement_short', ['2026-01-08']],
      ['settlement_unexpected', '777'],
    ]);
    const short = disc.find((d) => d.type === 'settlement_short')!;
    expect(short.values).toMatchObject({ expected: '19800', received: '15000', shortfall: '4800' });
  });

  it('books the tolerance as a bank fee and clears psp_clearing into the bank', async () => {
    const { lines } = await snapshot(db);
    const balance = Object.fromEntries(lines.map((l) => [l['account'], BigInt(l['balance'] as string)]));
    expect(balance['bank_fees']).toBe(3n);
    // the unexpected 777 is not booked: it pays nothing the journal knows
    expect(balance[`bank:${ACCOUNT}`]).toBe(148_597n + 15_000n + 39_600n);
    // left on psp_clearing net of fees: the missing day, the day in transit and the shortfall
    expect(balance['psp_clearing']! + balance['psp_fees']!).toBe(29_700n + 9_900n + 4_800n);
    const [sum] = await db.sql<{ total: string }[]>`select sum(amount)::text as total from recon.journal_lines`;
    expect(sum!.total).toBe('0');
  });

  it('the views of settlement discrepancies have the columns of recon.discrepancies', async () => {
    const cols = (view: string) => db.sql<{ column_name: string; data_type: string }[]>`
      select column_name, data_type from information_schema.columns where table_schema = 'recon' and table_name = ${view}
      order by ordinal_position`;
    const [a, b] = await Promise.all([cols('settlement_discrepancies'), cols('discrepancies')]);
    expect(a.length).toBeGreaterThan(0);
    // recon.discrepancies exists once the reconciliation projection has run; compare when it has
    if (b.length) expect(a).toEqual(b);
  });

  it('the Cash sheet: expected against received, the unmatched bank line, and a bridge that holds', async () => {
    const cash = (await cashSheetData(db.sql, { date: '2026-01-14' }))!;
    expect(cash.days.map((d) => [d.dueOn, d.status, d.received, d.difference])).toEqual([
      ['2026-01-06', 'paid_late', 148_597n, 2n + 1n],
      ['2026-01-07', 'paid', null, null],
      ['2026-01-08', 'short', 15_000n, 4_800n],
      ['2026-01-09', 'missing', null, null],
      ['2026-01-12', 'paid_late', 39_600n, 0n],
      ['2026-01-13', 'in_transit', null, null],
    ]);
    expect(cash.unmatched.map((u) => [u.bankRef, u.amount])).toEqual([['B3', 777n]]);
    expect(cash.bridges).toEqual([
      {
        accountId: ACCOUNT,
        currency: 'EUR',
        firstStatementOpening: 1_000n,
        bookedInJournal: 148_597n + 15_000n + 39_600n,
        notInJournal: 777n,
        closingDate: '2026-01-14',
        bankClosing: closing,
        difference: 0n,
      },
    ]);
    expect(cash.outstanding).toEqual([{ currency: 'EUR', amount: 29_700n + 9_900n + 4_800n }]);

    const dir = mkdtempSync(path.join(tmpdir(), 'recon-cash-'));
    try {
      const file = path.join(dir, 'nightly.xlsx');
      const periods = reportPeriods('2026-01-14', 'UTC', 48);
      await writeNightlyReport(file, {
        date: '2026-01-14',
        timezone: 'UTC',
        ...periods,
        sources: [],
        matching: [],
        discrepancies: [],
        open: [],
        windows: [],
        facts: [],
        cash,
      });
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(file);
      const sheet = wb.getWorksheet('Cash')!;
      expect(sheet.getRow(2).getCell(5).value).toBe(991);
      expect(sheet.getRow(2).getCell(6).value).toBe('received late');
      const texts = sheet
        .getSheetValues()
        .flat()
        .filter((x) => typeof x === 'string');
      expect(texts).toContain('Bank bridge per account');
      expect(texts).toContain(ACCOUNT);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a rebuild in batches of 1 gives exactly the live read models (replay equals live)', async () => {
    const live = await snapshot(db);
    await rebuildCash(db.sql, store, 1);
    expect(await snapshot(db)).toEqual(live);
  });

  it('the order events are imported in changes no match and no open discrepancy', async () => {
    const other = await createTestDatabase();
    try {
      const s2 = createPostgresEventStore(other.sql);
      // the bank first, then the register, newest day first
      await appendEach(s2, [stmt, ...[...credits].reverse()]);
      await projectCash(other.sql, s2, 1);
      await appendEach(s2, [...sales].reverse());
      await projectCash(other.sql, s2, 1);
      const a = await snapshot(db);
      const b = await snapshot(other);
      expect(b.expected).toEqual(a.expected);
      expect(b.matches).toEqual(a.matches);
      expect(b.lines).toEqual(a.lines);
      // the bank came first here: its credits were unexpected until the register arrived, then resolved
      expect(b.all.length).toBeGreaterThan(a.all.length);
      expect(b.open.map((d) => [d['id'], d['values']])).toEqual(a.open.map((d) => [d['id'], d['values']]));
    } finally {
      await other.drop();
    }
  });
  it('an accepted settlement discrepancy stays accepted, with who and why, and keeps its values', async () => {
    const [short] = await db.sql<{ id: string; values: unknown }[]>`
      select id::text, "values" from recon.settlement_discrepancies where type = 'settlement_short'`;
    const r = await acceptDiscrepancy(
      { sql: db.sql, store },
      {
        id: short!.id,
        note: 'the PSP confirmed the rest on the next run',
        by: 'Finance',
        at: new Date('2026-01-20T10:00:00Z'),
      },
    );
    expect(r.ok).toBe(true);
    // a later append that touches the currency judges it again: the acceptance holds
    await appendEach(store, [sale('p7', '2026-01-14', 1_000n, 10n)]);
    await projectCash(db.sql, store);
    const [after] = await db.sql<{ status: string; accepted_by: string; accepted_note: string; values: unknown }[]>`
      select status, accepted_by, accepted_note, "values" from recon.settlement_discrepancies where id = ${short!.id}`;
    expect(after).toEqual({
      status: 'accepted',
      accepted_by: 'Finance',
      accepted_note: 'the PSP confirmed the rest on the next run',
      values: short!.values,
    });
    const live = await snapshot(db);
    await rebuildCash(db.sql, store, 1);
    expect(await snapshot(db)).toEqual(live);
    const [rebuilt] = await db.sql<{ status: string }[]>`
      select status from recon.settlement_discrepancies where id = ${short!.id}`;
    expect(rebuilt!.status).toBe('accepted');
  });
});

describe('bank settings belong to a build', () => {
  it('a changed tolerance replaces the journal and settlement builds, whose figures follow it', async () => {
    const db = await createTestDatabase();
    try {
      const store = createPostgresEventStore(db.sql);
      await appendEach(store, [sales[0]!, sales[1]!, credits[0]!, stmt]);
      await projectCash(db.sql, store);
      const fees = async () => {
        const [r] = await db.sql<{ total: string }[]>`
          select coalesce(sum(amount), 0)::text as total from recon.journal_lines where account = 'bank_fees'`;
        return BigInt(r!.total);
      };
      expect(await fees()).toBe(3n);
      const strict = { ...BANK, settlement: { ...BANK.settlement, tolerance: { EUR: 0n } } };
      await projectCash(db.sql, store, 1000, strict);
      expect(await fees()).toBe(0n);
      const open = await db.sql<{ type: string }[]>`
        select type from recon.settlement_discrepancies where status = 'open' order by type`;
      expect(open.map((o) => o.type)).toContain('settlement_unexpected');
      const live = await db.sql<{ name: string; bank_settings: string }[]>`
        select name, bank_settings from projection_builds where status = 'live' order by name`;
      expect(live.map((b) => [b.name, JSON.parse(b.bank_settings).settlement.tolerance])).toEqual([
        ['journal', { EUR: '0' }],
        ['settlement', { EUR: '0' }],
      ]);
    } finally {
      await db.drop();
    }
  });
});
