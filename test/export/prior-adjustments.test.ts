import path from 'node:path';
import ExcelJS from 'exceljs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { statementFile } from './statement-files';
import { issueStatements } from '../../src/export/statements/issue';
import { useStatementTest } from './support';

/**
 * A statement opens at the closing of the statement issued before it, and shows what changed in earlier
 * months since then as adjustments (a January sale that failed after January's statement
 * was issued vanished from January, so February opened at 0 and the 50,000 already paid was never clawed
 * back; a January sale first reported after January was issued was never paid).
 */

const t = useStatementTest({ pos: 'pos-adj', outPrefix: 'recon-adjustments-' });
const { observe } = t;
const sale = (
  paymentId: string,
  dateTime: string,
  receiver: string,
  amount: bigint,
  fee: bigint,
  status: NormalizedRegisterRecord['status'] = 'success',
) => t.sale(paymentId, dateTime, receiver, amount, { fee, status });

beforeAll(() =>
  t.directory('sub_merchant_id,name,reserve_hold_days\nSM-LATE,Late Shop,30\nSM-NEW,New Shop,30\n', { settle: false }),
);

async function summaryOf(file: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(t.out, file));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  return rows;
}

describe('statements build on the statements issued before them', () => {
  it('a sale that failed, and a sale first reported, after their month was issued are adjustments of the next month', async () => {
    await observe(sale('pay-late', '2025-01-20T10:00:00.000Z', 'Late Shop', 50_000n, 500n), '2025-01-21T00:00:00.000Z');
    const jan = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    const janLate = jan.figures.find((f) => f.subMerchantId === 'SM-LATE')!;
    // what January's statement told finance to pay: the share less the fee
    expect({ closing: janLate.closing, previous: janLate.previousStatement, adjustments: janLate.adjustments }).toEqual(
      { closing: 50_000n, previous: undefined, adjustments: undefined },
    );
    // the run records what it stated per receiver name: the next month opens at it
    const [issued] = await t.store.readStream('statements-2025-01');
    expect((issued!.data as { closings?: unknown }).closings).toEqual([['Late Shop', 'EUR', '50000']]);

    // in February the PSP reports the January sale as failed, and a January sale of another sub-merchant for the first time
    await observe(
      sale('pay-late', '2025-01-20T10:00:00.000Z', 'Late Shop', 50_000n, 500n, 'failure'),
      '2025-02-03T00:00:00.000Z',
    );
    await observe(sale('pay-new', '2025-01-31T20:00:00.000Z', 'New Shop', 7_000n, 70n), '2025-02-03T00:00:00.000Z');
    await observe(sale('pay-feb', '2025-02-10T10:00:00.000Z', 'New Shop', 1_000n, 10n), '2025-02-11T00:00:00.000Z');

    const feb = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    const byId = new Map(feb.figures.map((f) => [f.subMerchantId, f]));
    const previous = `2025-01 at ${jan.position}`;
    // February opens where January's statement ended, and claws the failed sale back
    expect(byId.get('SM-LATE')).toMatchObject({
      opening: 50_000n,
      adjustments: -50_000n,
      netPayable: 0n,
      closing: 0n,
      previousStatement: previous,
    });
    // the late January sale is paid in February, beside February's own sale
    expect(byId.get('SM-NEW')).toMatchObject({
      opening: 0n,
      adjustments: 7_000n,
      gross: 1_010n,
      fees: 10n,
      netPayable: 1_000n,
      closing: 8_000n,
      previousStatement: previous,
    });

    // the statements say so, and list the entries behind the adjustments
    const late = await summaryOf(statementFile(t.out, 'SM-LATE', '2025-02'));
    // the month, never the cut position (test/review13/opening-from-position.test.ts)
    expect(late.get('Opening from')).toBe('the statement of 2025-01');
    expect(late.get("Opening balance (the previous statement's closing)")).toBe(500);
    expect(late.get('± Adjustments to earlier months (sheet Adjustments)')).toBe(-500);
    // owed back: carried to the next statement, taken off its payout (test/export/negative-month.test.ts)
    expect(late.get('= Amount due (adjustments + net payable − held + released − brought forward)')).toBe(-500);
    expect(late.get('Carried forward to the next statement (owed by you)')).toBe(500);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(t.out, statementFile(t.out, 'SM-LATE', '2025-02')));
    const adj = wb.getWorksheet('Adjustments')!;
    expect([adj.getCell('C2').value, adj.getCell('E2').value, adj.getCell('H2').value]).toEqual([
      'reversal',
      'pay-late',
      -500,
    ]);
    expect(adj.getCell('A3').value).toBeNull(); // one entry, then the totals after a blank row
    expect(adj.getCell('H4').value).toBe(-500);

    // the Payouts index: what is due in all
    const index = new ExcelJS.Workbook();
    await index.xlsx.readFile(path.join(t.out, 'payouts-2025-02.xlsx'));
    const rows = index
      .getWorksheet('Payouts')!
      .getSheetValues()
      .slice(2, 4)
      .map((r) => (r as unknown[]).slice(1));
    expect(rows.map((r) => [r[0], r[11], r[12]])).toEqual([
      ['SM-LATE', -500, -500],
      ['SM-NEW', 70, 80],
    ]);

    // issued again at the same position: the same statement (the opening comes from the log, not the clock)
    const again = await issueStatements(t.deps, {
      month: '2025-02',
      outDir: t.out,
      atPosition: { commit: BigInt(feb.position.split('/')[0]!), prepare: BigInt(feb.position.split('/')[1]!) },
    });
    expect({ sha: again.figuresSha256, newEvent: again.newEvent }).toEqual({ sha: feb.figuresSha256, newEvent: false });
  });
});
