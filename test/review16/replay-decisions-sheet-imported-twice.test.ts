import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDecisions } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { exceptionHistory } from '../../src/exceptions/queries';
import { writeNightlyReportFor } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A filled-in Decisions sheet imported a second time (the same file sent again: a retry, a second click) appended
 * every row's action again: its comment twice, its assignment twice, each with the time of the import in its
 * data and so an id of its own. Like every other import (bank statements, orders), the same file imported again
 * now writes nothing.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
const policy = exceptionPolicyOf({}).policy;
const out = mkdtempSync(path.join(tmpdir(), 'recon-review16-decisions-'));

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
  rmSync(out, { recursive: true, force: true });
});

const text = (v: ExcelJS.CellValue) => (v === null || v === undefined ? '' : String(v));
const events = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from es_events`)[0]!.n;

describe('a Decisions sheet imported twice', () => {
  it('writes its rows once', async () => {
    const { file } = await writeNightlyReportFor(
      { sql: db.sql, store },
      { date: '2026-09-30', timezone: 'Europe/Kyiv', graceHours: 48, outDir: out, policy },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(readFileSync(file) as unknown as ArrayBuffer);
    const psp = await idOf(db.sql, 'amount_mismatch');
    const unpaid = await idOf(db.sql, 'order_not_at_psp');
    wb.getWorksheet('Decisions')!.eachRow((r, n) => {
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

    const first = await importDecisions(deps, team.analyst, filled, { dryRun: false });
    expect(first.ok && first.changes.map((c) => c.id).sort()).toEqual([psp, unpaid].sort());
    await project(db.sql, store);
    const written = await events();

    const again = await importDecisions(deps, team.analyst, filled, { dryRun: false });
    expect(again).toEqual({ ok: true, changes: [] });
    await project(db.sql, store);
    expect(await events()).toBe(written);
    const history = async (id: string) => (await exceptionHistory(db.sql, id)).map((h) => h.action);
    expect((await history(psp)).filter((a) => a === 'commented')).toHaveLength(1);
    expect((await history(unpaid)).filter((a) => a === 'assigned')).toHaveLength(1);
  });
});
