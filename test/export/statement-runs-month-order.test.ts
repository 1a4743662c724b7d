import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from '../faults/support/processes';
import { appendAll, booked, PAYOUTS_ACCOUNT } from '../payouts/support';
import { statementFile } from './statement-files';
import { TZ, useStatementTest } from './support';

/**
 * Statements may be issued for any months in any order (issue 25): October issued, November not, October's
 * payout booked in November, then a draft of December. The payout was made in a month no statement stated,
 * so neither October's closing nor any adjustment knew it; the run exited 70 with EXPORT_BRIDGE_MISMATCH
 * ("adjustments … add up to 0, figures say -…"). It is now deducted as paid out (listed on the Paid out sheet),
 * the bridge ties, and the amount due does not ask it back: it paid what October's statement asked. The same
 * for a payout the bank reported only after the next statement was issued.
 */

const t = useStatementTest({ pos: 'pos-order', outPrefix: 'recon-month-order-' });
const RUN_MS = 120_000;
let config: string;

afterAll(() => killAll());
beforeAll(async () => {
  config = path.join(t.out, 'recon.json');
  writeFileSync(
    config,
    JSON.stringify({ bank: { accounts: [{ id: PAYOUTS_ACCOUNT, currency: 'EUR', role: 'payouts' }] } }),
  );
  await t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n');
});

const env = () =>
  reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_LOG_LEVEL: 'error', RECON_CONFIG: config } });

async function recon(args: string[]) {
  const r = await runRecon(args, env(), RUN_MS);
  expect(r.code, `recon ${args.join(' ')}: ${r.stderr.slice(-2000)}`).toBe(0);
  return r.stdout;
}

async function sheets(dir: string, month: string, provisional: boolean) {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(dir, statementFile(dir, 'SM-A', month, provisional)));
  const prefix = provisional ? 'PROVISIONAL ' : '';
  const summary = new Map<string, unknown>();
  wb.getWorksheet(`${prefix}Summary`)!.eachRow((row) =>
    summary.set(String(row.getCell(1).value), row.getCell(2).value),
  );
  const rows = (name: string) =>
    (wb.getWorksheet(`${prefix}${name}`)?.getSheetValues() ?? []).flatMap((r) =>
      Array.isArray(r) ? [r.slice(1) as unknown[]] : [],
    );
  return { summary, paidOut: rows('Paid out').filter((r) => typeof r[3] === 'number' && r[0] !== 'Total') };
}

const month = (m: DateTime) => m.toFormat('yyyy-MM');
const BRIDGE = {
  opening: "Opening balance (the previous statement's closing)",
  notStated: '± Months never stated before (sheet Not stated before)',
  adjustments: '± Adjustments to earlier months (sheet Adjustments)',
  due: '= Amount due (adjustments + net payable − held + released)',
  dueGap: '= Amount due (adjustments + months never stated + net payable − held + released)',
  paidOut: '− Paid out (sheet Paid out: dates and payout references)',
  closing: 'Closing balance (opening + adjustments + net payable − paid out)',
  closingGap: 'Closing balance (opening + adjustments + months never stated + net payable − paid out)',
};

describe('statements of months in any order', () => {
  it('a month issued, the next not, its payout booked then: a draft of the month after ties', {
    timeout: 600_000,
  }, async () => {
    // the current month (not ended: a draft), the one before it never issued, the one before that issued
    const current = DateTime.now().setZone(TZ).startOf('month');
    const [issued, skipped] = [current.minus({ months: 2 }), current.minus({ months: 1 })];
    const at = (m: DateTime, day: number) => m.set({ day }).toUTC().toISO()!;
    await t.observe(t.sale('p1', at(issued, 10), 'Shop A', 1_000_00n), at(issued, 11));
    await t.observe(t.sale('p2', at(skipped, 12), 'Shop A', 200_00n), at(skipped, 13));
    const first = mkdtempSync(path.join(t.out, 'issued-'));
    await recon(['statements', '--month', month(issued), '--out', first]);
    // the payout of the month issued, booked in the month never issued
    await appendAll(t.store, [
      booked({
        bankRef: 'b1',
        amount: 1_000_00n,
        bookingDate: skipped.set({ day: 5 }).toISODate()!,
        remittance: `Payout RS-SM-A-${month(issued)}-EUR`,
      }),
    ]);
    await recon(['project']);

    const draft = mkdtempSync(path.join(t.out, 'draft-'));
    await recon(['statements', '--month', month(current), '--provisional', '--out', draft]);
    const s = await sheets(draft, month(current), true);
    // opens at what was issued; the month never stated brings its sale, which is due; the payout made in it paid
    // what the month issued asked, so it is paid out (listed), never asked back
    expect(s.summary.get(BRIDGE.opening)).toBe(1_000);
    expect(s.summary.get(BRIDGE.adjustments)).toBe(0);
    expect(s.summary.get(BRIDGE.notStated)).toBe(200);
    expect(s.summary.get(BRIDGE.dueGap)).toBe(200);
    expect(s.summary.get(BRIDGE.paidOut)).toBe(-1_000);
    expect(s.summary.get(BRIDGE.closingGap)).toBe(200);
    expect(s.paidOut.map((r) => [r[1], r[3]])).toEqual([[`RS-SM-A-${month(issued)}-EUR`, 1_000]]);
  });

  it('a payout the bank reported after the next month was issued: paid out on the month after, not asked back', {
    timeout: 600_000,
  }, async () => {
    await t.observe(t.sale('q1', '2025-01-10T10:00:00.000Z', 'Shop A', 500_00n), '2025-01-11T00:00:00.000Z');
    const dir = mkdtempSync(path.join(t.out, 'late-'));
    await recon(['statements', '--month', '2025-01', '--out', dir]);
    await t.observe(t.sale('q2', '2025-02-10T10:00:00.000Z', 'Shop A', 40_00n), '2025-02-11T00:00:00.000Z');
    await recon(['statements', '--month', '2025-02', '--out', dir]);
    // January's payout was made on 3 February, but the bank statement came in after February was issued
    await appendAll(t.store, [
      booked({ bankRef: 'b2', amount: 500_00n, bookingDate: '2025-02-03', remittance: 'RS-SM-A-2025-01-EUR' }),
    ]);
    await recon(['project']);
    await recon(['statements', '--month', '2025-03', '--out', dir]);
    const s = await sheets(dir, '2025-03', false);
    expect(s.summary.get(BRIDGE.opening)).toBe(540);
    expect(s.summary.get(BRIDGE.adjustments)).toBe(0);
    expect(s.summary.get(BRIDGE.due)).toBe(0); // February's 40.00 was asked on February's statement
    expect(s.summary.get(BRIDGE.paidOut)).toBe(-500);
    expect(s.summary.get(BRIDGE.closing)).toBe(40);
    expect(s.paidOut.map((r) => [r[1], r[3]])).toEqual([['RS-SM-A-2025-01-EUR', 500]]);
  });
});
