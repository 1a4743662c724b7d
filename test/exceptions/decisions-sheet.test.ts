import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_COLUMNS, DECISION_INFO_COLUMNS, DECISION_SEEN_COLUMNS } from '../../src/exceptions/decisions-layout';
import { importDecisions } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { exceptionHistory, getException, listExceptions } from '../../src/exceptions/queries';
import { writeNightlyReportFor } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from './support';

/**
 * The nightly workbook's Decisions sheet, filled in and imported back: the sheet lists every exception with
 * work left (one row each, its description beside the columns to fill in, drop-downs on the lists), and the
 * same file, once a person has filled in some rows, imports as those rows say and nothing else.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
const policy = exceptionPolicyOf({}).policy;
const out = mkdtempSync(path.join(tmpdir(), 'recon-decisions-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const text = (v: ExcelJS.CellValue) => (v === null || v === undefined ? '' : String(v));

describe('the Decisions sheet of the nightly workbook', () => {
  it('lists every exception with work left and imports back what a person filled in', async () => {
    const { file } = await writeNightlyReportFor(
      { sql: db.sql, store },
      { date: '2026-09-30', timezone: 'Europe/Kyiv', graceHours: 48, outDir: out, policy },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(readFileSync(file) as unknown as ArrayBuffer);
    const ws = wb.getWorksheet('Decisions')!;
    expect(ws).toBeDefined();
    const header = (ws.getRow(1).values as ExcelJS.CellValue[]).slice(1).map(text);
    expect(header.slice(0, DECISION_COLUMNS.length)).toEqual([...DECISION_COLUMNS]);
    expect(header.length).toBe(DECISION_COLUMNS.length + DECISION_INFO_COLUMNS.length + DECISION_SEEN_COLUMNS.length);

    const toWork = (await listExceptions(db.sql, {}, new Date(), policy)).items.filter((x) =>
      ['open', 'assigned', 'pending_approval', 'reopened'].includes(x.state),
    );
    const ids: string[] = [];
    ws.eachRow((r, n) => {
      if (n > 1) ids.push(text(r.getCell(1).value));
    });
    expect(ids.sort()).toEqual(toWork.map((x) => x.id).sort());
    expect(ids.length).toBeGreaterThan(1);
    // the action column offers the actions as a drop-down
    const validation = ws.getCell('B2').dataValidation;
    expect(validation?.type).toBe('list');
    expect(String(validation?.formulae?.[0])).toContain('assign');

    // a person fills in two rows (a comment and an assignment), leaves the rest, and saves the file
    const psp = await idOf(db.sql, 'amount_mismatch');
    const unpaid = await idOf(db.sql, 'order_not_at_psp');
    ws.eachRow((r, n) => {
      if (n === 1) return;
      const id = text(r.getCell(1).value);
      if (id === psp) {
        r.getCell(2).value = 'comment';
        r.getCell(7).value = 'asked the PSP for its ledger';
      }
      if (id === unpaid) {
        r.getCell(2).value = 'assign';
        r.getCell(3).value = 'ivan';
        r.getCell(7).value = 'orders team';
      }
    });
    const filled = Buffer.from(await wb.xlsx.writeBuffer());

    const deps = { sql: db.sql, store, policy };
    const dry = await importDecisions(deps, team.analyst, filled, { dryRun: true });
    expect(dry.ok ? [] : dry.problems).toEqual([]);
    const real = await importDecisions(deps, team.analyst, filled, { dryRun: false });
    expect(real).toEqual(dry);
    await project(db.sql, store);
    const comments = (await exceptionHistory(db.sql, psp)).filter((h) => h.action === 'commented');
    expect(comments.map((h) => [h.by, h.detail])).toEqual([[team.analyst.id, expect.anything()]]);
    expect((await getException(db.sql, unpaid, new Date(), policy))?.assignee).toBe('ivan');
  });
});
