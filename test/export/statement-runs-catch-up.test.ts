import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerObserved } from '../../src/ingest/observations';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from '../faults/support/processes';
import { statementFile } from './statement-files';
import { TZ, useStatementTest } from './support';

/**
 * Found in review (issue 25): `recon statements` cut at the journal's checkpoint as it was, so a change
 * recorded since the last projection run (a late sale, an auditor's decision to pay) was not seen: the
 * command said "unchanged since the statements issued …, nothing recorded" and the money stayed unasked.
 * It now brings the read models up to the store's head first, as `recon payouts` and `recon discrepancies` do.
 */

const t = useStatementTest({ pos: 'pos-catch-up', outPrefix: 'recon-statement-catch-up-' });
const MONTH = '2025-01';

afterAll(() => killAll());
beforeAll(() => t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n'));

const env = () => reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_LOG_LEVEL: 'error' } });

async function statements(out: string) {
  const r = await runRecon(['statements', '--month', MONTH, '--out', out], env(), 120_000);
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  return r.stdout;
}

async function summary(dir: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(dir, statementFile(dir, 'SM-A', MONTH)));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  return rows;
}

describe('recon statements after something changed that no projection has applied yet', () => {
  it('sees the change: a correction asking the difference, not "unchanged"', { timeout: 600_000 }, async () => {
    await t.observe(t.sale('p1', '2025-01-10T10:00:00.000Z', 'Shop A', 1_000_00n), '2025-01-11T00:00:00.000Z');
    const first = mkdtempSync(path.join(t.out, 'first-'));
    expect(await statements(first)).not.toContain('unchanged');

    // a January sale first reported in February, stored by a sync; no `recon project` since
    const late = t.sale('p2', '2025-01-25T10:00:00.000Z', 'Shop A', 300_00n);
    const k = registerObserved('pos-catch-up', JSON.stringify(late), late, {
      source: 'register',
      reportId: 'rep-late',
      window: { from: '2025-01-01', to: '2025-03-01' },
      observedAt: '2025-02-05T00:00:00.000Z',
    });
    await t.store.append(k.stream, [k.event]);

    const corrected = mkdtempSync(path.join(t.out, 'correction-'));
    const out = await statements(corrected);
    expect(out).not.toContain('unchanged');
    expect(out).toMatch(/a correction of the statements issued on \d{4}-\d{2}-\d{2}/);
    const a = await summary(corrected);
    expect(a.get('Payout statement')).toBe('Statement no. 0002');
    expect(a.get('= Amount due on this correction')).toBe(300);
  });
});
