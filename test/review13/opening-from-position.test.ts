import { execFileSync } from 'node:child_process';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { statementFile } from '../export/statement-files';
import { useStatementTest } from '../export/support';

/**
 * A statement built on the one issued before it says where its opening comes from. The Summary's "Opening from"
 * (and the PDF's header, from the same rows) printed the figures' `previousStatement` as it is kept for finance:
 * "the statement of 2025-01 at 785/8", the event-store position January was cut at, on the two documents that
 * leave the company (src/export/statements/pdf.ts promises no store positions on them).
 */

const t = useStatementTest({ pos: 'pos-open-from', outPrefix: 'recon-review13-open-from-' });

describe('review13: "Opening from" on a statement built on an earlier one', () => {
  it('names the statement, never the event-store position it was cut at', async () => {
    await t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n', { settle: false });
    await t.observe(t.sale('pay-jan', '2025-01-20T10:00:00.000Z', 'Shop A', 50_000n), '2025-01-21T00:00:00.000Z');
    const jan = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    await t.observe(t.sale('pay-feb', '2025-02-10T10:00:00.000Z', 'Shop A', 1_000n), '2025-02-11T00:00:00.000Z');
    const feb = await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    expect(feb.figures[0]!.previousStatement).toBe(`2025-01 at ${jan.position}`);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(t.out, statementFile(t.out, 'SM-A', '2025-02')));
    const summary = new Map<string, unknown>();
    wb.getWorksheet('Summary')!.eachRow((r) => summary.set(String(r.getCell(1).value), r.getCell(2).value));
    expect(summary.get('Opening from')).toContain('2025-01');
    expect(String(summary.get('Opening from'))).not.toContain(jan.position);

    const pdf = path.join(t.out, statementFile(t.out, 'SM-A', '2025-02', false, 'pdf'));
    const text = execFileSync('pdftotext', [pdf, '-'], { encoding: 'utf8' });
    expect(text).toContain('Opening from');
    expect(text).not.toContain(jan.position);
  });
});
