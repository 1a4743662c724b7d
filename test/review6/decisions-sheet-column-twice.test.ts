import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { importDecisions, sheetProblemText } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 6: a Decisions sheet whose header names a column twice (a `decision` column copied to the end of the
 * sheet, `pay` in E and `write_off` in G) was read from the last of them, the other silently passed by: the
 * money's fate was whichever column came last. Refused now, naming both columns; nothing written.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let psp = ''; // amount_mismatch: holds money

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

async function sheet(header: string[], rows: Array<Array<string | null>>): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Decisions');
  ws.addRow(header);
  for (const r of rows) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

const written = async () =>
  (await store.readStream(exceptionStream(psp))).length + (await store.readStream(discrepancyStream(psp))).length;

describe('review6: a Decisions sheet naming a column twice', () => {
  it('is refused naming both columns, nothing written', async () => {
    const file = await sheet(
      ['id', 'action', 'assignee', 'reason code', 'decision', 'note', 'Decision'],
      [[psp, 'accept', null, null, 'pay', 'traced', 'write_off']],
    );
    const r = await importDecisions(deps, team.approver, file, { dryRun: false });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map(sheetProblemText)).toEqual([
      'Decisions!G1: column decision again (first in E); name it once',
    ]);
    expect(await written()).toBe(0);
  });

  it('the same sheet with the column once is imported', async () => {
    const file = await sheet(
      ['id', 'action', 'assignee', 'reason code', 'decision', 'note'],
      [[psp, 'accept', null, null, 'withhold', 'traced']],
    );
    const r = await importDecisions(deps, team.approver, file, { dryRun: false });
    expect(r.ok).toBe(true);
    expect(await written()).toBeGreaterThan(0);
  });
});
