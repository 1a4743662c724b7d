import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cashSheetData } from '../../src/export/nightly/cash-sheet';
import { reportPeriods, writeNightlyReport } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ACCOUNT, credit, projectCash, sale, statement } from '../settlement/support';

/**
 * The nightly Cash sheet tells what the PSP still owes and how each account stood on the report's day.
 * The week (UTC, lag 1 business day, tolerance 5 cents):
 *   activity Tue 01-06 → due Wed 01-07: 49,500 | 40,000 arrives on 01-07: short by 9,500
 *   activity Wed 01-07 → due Thu 01-08: 19,800 | paid in full on 01-08
 * Nothing is missing and nothing in transit: the shortfall alone is owed. Two statements: 01-01…01-07 and
 * 01-08…01-09.
 */
describe('the Cash sheet as at a day', () => {
  let db: TestDatabase;
  let store: EventStore;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    dir = mkdtempSync(path.join(tmpdir(), 'recon-report-cash-'));
    const requests = [
      sale('p1', '2026-01-06', 50_000n, 500n),
      sale('p2', '2026-01-07', 20_000n, 200n),
      credit('B1', '2026-01-07', 40_000n, 'S1'),
      statement('S1', '2026-01-01', '2026-01-07', 1_000n, 41_000n, 1),
      credit('B2', '2026-01-08', 19_800n, 'S2'),
      statement('S2', '2026-01-08', '2026-01-09', 41_000n, 60_800n, 1),
    ];
    for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
    await projectCash(db.sql, store);
  });
  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a short settlement is owed by the PSP, in the data and on the sheet (it read 0.00: a NULL in the sum)', async () => {
    const cash = (await cashSheetData(db.sql, { date: '2026-01-09', timezone: 'UTC' }))!;
    expect(cash.days.map((d) => [d.dueOn, d.status])).toEqual([
      ['2026-01-07', 'short'],
      ['2026-01-08', 'paid'],
    ]);
    expect(cash.outstanding).toEqual([{ currency: 'EUR', amount: 9_500n }]);

    const file = path.join(dir, 'nightly-2026-01-09.xlsx');
    await writeNightlyReport(file, {
      date: '2026-01-09',
      timezone: 'UTC',
      ...reportPeriods('2026-01-09', 'UTC', 48),
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
    let owed: unknown;
    sheet.eachRow((row) => {
      if (row.getCell(1).value === 'Owed by the PSP, not received (EUR)') owed = row.getCell(5).value;
    });
    expect(owed).toBe(95);
  });

  it("a bank bridge as at a day uses that day's statement, journal and bank lines", async () => {
    const atFirst = (await cashSheetData(db.sql, { date: '2026-01-07', timezone: 'UTC' }))!;
    expect(atFirst.bridges).toEqual([
      {
        accountId: ACCOUNT,
        currency: 'EUR',
        firstStatementOpening: 1_000n,
        bookedInJournal: 40_000n,
        notInJournal: 0n,
        closingDate: '2026-01-07',
        bankClosing: 41_000n,
        difference: 0n,
      },
    ]);
    // nothing due after the day is owed yet on it: 01-08's settlement is not counted on 01-07
    expect(atFirst.outstanding).toEqual([{ currency: 'EUR', amount: 9_500n }]);
    const atEnd = (await cashSheetData(db.sql, { date: '2026-01-09', timezone: 'UTC' }))!;
    expect(atEnd.bridges.map((b) => [b.closingDate, b.bankClosing, b.bookedInJournal, b.difference])).toEqual([
      ['2026-01-09', 60_800n, 40_000n + 19_800n, 0n],
    ]);
    // before any statement closed: no bridge yet
    expect((await cashSheetData(db.sql, { date: '2026-01-06', timezone: 'UTC' }))!.bridges).toEqual([]);
  });
});
