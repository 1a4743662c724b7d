import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionStream } from '../../src/events/exception-events';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { importDecisions, sheetProblemText } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getException } from '../../src/exceptions/queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll } from '../discrepancies/fixtures';
import { order } from '../orders/support';
import { addTeam, idOf, project, seedTwoLegs, type Team } from './support';

/**
 * The offline decisions: a Decisions sheet is imported all or nothing. One bad row (a value, or an action the
 * exception's state refuses) changes nothing and is named by sheet, row and column; a good sheet's dry run
 * lists what the real import then does.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let psp: string;
let unpaid: string;
let orphan: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  orphan = await idOf(db.sql, 'payment_without_order');
  deps = { sql: db.sql, store, policy: exceptionPolicyOf({}).policy };
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

async function sheet(rows: Array<Array<string | null>>): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Decisions');
  ws.addRow(['id', 'action', 'assignee', 'reason code', 'decision', 'note']);
  for (const r of rows) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

const streams = async () =>
  Promise.all([psp, unpaid, orphan].map(async (id) => (await store.readStream(exceptionStream(id))).length));

describe('recon exceptions import', () => {
  it('refuses the whole sheet for one bad row, naming sheet, row and column, and changes nothing', async () => {
    const file = await sheet([
      [psp, 'assign', 'ivan', null, null, 'sweep'],
      [unpaid, 'resolve', null, 'soon', null, 'paid next day'],
      [orphan, 'accept', null, null, null, 'traced'],
      [psp, '', null, null, null, 'no action: passed by'],
    ]);
    const r = await importDecisions(deps, team.analyst, file, { dryRun: false });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map(sheetProblemText)).toEqual([
      'Decisions!D3: reason-code: expected one of explained_elsewhere, duplicate, timing, corrected_at_source, other, got "soon"',
      'Decisions!E4: decision: a payment_without_order holds money on the statements; say pay, withhold or write_off',
    ]);
    expect(await streams()).toEqual([0, 0, 0]);
  });

  it('refuses an unknown action and a missing sheet by place', async () => {
    const bad = await importDecisions(deps, team.analyst, await sheet([[psp, 'burn', null, null, null, 'x']]), {
      dryRun: true,
    });
    expect(bad.ok ? [] : bad.problems.map(sheetProblemText)).toEqual([
      'Decisions!B2: action: expected one of assign, comment, resolve, accept, approve, reject, reopen',
    ]);
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Other');
    const none = await importDecisions(deps, team.analyst, Buffer.from(await wb.xlsx.writeBuffer()), { dryRun: true });
    expect(none.ok ? [] : none.problems.map(sheetProblemText)).toEqual(['Decisions: no sheet named Decisions']);
  });

  it('a good sheet: the dry run lists what the import then does', async () => {
    const file = await sheet([
      [psp, 'assign', 'ivan', null, null, 'sweep'],
      [unpaid, 'resolve', null, 'timing', null, 'paid next day'],
      [orphan, 'accept', null, null, 'withhold', 'traced'],
    ]);
    const dry = await importDecisions(deps, team.analyst, file, { dryRun: true });
    expect(await streams()).toEqual([0, 0, 0]);
    const real = await importDecisions(deps, team.analyst, file, { dryRun: false });
    expect(real).toEqual(dry);
    expect(real.ok && real.changes.map((c) => c.row)).toEqual([2, 3, 4]);
    await project(db.sql, store);
    const states = await Promise.all([psp, unpaid, orphan].map(async (id) => (await getException(db.sql, id))!.state));
    expect(states).toEqual(['assigned', 'resolved_by_hand', 'accepted']);
  });

  it('a hand resolution the sources later contradict shows as reopened, naming why', async () => {
    // the marketplace amends the unpaid order: its discrepancy is updated by a later event, still open
    await appendAll(store, [
      order({
        order_id: 'ord-unpaid',
        amount: '12.00',
        currency: 'UAH',
        created_at: '2024-03-10T08:00:00Z',
        split: '',
        amended_at: '2024-03-15T09:00:00Z',
      }),
    ]);
    await project(db.sql, store);
    const x = (await getException(db.sql, unpaid))!;
    expect(x.discrepancy.values).toMatchObject({ order_amount: '1200' });
    expect(x).toMatchObject({ state: 'reopened', why: 'the sources changed after the hand resolution' });
  });
});
