import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { isEvent } from '../../src/events/catalog';
import { ExceptionCommented, ExceptionDecisionApproved, exceptionStream } from '../../src/events/exception-events';
import { proposeDecision, rejectDecision } from '../../src/exceptions/actions';
import { DECISION_SEEN_COLUMNS } from '../../src/exceptions/decisions-layout';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { writeNightlyReportFor } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 15: a nightly workbook written before its Decisions sheet carried the hidden `seen_…` columns (what each
 * row showed) was imported as a sheet made by hand, its decisions taken on the exception as it stood at the
 * import: a write-off typed beside 100.00 UAH was written off at 500.00 after a webhook re-send, an approve row
 * signed another proposal than the one the sheet showed. Such a sheet shows the exception (its `amount_in_doubt`,
 * `state` columns) yet cannot say what was seen: its decision rows are refused naming the missing column, nothing
 * of the file applied; its other rows (a comment) still import.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: 100.00 in doubt
let orphan = ''; // payment_without_order: a write-off waiting for approval
let unpaid = ''; // order_not_at_psp
const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 1000n } }).policy;
const out = mkdtempSync(path.join(tmpdir(), 'recon-review15-sheet-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  orphan = await idOf(db.sql, 'payment_without_order');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
  rmSync(out, { recursive: true, force: true });
});

const deps = () => ({ sql: db.sql, store, policy });

function recon(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error', RECON_TOKEN: token } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The nightly sheet as written before it kept what each row showed (no `seen_…` columns), filled in by id. */
async function olderSheet(name: string, fill: Record<string, Record<string, string>>): Promise<string> {
  const { file } = await writeNightlyReportFor(deps(), {
    date: '2026-09-30',
    timezone: 'Europe/Kyiv',
    graceHours: 48,
    outDir: out,
    policy,
  });
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(readFileSync(file) as unknown as ArrayBuffer);
  const ws = wb.getWorksheet('Decisions')!;
  const columnOf = () => {
    const columns = new Map<string, number>();
    ws.getRow(1).eachCell((c, n) => columns.set(String(c.value), n));
    return columns;
  };
  for (const seen of DECISION_SEEN_COLUMNS) ws.spliceColumns(columnOf().get(seen)!, 1);
  const columns = columnOf();
  expect([...columns.keys()]).toEqual(expect.arrayContaining(['id', 'action', 'amount_in_doubt', 'state']));
  expect([...columns.keys()].filter((c) => c.startsWith('seen_'))).toEqual([]);
  const rows = new Map<string, number>();
  ws.eachRow((r, n) => {
    if (n > 1) rows.set(String(r.getCell(1).value), n);
  });
  for (const [id, values] of Object.entries(fill))
    for (const [column, value] of Object.entries(values))
      ws.getRow(rows.get(id)!).getCell(columns.get(column)!).value = value;
  const path_ = path.join(out, name);
  writeFileSync(path_, Buffer.from(await wb.xlsx.writeBuffer()));
  return path_;
}

const count = async (stream: string, type: Parameters<typeof isEvent>[0]) =>
  (await store.readStream(stream)).filter((e) => isEvent(type, e)).length;

describe('review15: an older nightly Decisions sheet, without what its rows showed', () => {
  it('refuses its decision rows naming the missing column; nothing applied; a comment-only one imports', async () => {
    await proposeDecision(deps(), team.analyst, { id: orphan, decision: 'write_off', note: 'no order will come' });
    await project(db.sql, store);
    const file = await olderSheet('old.xlsx', {
      [psp]: { action: 'accept', decision: 'write_off', note: 'the PSP will not pay' },
      [orphan]: { action: 'approve', note: 'agreed' },
      [unpaid]: { action: 'comment', note: 'called the customer' },
    });
    // the next day: a webhook re-sent with another amount; the proposal rejected, another made
    await appendAll(store, [
      webhook({
        paymentId: 'pay-a',
        orderId: 'ord-a',
        processedAt: at('2024-03-10T10:00:00Z'),
        amount: 500_00n,
        fee: 100n,
        receivedAt: at('2024-03-12T10:00:00Z'),
      }),
    ]);
    await rejectDecision(deps(), team.approver, { id: orphan, note: 'ask the bank first' });
    await proposeDecision(deps(), team.analyst, { id: orphan, decision: 'write_off', note: 'the bank says no' });
    await project(db.sql, store);

    const r = await recon(['exceptions', 'import', file], team.approver2.token);
    expect(r.code, r.stdout).toBe(EXIT_CODE.data);
    expect(r.stderr).toContain(`${file}: nothing imported`);
    expect(r.stderr).toMatch(/Decisions!B\d+: accept: the sheet has no column seen_amount_in_doubt/);
    expect(r.stderr).toMatch(/Decisions!B\d+: approve: the sheet has no column seen_proposal/);
    expect(r.stderr).toContain('recon report nightly');
    expect(await count(discrepancyStream(psp), DiscrepancyAccepted)).toBe(0);
    expect(await count(exceptionStream(orphan), ExceptionDecisionApproved)).toBe(0);
    expect(await count(exceptionStream(unpaid), ExceptionCommented)).toBe(0);

    // what binds no money is still taken from such a sheet
    const comments = await olderSheet('old-comment.xlsx', { [unpaid]: { action: 'comment', note: 'called again' } });
    const ok = await recon(['exceptions', 'import', comments], team.analyst.token);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await count(exceptionStream(unpaid), ExceptionCommented)).toBe(1);
  }, 600_000);
});
