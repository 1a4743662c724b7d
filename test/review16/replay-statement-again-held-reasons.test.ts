import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { payouts } from '../payouts/support';
import { useTestStore } from '../support/db';

/**
 * A month's statements issued again with nothing changed (the same cut: "the same statements written again") are
 * the same files. The held items of a run recorded at that cut were read back with their reasons rebuilt from the
 * discrepancy's type alone, so what a review had added ("(reviewed: withheld)") was dropped the second time: the
 * workbook and the PDF differed from the ones sent.
 */

const fx = useTestStore();
const dirs = [1, 2].map((n) => mkdtempSync(path.join(tmpdir(), `recon-review16-again-${n}-`)));
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC' });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({ ...deps(), graceHours: 48, projections: [journal, reconciliation, payouts] });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function sale(paymentId: string, amount: bigint, status: 'success' | 'failure') {
  const dateTime = at('2024-03-10T10:00:00Z');
  const observedAt = at('2024-03-10T23:00:00Z');
  return [
    registerRows({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      receivers: [{ name: 'Alpha Shop', amount, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt,
    }),
    periodRow({ paymentId, dateTime, amount: amount + 1_00n, status, reportId: 'rep-1', observedAt }),
  ];
}

async function heldReasons(file: string): Promise<string[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const sheet = wb.worksheets.find((w) => w.name === 'Held pending investigation')!;
  const out: string[] = [];
  sheet.eachRow((row) =>
    row.eachCell((cell) => {
      if (typeof cell.value === 'string' && cell.value.startsWith('the payment')) out.push(cell.value);
    }),
  );
  return out;
}

describe('statements issued again at the same cut', () => {
  it('are the same files, a held item still showing what its review decided', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sale('pay-ok', 100_00n, 'success'),
      ...sale('pay-held', 50_00n, 'failure'),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 2,
      }),
    ]);
    await settle();
    const [d] = await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where type = 'status_mismatch' and payment_id = 'pay-held'`;
    const decided = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: d!.id, note: 'the sale failed', by: 'olena', at: new Date('2024-04-02T09:00:00Z'), decision: 'withhold' },
    );
    expect(decided.ok).toBe(true);
    await settle();

    const first = await issueStatements(deps(), { month: '2024-03', outDir: dirs[0]! });
    await settle();
    const again = await issueStatements(deps(), { month: '2024-03', outDir: dirs[1]! });
    expect(again.position).toBe(first.position);
    expect(again.newEvent).toBe(false);
    expect(again.reproduces).toBeDefined();

    const workbook = first.files.find((f) => f.subMerchantId === 'SM-A' && !f.financeOnly && f.name.endsWith('.xlsx'))!;
    expect(await heldReasons(workbook.path)).toEqual([
      "the payment's status differs between the payment provider's reports (reviewed: withheld)",
    ]);
    expect(again.files.map((f) => path.basename(f.path))).toEqual(first.files.map((f) => path.basename(f.path)));
    for (const f of first.files) {
      const name = path.basename(f.path);
      expect(readFileSync(path.join(dirs[1]!, name)).equals(readFileSync(f.path)), name).toBe(true);
    }
  });
});
