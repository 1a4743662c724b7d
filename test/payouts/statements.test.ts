import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { statementFile } from '../export/statement-files';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { parsePosition } from '../../src/store/types';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { bank, booked, payouts } from './support';

/**
 * Holds and payouts on the statements, from real events through the three projections: money under a
 * status mismatch is held and released on the first statement after the discrepancy is resolved or accepted
 * to pay; withheld when accepted to withhold; an unregistered receiver is never due until registered; a payout
 * found in the bank comes off the closing, and the next month opens at it with nothing to adjust.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-holds-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({
      ...deps(),
      graceHours: 48,
      bank,
      projections: [journal, reconciliation, payouts],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const alpha = (amount: bigint) => [{ name: 'Alpha Shop', amount, fee: 1_00n }];
/** a register row of Alpha Shop's sale and the period record of it (status as given) */
function sale(paymentId: string, amount: bigint, periodStatus: 'success' | 'failure', receiver = 'Alpha Shop') {
  const dateTime = at('2024-03-10T10:00:00Z');
  return [
    registerRows({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      receivers: receiver === 'Alpha Shop' ? alpha(amount) : [{ name: receiver, amount, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    periodRow({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      status: periodStatus,
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
  ];
}
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };

async function summary(file: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(out, file));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  const held = wb.getWorksheet('Held pending investigation')!;
  rows.set(
    'held rows',
    // order, payment, date, reason, currency, amount: kept as payment, reason, currency, amount
    held
      .getSheetValues()
      .flatMap((r) =>
        Array.isArray(r) && r[1] && r[1] !== 'Order' && r[1] !== 'Total' ? [[r[2], r[4], r[5], r[6]]] : [],
      ),
  );
  return rows;
}

const issuedPayouts = async (month: string) => {
  const events = await fx.store.readStream(statementStream(month));
  return dataOf(StatementIssued, events[events.length - 1]!).payouts!;
};
const AMOUNT_DUE = '= Amount due (adjustments + net payable − held + released)';
const CLOSING = 'Closing balance (opening + adjustments + net payable − paid out)';

describe('holds and payouts on the statements', () => {
  it('holds money under status mismatches and an unregistered receiver; amount_due excludes it', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sale('pay-ok', 100_00n, 'success'),
      ...sale('pay-s1', 50_00n, 'failure'),
      ...sale('pay-s2', 30_00n, 'failure'),
      ...sale('pay-s3', 20_00n, 'failure'),
      ...sale('pay-m', 40_00n, 'success', 'Mystery Goods'),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 5 }),
    ]);
    await settle();
    const open = await fx.db.sql<{ type: string; payment_id: string }[]>`
      select type, payment_id from recon.discrepancies where status = 'open' order by payment_id, type`;
    expect(open.map((d) => `${d.type}:${d.payment_id}`)).toEqual([
      'unknown_sub_merchant:pay-m',
      'status_mismatch:pay-s1',
      'status_mismatch:pay-s2',
      'status_mismatch:pay-s3',
    ]);
    await issueStatements(deps(), { month: '2024-03', outDir: out });
    const s = await summary(statementFile(out, 'SM-A', '2024-03'));
    expect(s.get('= Net payable (sum of the six movements above)')).toBe(200);
    expect(s.get('− Held pending investigation (sheet Held pending investigation)')).toBe(-100);
    expect(s.get(AMOUNT_DUE)).toBe(100);
    expect(s.get(CLOSING)).toBe(200); // held money is still owed
    const held = s.get('held rows') as unknown[][];
    expect(held.map((r) => r[3]).sort()).toEqual([20, 30, 50]);
    expect(new Set(held.map((r) => r[1]))).toEqual(
      new Set(["the payment's status differs between the payment provider's reports"]),
    );
    expect(held.every((r) => /^pay-/.test(String(r[0])))).toBe(true);
    const recorded = await issuedPayouts('2024-03');
    expect(recorded.map((p) => [p.subMerchantId, p.reference, p.amountDue, p.held, p.payable])).toEqual([
      ['SM-A', 'RS-SM-A-2024-03-UAH', '10000', '10000', '10000'],
      ['receiver:Mystery Goods', null, '0', '4000', '0'],
    ]);
  });

  it('releases what was resolved or accepted to pay, keeps what is withheld, pays a registered receiver', async () => {
    const ids = await fx.db.sql<{ id: string; payment_id: string }[]>`
      select id::text, payment_id from recon.discrepancies where type = 'status_mismatch'`;
    const idOf = (p: string) => ids.find((d) => d.payment_id === p)!.id;
    const accept = (id: string, decision?: 'pay' | 'withhold') =>
      acceptDiscrepancy(
        { sql: fx.db.sql, store: fx.store },
        {
          id,
          note: 'checked with the PSP',
          by: 'Olena',
          at: new Date('2024-04-02T09:00:00Z'),
          ...(decision ? { decision } : {}),
        },
      );
    expect(await accept(idOf('pay-s1'))).toMatchObject({ ok: false, code: 'DECISION_REQUIRED' });
    expect((await accept(idOf('pay-s1'), 'pay')).ok).toBe(true);
    expect((await accept(idOf('pay-s2'), 'withhold')).ok).toBe(true);
    await appendAll(fx.store, [
      // the PSP reports pay-s3 as a success after all: resolved
      periodRow({
        paymentId: 'pay-s3',
        dateTime: at('2024-03-10T10:00:00Z'),
        amount: 21_00n,
        status: 'success',
        reportId: 'rep-2',
        observedAt: at('2024-04-01T00:00:00Z'),
      }),
      syncCompleted({ ...day, completedAt: at('2024-04-01T00:00:00Z'), reportId: 'rep-2', announced: 5 }),
      subMerchant('SM-M', 'Mystery Goods'),
      // March's payout reaches the bank, referenced
      booked({
        bankRef: 'p1',
        amount: 100_00n,
        currency: 'UAH',
        bookingDate: '2024-04-05',
        remittance: 'Statement RS-SM-A-2024-03-UAH',
      }),
    ]);
    await settle();
    const [paid] = await fx.db.sql`select status, paid_out from recon.payouts where reference = 'RS-SM-A-2024-03-UAH'`;
    expect(paid).toEqual({ status: 'paid', paid_out: 100_00n });

    await issueStatements(deps(), { month: '2024-04', outDir: out });
    const a = await summary(statementFile(out, 'SM-A', '2024-04'));
    expect(a.get("Opening balance (the previous statement's closing)")).toBe(200);
    expect(a.get('− Held pending investigation (sheet Held pending investigation)')).toBe(-30);
    expect(a.get('+ Released from hold (held on the previous statement)')).toBe(100);
    expect(a.get(AMOUNT_DUE)).toBe(70);
    expect(a.get('− Paid out (sheet Paid out: dates and payout references)')).toBe(-100);
    expect(a.get(CLOSING)).toBe(100);
    const held = a.get('held rows') as unknown[][];
    expect(held).toEqual([['pay-s2', expect.stringContaining('(reviewed: withheld)'), 'UAH', 30]]);
    const m = await summary(statementFile(out, 'SM-M', '2024-04'));
    expect(m.get('+ Released from hold (held on the previous statement)')).toBe(40);
    expect(m.get(AMOUNT_DUE)).toBe(40);
    expect((await issuedPayouts('2024-04')).map((p) => [p.subMerchantId, p.reference, p.amountDue, p.held])).toEqual([
      ['SM-A', 'RS-SM-A-2024-04-UAH', '7000', '3000'],
      ['SM-M', 'RS-SM-M-2024-04-UAH', '4000', '0'],
    ]);

    // May opens at April's closing, the payout deducted: nothing to adjust
    await settle();
    const may = await issueStatements(deps(), { month: '2024-05', outDir: out });
    const smA = may.figures.find((f) => f.subMerchantId === 'SM-A')!;
    expect({ opening: smA.opening, adjustments: smA.adjustments, closing: smA.closing }).toEqual({
      opening: 100_00n,
      adjustments: 0n,
      closing: 100_00n,
    });

    // April issued again at its recorded position: the same holds, payouts and paid out, so the same run
    const [april] = await fx.store.readStream(statementStream('2024-04'));
    const again = await issueStatements(deps(), {
      month: '2024-04',
      outDir: out,
      atPosition: parsePosition(dataOf(StatementIssued, april!).position),
    });
    expect(again.newEvent).toBe(false);
    // March too, though two of its holds were released since: a cut holds what it held when first issued
    const [march] = await fx.store.readStream(statementStream('2024-03'));
    const marchAgain = await issueStatements(deps(), {
      month: '2024-03',
      outDir: out,
      atPosition: parsePosition(dataOf(StatementIssued, march!).position),
    });
    expect(marchAgain.newEvent).toBe(false);
    expect((await summary(statementFile(out, 'SM-A', '2024-03'))).get(AMOUNT_DUE)).toBe(100);
  });
});
