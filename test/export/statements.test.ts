import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { payoutReference } from '../../src/export/statements/payout-references';
import { PAYOUTS_HEADER, statementFileName } from '../../src/export/statements/workbooks';
import { statementFile } from './statement-files';
import { issueStatements, ledgerPosition, statementRuns, fileSha256 } from '../../src/export/statements/issue';
import { moneyFormat, safeText } from '../../src/export/workbook/xlsx';
import { reserveSchedule, statementFigures, statementLines } from '../../src/ledger/ledger-queries';
import { loadProjections, runProjections, type RunnerDeps } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';

/**
 * Statements through the real ledger: sandbox-scenario events → projections → statements, then every
 * workbook opened back and compared cell by cell with the journal's queries at the recorded position.
 */

const TZ = 'Europe/Kyiv';
const MONTH = '2025-01';
let db: TestDatabase;
let store: EventStore;
let deps: RunnerDeps;
const out = mkdtempSync(path.join(tmpdir(), 'recon-statements-'));

const money = (minor: bigint) => Number(minor) / 100;

async function open(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb;
}

let held: ReturnType<typeof appendChunks> extends Generator<infer T> ? T[] : never;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const journal = (await loadProjections()).filter((p) => p.name === 'journal');
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: journal };
  const scenario = scenarioFor({ seed: 606, payments: 160, month: MONTH, timezone: TZ, subMerchants: 6 });
  const chunks = [...appendChunks(scenarioEvents(scenario), 200)];
  // hold back the last chunks: appended later to show that a cut position keeps its figures
  const cut = Math.ceil(chunks.length * 0.7);
  for (const c of chunks.slice(0, cut)) await store.appendMany(c);
  held = chunks.slice(cut);
  await runProjections(deps);
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('statements from the journal', () => {
  it('writes every workbook, and each reads back equal to the journal at the recorded position', async () => {
    const dir = path.join(out, 'first');
    const r = await issueStatements(
      { sql: db.sql, store, log: silentLogger, timezone: TZ },
      { month: MONTH, outDir: dir },
    );
    const position = await ledgerPosition(db.sql);
    expect(r.position).toBe(`${position!.commit}/${position!.prepare}`);
    const at = parsePosition(r.position);
    const figures = await statementFigures(db.sql, { month: MONTH, timezone: TZ, atPosition: at });
    expect(figures.length).toBeGreaterThan(3);
    const subMerchants = [...new Set(figures.map((f) => f.subMerchantId))];
    expect(r.statements).toBe(subMerchants.length);
    expect(readdirSync(dir).sort()).toEqual(
      [
        // a workbook and a PDF each, named by the id and a slug of the name, and finance's audit file beside them
        ...figures
          .filter((f, i) => figures.findIndex((g) => g.subMerchantId === f.subMerchantId) === i)
          .flatMap((f) =>
            (['xlsx', 'pdf', 'audit'] as const).map((file) =>
              statementFileName(f.subMerchantId, MONTH, false, f.subMerchantName, file),
            ),
          ),
        `payouts-${MONTH}.xlsx`,
      ].sort(),
    );

    // nothing is paid to a receiver the directory does not know: what it is owed is held
    const heldOf = (f: (typeof figures)[number]) => {
      const flow = (f.adjustments ?? 0n) + f.netPayable;
      return f.subMerchantId.startsWith('receiver:') && flow > 0n ? flow : 0n;
    };
    const referenceOf = (f: (typeof figures)[number]) =>
      !f.subMerchantId.startsWith('receiver:') && (f.adjustments ?? 0n) + f.netPayable > 0n
        ? payoutReference(f.subMerchantId, MONTH, f.currency, 1)
        : null;
    // Payouts index: exact header, one row per sub-merchant and currency, equal to the journal's figures
    const index = await open(path.join(dir, `payouts-${MONTH}.xlsx`));
    const p = index.worksheets[0]!;
    expect(p.name).toBe('Payouts');
    expect((p.getRow(1).values as unknown[]).slice(1)).toEqual([...PAYOUTS_HEADER]);
    figures.forEach((f, i) => {
      const row = p.getRow(i + 2);
      expect((row.values as unknown[]).slice(1)).toEqual([
        safeText(f.subMerchantId),
        safeText(f.subMerchantName),
        f.currency,
        money(f.gross),
        money(f.refunds),
        money(f.chargebacks),
        money(f.fees),
        money(f.reserveHeld),
        money(f.reserveReleased),
        money(f.netPayable),
        f.operations,
        money(f.adjustments ?? 0n),
        money((f.adjustments ?? 0n) + f.netPayable - heldOf(f)),
        money(heldOf(f)),
        money(0n),
        ...(referenceOf(f) ? [referenceOf(f), 'expected'] : [undefined, undefined]),
        0, // not_stated_before: every month before was issued or none was
      ]);
    });
    expect(p.getRow(figures.length + 2).cellCount).toBe(0);

    // Every statement: summary bridge, every operation line, the reserve schedule
    let linesSeen = 0;
    let withParts = 0;
    for (const id of subMerchants) {
      const own = figures.filter((f) => f.subMerchantId === id);
      const wb = await open(path.join(dir, statementFile(dir, id, MONTH)));
      const s = wb.getWorksheet('Summary')!;
      const rowOf = (label: string) => {
        let at = 0;
        s.eachRow((row, n) => {
          if (row.getCell(1).value === label) at = n;
        });
        return at;
      };
      expect(s.getCell(`B${rowOf('Account id')}`).value).toBe(
        id.startsWith('receiver:') ? 'not registered as a sub-merchant' : safeText(id),
      );
      // the cut and the hash are finance's: in the audit file beside the statement, not in the sub-merchant's workbook
      expect(wb.getWorksheet('Audit')).toBeUndefined();
      const audit = new Map<string, unknown>();
      const traced = new Set<string>();
      const auditBook = await open(path.join(dir, statementFile(dir, id, MONTH, false, 'audit')));
      auditBook.getWorksheet('Audit')!.eachRow((row) => {
        audit.set(String(row.getCell(1).value), row.getCell(5).value);
        traced.add(`${row.getCell(4).value} ${row.getCell(5).value}`);
      });
      expect(audit.get('Cut at event-store position')).toBe(r.position);
      expect(audit.get('Figures sha-256')).toBe(r.figuresSha256);
      const head = rowOf('Payout bridge');
      own.forEach((f, c) => {
        const col = String.fromCharCode(66 + c);
        expect(s.getCell(`${col}${head}`).value).toBe(f.currency);
        const adjustments = f.adjustments ?? 0n;
        const bridge = [
          f.opening,
          adjustments,
          f.gross,
          -f.refunds,
          -f.chargebacks,
          -f.fees,
          -f.reserveHeld,
          f.reserveReleased,
          f.netPayable,
          -heldOf(f),
          0n,
          adjustments + f.netPayable - heldOf(f),
          0n,
          f.closing,
        ];
        bridge.forEach((v, k) => {
          expect(s.getCell(`${col}${head + 1 + k}`).value).toBe(money(v));
        });
        expect(f.opening + adjustments + bridge.slice(2, 8).reduce((a, b) => a + b, 0n)).toBe(f.closing);
      });
      for (const f of own) {
        const sheet = wb.getWorksheet(own.length === 1 ? 'Operations' : `Operations ${f.currency}`)!;
        let row = 2;
        for await (const l of statementLines(db.sql, {
          month: MONTH,
          timezone: TZ,
          subMerchantId: id,
          currency: f.currency,
          atPosition: at,
        })) {
          const cells = sheet.getRow(row++);
          const local = DateTime.fromJSDate(l.at, { zone: TZ });
          expect(cells.getCell(1).value).toEqual(
            new Date(
              Date.UTC(
                local.year,
                local.month - 1,
                local.day,
                local.hour,
                local.minute,
                local.second,
                local.millisecond,
              ),
            ),
          );
          expect(cells.getCell(2).value ?? '').toBe(safeText(l.orderId));
          expect(cells.getCell(3).value).toBe(safeText(l.paymentId));
          expect([cells.getCell(4).value, cells.getCell(5).value]).toEqual([l.method, l.status]);
          expect([7, 8, 11, 12].map((c) => cells.getCell(c).value)).toEqual([
            money(l.share),
            money(l.fee),
            money(l.reserve),
            money(l.net),
          ]);
          expect(cells.getCell(12).numFmt).toBe(moneyFormat(f.currency));
          // how the customer paid: every sandbox payment has a recorded payway
          expect(String(cells.getCell(6).value)).toMatch(/^(Card|Apple Pay|Google Pay)/);
          const parts = [9, 10].map((c) => cells.getCell(c).value);
          if (parts[0] !== null) withParts++;
          if (parts[0] !== null)
            expect(Math.round(((parts[0] as number) + (parts[1] as number)) * 100)).toBe(
              Math.round(money(l.fee) * 100),
            );
          // each line's events are on the audit file's Audit sheet, beside its payment
          expect(traced.has(`${safeText(l.paymentId)} ${l.eventIds.join(' ')}`)).toBe(true);
          linesSeen++;
        }
        expect(sheet.getRow(row).cellCount).toBe(0); // nothing more than the journal's lines, then the totals
      }
      const reserve = await reserveSchedule(db.sql, { month: MONTH, timezone: TZ, subMerchantId: id, atPosition: at });
      const rs = wb.getWorksheet('Reserve schedule')!;
      reserve.forEach((x, k) => {
        const cells = rs.getRow(k + 2);
        expect(cells.getCell(1).value).toEqual(new Date(`${x.heldOn}T00:00:00.000Z`));
        expect([cells.getCell(2).value, cells.getCell(3).value, cells.getCell(5).value]).toEqual([
          x.currency,
          money(x.held),
          money(x.released),
        ]);
        expect(cells.getCell(4).value).toEqual(new Date(`${x.releaseOn}T00:00:00.000Z`));
      });
    }
    expect(linesSeen).toBe(r.lines);
    // single-receiver purchases: the PSP's fixed and percentage parts are that line's fee
    expect(withParts).toBeGreaterThan(0);
    expect(linesSeen).toBeGreaterThan(50);

    // the run is recorded: table row and StatementIssued event with the same facts
    const [run] = await statementRuns(db.sql, { month: MONTH });
    expect(run).toMatchObject({
      runId: r.runId,
      position: r.position,
      figuresSha256: r.figuresSha256,
      statements: r.statements,
      eventId: r.eventId,
    });
    expect(run!.files.map((f) => f.name).sort()).toEqual(readdirSync(dir).sort());
    for (const f of run!.files) expect(f.sha256).toBe(await fileSha256(path.join(dir, f.name)));
    const events = await store.readStream(statementStream(MONTH));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: r.eventId,
      type: StatementIssued.type,
      data: { month: MONTH, position: r.position, figuresSha256: r.figuresSha256, subMerchantId: null },
    });
  });

  it('regenerated at the recorded position gives identical figures after more events arrived', async () => {
    const first = await issueStatements(
      { sql: db.sql, store, log: silentLogger, timezone: TZ },
      { month: MONTH, outDir: path.join(out, 'a') },
    );
    for (const c of held) await store.appendMany(c);
    await runProjections(deps);
    const later = await issueStatements(
      { sql: db.sql, store, log: silentLogger, timezone: TZ },
      { month: MONTH, outDir: path.join(out, 'b') },
    );
    expect(later.position).not.toBe(first.position);
    expect(later.figuresSha256).not.toBe(first.figuresSha256);
    const again = await issueStatements(
      { sql: db.sql, store, log: silentLogger, timezone: TZ },
      { month: MONTH, outDir: path.join(out, 'c'), atPosition: parsePosition(first.position) },
    );
    expect(again.position).toBe(first.position);
    expect(again.figuresSha256).toBe(first.figuresSha256);
    expect(again.figures).toEqual(first.figures);
    // the same run is the same event: nothing new appended for it
    expect(again.eventId).toBe(first.eventId);
    expect(again.newEvent).toBe(false);
    const index = await open(path.join(out, 'c', `payouts-${MONTH}.xlsx`));
    const firstIndex = await open(path.join(out, 'a', `payouts-${MONTH}.xlsx`));
    const values = (wb: ExcelJS.Workbook) =>
      wb.worksheets[0]!.getSheetValues().map((r) => (Array.isArray(r) ? r.slice(1) : r));
    expect(values(index)).toEqual(values(firstIndex));
  });

  it('issues one sub-merchant alone without touching the index, and refuses an unknown one', async () => {
    const figures = await statementFigures(db.sql, { month: MONTH, timezone: TZ });
    const id = figures[0]!.subMerchantId;
    const dir = path.join(out, 'one');
    const r = await issueStatements(
      { sql: db.sql, store, log: silentLogger, timezone: TZ },
      { month: MONTH, outDir: dir, subMerchantId: id },
    );
    expect(r.statements).toBe(1);
    const name = figures[0]!.subMerchantName;
    expect(readdirSync(dir).sort()).toEqual(
      [
        statementFileName(id, MONTH, false, name, 'pdf'),
        statementFileName(id, MONTH, false, name, 'xlsx'),
        statementFileName(id, MONTH, false, name, 'audit'),
      ].sort(),
    );
    await expect(
      issueStatements(
        { sql: db.sql, store, log: silentLogger, timezone: TZ },
        { month: MONTH, outDir: dir, subMerchantId: '00000000-0000-4000-8000-00000000dead' },
      ),
    ).rejects.toMatchObject({ code: 'EXPORT_NOTHING_TO_ISSUE' });
  });
});
