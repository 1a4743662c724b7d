import { readdirSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { registerObserved } from '../../src/ingest/observations';
import { useStatementTest } from './support';

/**
 * Two receivers unknown to the directory whose names differ only in characters outside A-Za-z0-9._- (any
 * two Cyrillic names of the same length) once got the same statement file name, and the second statement
 * overwrote the first.
 */

const POS = 'pos-s';
const t = useStatementTest({ pos: POS, outPrefix: 'recon-review-statements-' });
const row = (paymentId: string, receiver: string, amount: bigint) =>
  t.sale(paymentId, '2025-01-10T10:00:00.000Z', receiver, amount, { currency: 'UAH' });

describe('statements of receivers unknown to the directory', () => {
  it('two unknown receivers never share a statement file', async () => {
    for (const [pid, name, amount] of [
      ['p-kafe', 'Кафе', 1_000n],
      ['p-salo', 'Сало', 2_000n],
    ] as const) {
      const r = row(pid, name, amount);
      const k = registerObserved(POS, JSON.stringify(r), r, {
        source: 'register',
        reportId: 'rep',
        window: { from: '2025-01-01', to: '2025-01-31' },
        observedAt: '2025-02-01T00:00:00.000Z',
      });
      await t.store.append(k.stream, [k.event]);
    }
    await t.settle();
    const r = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    expect(r.statements).toBe(2);
    const statementFiles = r.files.filter(
      (f) => f.subMerchantId !== undefined && f.name.endsWith('.xlsx') && !f.financeOnly,
    );
    // one file per statement, each still holding its own sub-merchant (finance's audit files beside them)
    const onDisk = readdirSync(t.out).filter(
      (f) => f.endsWith('.xlsx') && !f.startsWith('payouts-') && !f.endsWith('-audit.xlsx'),
    );
    const ids: string[] = [];
    for (const f of onDisk) {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path.join(t.out, f));
      wb.getWorksheet('Summary')!.eachRow((row) => {
        if (row.getCell(1).value === 'Sub-merchant') ids.push(`receiver:${String(row.getCell(2).value)}`);
      });
    }
    expect({
      names: new Set(statementFiles.map((f) => f.name)).size,
      filesOnDisk: onDisk.length,
      idsOnDisk: ids.sort(),
    }).toEqual({ names: 2, filesOnDisk: 2, idsOnDisk: ['receiver:Кафе', 'receiver:Сало'] });
  });
});
