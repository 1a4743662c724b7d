import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionStream } from '../../src/events/exception-events';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { importDecisions, sheetProblemText } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The nightly Decisions sheet shows `due_at (Europe/Kyiv)` as the wall-clock time of the business time zone,
 * and a person fills `due` in the same way: Excel turns "2026-12-01 17:00" typed in a cell into a date. The
 * import read such a cell as UTC (exceljs gives its fields as a Date's UTC ones), so the due instant stored was
 * 19:00 in Kyiv, two hours late (three in summer); and a time the zone skips was taken as if it existed.
 */

const ZONE = 'Europe/Kyiv';
let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let psp: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  deps = { sql: db.sql, store, policy: exceptionPolicyOf({}).policy };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** A sheet whose `due` cell holds what Excel keeps for a typed date and time: its wall-clock fields. */
async function sheet(due: Date): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Decisions');
  ws.addRow(['id', 'action', 'assignee', 'due', 'note']);
  ws.addRow([psp, 'assign', 'ivan', due, 'by the end of the day']);
  ws.getCell('D2').numFmt = 'yyyy-mm-dd hh:mm';
  return Buffer.from(await wb.xlsx.writeBuffer());
}

describe('a due date typed into the Decisions sheet', () => {
  it('is read as the time it shows in the business time zone', async () => {
    // 2026-12-01 17:00 as shown in the cell; Kyiv is UTC+2 in December
    const file = await sheet(new Date(Date.UTC(2026, 11, 1, 17, 0)));
    const r = await importDecisions(deps, team.analyst, file, { dryRun: false, timezone: ZONE });
    expect(r.ok, r.ok ? '' : r.problems.map(sheetProblemText).join('\n')).toBe(true);
    const events = await store.readStream(exceptionStream(psp));
    const assigned = events.find((e) => e.type === 'ExceptionAssigned');
    expect(assigned).toBeDefined();
    expect((assigned!.data as { dueAt?: string }).dueAt).toBe('2026-12-01T15:00:00.000Z');
  });

  it('is refused naming the cell when the zone skips that time', async () => {
    const before = (await store.readStream(exceptionStream(psp))).length;
    // Kyiv's clocks go from 03:00 to 04:00 on 2027-03-28: 03:30 is no instant there
    const file = await sheet(new Date(Date.UTC(2027, 2, 28, 3, 30)));
    const r = await importDecisions(deps, team.analyst, file, { dryRun: false, timezone: ZONE });
    expect(r.ok ? [] : r.problems.map(sheetProblemText)).toEqual([
      `Decisions!D2: due: 2027-03-28 03:30 does not exist in ${ZONE} (the clocks skip it)`,
    ]);
    expect((await store.readStream(exceptionStream(psp))).length).toBe(before);
  });
});
