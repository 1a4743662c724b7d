import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExceptionCommented, ExceptionDecisionApproved, exceptionStream } from '../../src/events/exception-events';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { isEvent } from '../../src/events/catalog';
import { proposeDecision, rejectDecision } from '../../src/exceptions/actions';
import { DECISION_SEEN_COLUMNS } from '../../src/exceptions/decisions-layout';
import { importDecisions, sheetProblemText } from '../../src/exceptions/import';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { getException } from '../../src/exceptions/queries';
import { writeNightlyReportFor } from '../../src/export/nightly/report';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 14: the nightly report's Decisions sheet is filled in during the day and imported back with `recon
 * exceptions import`; its `accept` and `approve` rows were decided on the exception as it stood at the import.
 * A write-off typed beside 100.00 UAH was taken on 500.00 after a webhook re-send, and an approve row signed
 * whichever proposal waited by then (the one the sheet showed rejected, another proposed). The sheet now carries
 * what each row showed, exactly (hidden columns: the amount in minor units, its currency, the proposal, the
 * decision in force), and a row no longer so is refused naming its cell; nothing of the file is applied.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp = ''; // amount_mismatch: 100.00 in doubt
let orphan = ''; // payment_without_order: 26.00 in doubt
let unpaid = ''; // order_not_at_psp
// a write-off above 10.00 waits for a second person
const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 1000n } }).policy;
const out = mkdtempSync(path.join(tmpdir(), 'recon-review14-sheet-'));

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

/** The nightly workbook's Decisions sheet as written now, with `fill` typed into rows by exception id. */
async function filledSheet(fill: Record<string, Record<string, string>>): Promise<{ file: Buffer; cell: Cells }> {
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
  const columns = new Map<string, number>();
  ws.getRow(1).eachCell((c, n) => columns.set(String(c.value), n));
  // what the row showed is kept for the import, not shown
  for (const seen of DECISION_SEEN_COLUMNS) expect(ws.getColumn(columns.get(seen)!).hidden).toBe(true);
  const rows = new Map<string, number>();
  ws.eachRow((r, n) => {
    if (n > 1) rows.set(String(r.getCell(1).value), n);
  });
  for (const [id, values] of Object.entries(fill))
    for (const [column, value] of Object.entries(values))
      ws.getRow(rows.get(id)!).getCell(columns.get(column)!).value = value;
  const letter = (n: number) => String.fromCharCode(64 + n);
  return {
    file: Buffer.from(await wb.xlsx.writeBuffer()),
    cell: (id, column) => `${letter(columns.get(column)!)}${rows.get(id)!}`,
  };
}
type Cells = (id: string, column: string) => string;

const FILL = (): Record<string, Record<string, string>> => ({
  [psp]: { action: 'accept', decision: 'write_off', note: 'the PSP will not pay' },
  [orphan]: { action: 'approve', note: 'agreed' },
  [unpaid]: { action: 'comment', note: 'called the customer' },
});

describe('review14: a Decisions sheet decides on what it showed', () => {
  it('refuses the rows whose money or proposal changed since the sheet was written, nothing applied', async () => {
    // a write-off of the orphan payment waits for approval when the report is written
    await proposeDecision(deps(), team.analyst, { id: orphan, decision: 'write_off', note: 'no order will come' });
    await project(db.sql, store);
    const { file, cell } = await filledSheet(FILL());

    // the next day, before the import: a webhook re-sent with another amount; the proposal rejected, another made
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
    const now = (await getException(db.sql, psp, new Date(), policy))!.amountInDoubt!;

    const r = await importDecisions(deps(), team.approver2, file, { dryRun: false });
    const problems = r.ok ? [] : r.problems.map(sheetProblemText);
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        `Decisions!${cell(psp, 'seen_amount_in_doubt')}: exception ${psp}: the decision was taken on 100.00 UAH, the amount in doubt is now ${BigInt(now) / 100n}.00 UAH: look again and decide on the amount now`,
        expect.stringMatching(
          new RegExp(
            `^Decisions!${cell(orphan, 'seen_proposal')}: exception ${orphan}: the proposal waiting is no longer the one shown`,
          ),
        ),
      ]),
    );
    // all or nothing: the comment of the third row is not written either
    expect((await store.readStream(exceptionStream(unpaid))).filter((e) => isEvent(ExceptionCommented, e))).toEqual([]);
    expect(
      (await store.readStream(exceptionStream(orphan))).filter((e) => isEvent(ExceptionDecisionApproved, e)),
    ).toEqual([]);
    expect((await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e))).toEqual([]);

    // the report written again shows the exceptions as they are now: the same rows import
    const again = await filledSheet(FILL());
    const done = await importDecisions(deps(), team.approver2, again.file, { dryRun: false });
    expect(done.ok ? done.changes.map((c) => c.id).sort() : done.problems).toEqual([psp, orphan, unpaid].sort());
  });
});
