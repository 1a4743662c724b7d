import { readdirSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { beforeAll, describe, expect, it } from 'vitest';
import { statementFile } from './statement-files';
import { issueStatements } from '../../src/export/statements/issue';
import { TZ, useStatementTest } from './support';

/**
 * The controls of a statement run (src/export/statements/controls.ts): a month not ended only as a
 * PROVISIONAL draft that is never recorded; a cut beyond the store's head refused; another RECON_TIMEZONE
 * refused naming both zones until re-based; a month whose previous month was never issued says so and lists
 * that month's movements (a reserve released in it included) apart from the adjustments.
 */

const t = useStatementTest({ pos: 'pos-controls', outPrefix: 'recon-controls-' });

beforeAll(() =>
  t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\nSM-C,Shop C,30\n', { settle: false }),
);

async function workbook(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(t.out, file));
  return wb;
}

function column(ws: ExcelJS.Worksheet, col: string): unknown[] {
  const out: unknown[] = [];
  ws.getColumn(col).eachCell((c) => out.push(c.value));
  return out;
}

describe('statement controls', () => {
  it('refuses a cut beyond the store head', async () => {
    await t.observe(t.sale('pay-a1', '2025-01-10T10:00:00.000Z', 'Shop A', 10_000n, { reserve: 1_000n }), '2025-01-11');
    await expect(
      issueStatements(t.deps, {
        month: '2025-01',
        outDir: t.out,
        atPosition: { commit: 10n ** 15n, prepare: 10n ** 15n },
      }),
    ).rejects.toMatchObject({
      code: 'STATEMENT_POSITION_BEYOND_HEAD',
      message: expect.stringContaining('--at-position'),
    });
    expect(await t.store.readStream('statements-2025-01')).toEqual([]);
  });

  it('refuses a month not ended; --provisional marks every sheet and file and records nothing', async () => {
    const now = new Date('2025-01-20T12:00:00.000Z');
    await expect(issueStatements(t.deps, { month: '2025-01', outDir: t.out, now })).rejects.toMatchObject({
      code: 'STATEMENT_MONTH_NOT_ENDED',
      message: expect.stringContaining('--provisional'),
    });
    // a future month too
    await expect(issueStatements(t.deps, { month: '2025-05', outDir: t.out, now })).rejects.toMatchObject({
      code: 'STATEMENT_MONTH_NOT_ENDED',
    });
    const draft = await issueStatements(t.deps, { month: '2025-01', outDir: t.out, now, provisional: true });
    expect(draft.provisional).toBe(true);
    expect(draft.files.map((f) => f.name).sort()).toEqual(
      [
        statementFile(t.out, 'SM-A', '2025-01', true),
        statementFile(t.out, 'SM-A', '2025-01', true, 'pdf'),
        statementFile(t.out, 'SM-A', '2025-01', true, 'audit'),
        'payouts-2025-01-PROVISIONAL.xlsx',
      ].sort(),
    );
    expect(draft.files.every((f) => f.name.includes('PROVISIONAL'))).toBe(true);
    for (const f of draft.files.filter((x) => x.name.endsWith('.xlsx'))) {
      const wb = await workbook(f.name);
      expect(wb.worksheets.map((w) => w.name).every((n) => n.startsWith('PROVISIONAL'))).toBe(true);
    }
    const summary = (await workbook(statementFile(t.out, 'SM-A', '2025-01', true))).worksheets[0]!;
    expect(String(summary.getCell('A1').value)).toContain('DRAFT');
    // not recorded as issued: no event, no run
    expect(await t.store.readStream('statements-2025-01')).toEqual([]);
    expect(await t.db.sql`select 1 from statement_runs`).toHaveLength(0);
    // a provisional run of a month that has ended is refused (it would pass for the issued one)
    await expect(issueStatements(t.deps, { month: '2025-01', outDir: t.out, provisional: true })).rejects.toMatchObject(
      { code: 'STATEMENT_PROVISIONAL_NEEDS_MONTH_NOT_ENDED' },
    );
  });

  it('a provisional run never becomes the next month’s opening', async () => {
    const feb = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    const a = feb.figures.find((f) => f.subMerchantId === 'SM-A')!;
    expect({ previous: a.previousStatement, notIssued: feb.previousMonthNotIssued }).toEqual({
      previous: undefined,
      notIssued: '2025-01',
    });
  });

  it('a month whose previous month was never issued says so; reserve released in that month is not an adjustment', async () => {
    await t.observe(t.sale('pay-c1', '2025-04-05T10:00:00.000Z', 'Shop C', 20_000n, { reserve: 2_000n }), '2025-04-06');
    const apr = await issueStatements(t.deps, { month: '2025-04', outDir: t.out });
    // May is never issued: a May sale, and April's reserve released on 5 May
    await t.observe(t.sale('pay-c2', '2025-05-12T10:00:00.000Z', 'Shop C', 3_000n), '2025-05-13');
    const jun = await issueStatements(t.deps, { month: '2025-06', outDir: t.out });
    expect(jun.previousMonthNotIssued).toBe('2025-05');
    const c = jun.figures.find((f) => f.subMerchantId === 'SM-C')!;
    expect(c).toMatchObject({
      previousStatement: `2025-04 at ${apr.position}`,
      opening: 18_000n,
      adjustments: 0n,
      notStated: 5_000n,
      notStatedMonths: '2025-05',
      closing: 23_000n,
    });
    const wb = await workbook(statementFile(t.out, 'SM-C', '2025-06'));
    const summary = new Map<string, unknown>();
    wb.getWorksheet('Summary')!.eachRow((r) => summary.set(String(r.getCell(1).value), r.getCell(2).value));
    expect(summary.get('Opening from')).toEqual(expect.stringContaining('2025-05 was never issued'));
    expect(summary.get('± Adjustments to earlier months (sheet Adjustments)')).toBe(0);
    expect(summary.get('± Months never stated before (sheet Not stated before)')).toBe(50);
    expect(summary.get('= Amount due (adjustments + months never stated + net payable − held + released)')).toBe(50);
    expect(column(wb.getWorksheet('Adjustments')!, 'C')).not.toContain('reserve released');
    // in words, never the journal's codes (test/review13/adjustments-sheet-words.test.ts)
    expect(column(wb.getWorksheet('Not stated before')!, 'C')).toEqual(
      expect.arrayContaining(['Entry', 'reserve released', 'operation']),
    );
  });

  it('refuses another RECON_TIMEZONE naming both zones, until re-based explicitly', async () => {
    // 30 June 22:30 UTC is July in Kyiv, June in UTC: June's Kyiv statement did not state it
    await t.observe(t.sale('pay-c3', '2025-06-30T22:30:00.000Z', 'Shop C', 700n), '2025-07-01');
    const utc = { ...t.deps, timezone: 'UTC' };
    const refused = issueStatements(utc, { month: '2025-07', outDir: t.out });
    await expect(refused).rejects.toMatchObject({ code: 'STATEMENT_TIMEZONE_CHANGED' });
    await expect(refused).rejects.toThrow(/UTC.*Europe\/Kyiv|Europe\/Kyiv.*UTC/);
    const jul = await issueStatements(utc, { month: '2025-07', outDir: t.out, rebaseTimezone: true });
    expect(jul.rebasedFrom).toBe(TZ);
    await t.settle(); // the journal's checkpoint passes the July run, the cut of the next
    // the sale between the two zones' month boundaries is paid once, as an adjustment
    expect(jul.figures.find((f) => f.subMerchantId === 'SM-C')).toMatchObject({ adjustments: 700n, netPayable: 0n });
    // later runs build on the re-based one, and the former zone is now the one refused
    await expect(issueStatements(utc, { month: '2025-08', outDir: t.out })).resolves.toMatchObject({ timezone: 'UTC' });
    await expect(issueStatements(t.deps, { month: '2025-09', outDir: t.out })).rejects.toMatchObject({
      code: 'STATEMENT_TIMEZONE_CHANGED',
    });
    expect(readdirSync(t.out).some((f) => f.endsWith('.partial'))).toBe(false);
  });
});
