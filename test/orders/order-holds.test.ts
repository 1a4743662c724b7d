import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { statementFile } from '../export/statement-files';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { parsePosition } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { projection as orders } from '../../projections/orders';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { payouts } from '../payouts/support';
import { useTestStore } from '../support/db';
import { order } from './support';

/**
 * An open order discrepancy holds the money it concerns on the statement, like any discrepancy that puts money
 * in doubt (issue 17): a payment with no order and a payment split otherwise than ordered hold the receiver's
 * share, listed under "Held pending investigation" with a reason in plain words; accepting one needs a
 * decision (pay or withhold), and a statement issued again at its cut gives the same reasons.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-order-holds-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC' });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({
      ...deps(),
      graceHours: 48,
      projections: [journal, reconciliation, payouts, orders],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const PAID_AT = at('2024-03-10T10:00:00Z');
/** a payment the PSP reports (register and period report), its shares net of a 1.00 fee each */
function payment(paymentId: string, orderId: string, shares: Array<[string, bigint]>) {
  const total = shares.reduce((a, [, s]) => a + s, 0n);
  const seen = { reportId: 'rep-1', observedAt: at('2024-03-11T00:00:00Z') };
  return [
    registerRows({
      paymentId,
      orderId,
      dateTime: PAID_AT,
      amount: total,
      receivers: shares.map(([name, share]) => ({ name, amount: share - 1_00n, fee: 1_00n })),
      ...seen,
    }),
    periodRow({ paymentId, orderId, dateTime: PAID_AT, amount: total, status: 'success', ...seen }),
  ];
}
const placed = (orderId: string, amount: string, split: string) =>
  order({ order_id: orderId, amount, currency: 'UAH', created_at: '2024-03-10T09:00:00Z', split });

const AMOUNT_DUE = '= Amount due (adjustments + net payable − held + released)';
const HELD = '− Held pending investigation (sheet Held pending investigation)';

async function statement(file: string) {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(out, file));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  const held = wb
    .getWorksheet('Held pending investigation')!
    .getSheetValues()
    // order, payment, date, reason, currency, amount: kept as payment, reason, currency, amount
    .flatMap((r) =>
      Array.isArray(r) && r[1] && r[1] !== 'Order' && r[1] !== 'Total' ? [[r[2], r[4], r[5], r[6]]] : [],
    );
  return { rows, held: held as unknown[][] };
}

let ids: Record<string, string>;

beforeAll(async () => {
  await appendAll(fx.store, [
    subMerchant('SM-A', 'Alpha Shop'),
    subMerchant('SM-B', 'Beta Store'),
    placed('ord-ok', '101.00', 'SM-A:101.00'),
    ...payment('pay-ok', 'ord-ok', [['Alpha Shop', 101_00n]]),
    // the PSP took a payment the marketplace never ordered
    ...payment('pay-orphan', 'ord-orphan', [['Alpha Shop', 26_00n]]),
    // ordered 31.00 to Alpha and 20.00 to Beta; the PSP gave all 51.00 to Alpha
    placed('ord-split', '51.00', 'SM-A:31.00;SM-B:20.00'),
    ...payment('pay-split', 'ord-split', [['Alpha Shop', 51_00n]]),
    // past the grace period: a payment without an order stands
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: at('2024-03-14T00:00:00Z'),
      reportId: 'rep-1',
      announced: 3,
    }),
  ]);
  await settle();
  const rows = await fx.db.sql<{ id: string; type: string; payment_id: string }[]>`
    select id::text, type, payment_id from recon.order_discrepancies where status = 'open'`;
  ids = Object.fromEntries(rows.map((r) => [r.payment_id, r.id]));
}, 120_000);

describe('order discrepancies hold money on the statements', () => {
  it('finds the two order discrepancies and nothing on the PSP side', async () => {
    const order = await fx.db.sql<{ type: string; payment_id: string }[]>`
      select type, payment_id from recon.order_discrepancies where status = 'open' order by payment_id`;
    expect(order.map((d) => `${d.type}:${d.payment_id}`)).toEqual([
      'payment_without_order:pay-orphan',
      'split_differs_from_order:pay-split',
    ]);
    const psp = await fx.db.sql`select type from recon.discrepancies where status = 'open'`;
    expect(psp).toEqual([]);
  });

  it("holds the receiver's share of each, listed with a reason in plain words", async () => {
    await issueStatements(deps(), { month: '2024-03', outDir: out });
    const a = await statement(statementFile(out, 'SM-A', '2024-03'));
    expect(a.rows.get('= Net payable (sum of the six movements above)')).toBe(175); // 100 + 25 + 50
    expect(a.rows.get(HELD)).toBe(-75);
    expect(a.rows.get(AMOUNT_DUE)).toBe(100);
    expect(a.held.map((r) => [r[0], r[1], r[3]]).sort((x, y) => Number(x[2]) - Number(y[2]))).toEqual([
      ['pay-orphan', 'the payment matches no order of the marketplace', 25],
      ['pay-split', 'the split of the payment is not the split ordered', 50],
    ]);
    for (const [, reason] of a.held) expect(String(reason)).not.toMatch(/_|order_discrepanc|psp/i);
  });

  it('gives the same reasons when the statement is issued again at its cut', async () => {
    const [march] = await fx.store.readStream(statementStream('2024-03'));
    const again = await issueStatements(deps(), {
      month: '2024-03',
      outDir: out,
      atPosition: parsePosition(dataOf(StatementIssued, march!).position),
    });
    expect(again.newEvent).toBe(false);
    const a = await statement(statementFile(out, 'SM-A', '2024-03'));
    expect(a.held.map((r) => String(r[1])).sort()).toEqual([
      'the payment matches no order of the marketplace',
      'the split of the payment is not the split ordered',
    ]);
  });

  it('accepting one needs a decision; accepted to pay, its money is released on the next statement', async () => {
    const accept = (id: string, decision?: 'pay' | 'withhold') =>
      acceptDiscrepancy(
        { sql: fx.db.sql, store: fx.store },
        {
          id,
          note: 'the order was placed by phone',
          by: 'Olena',
          at: new Date('2024-04-02T09:00:00Z'),
          ...(decision ? { decision } : {}),
        },
      );
    expect(await accept(ids['pay-orphan']!)).toMatchObject({ ok: false, code: 'DECISION_REQUIRED' });
    expect((await accept(ids['pay-orphan']!, 'pay')).ok).toBe(true);
    expect((await accept(ids['pay-split']!, 'withhold')).ok).toBe(true);
    await appendAll(fx.store, [
      syncCompleted({
        from: at('2024-04-01T00:00:00Z'),
        to: at('2024-04-02T00:00:00Z'),
        completedAt: at('2024-04-03T00:00:00Z'),
        reportId: 'rep-2',
        announced: 0,
      }),
    ]);
    await settle();
    const status = await fx.db.sql<{ payment_id: string; status: string }[]>`
      select payment_id, status from recon.order_discrepancies order by payment_id`;
    expect(status).toEqual([
      { payment_id: 'pay-orphan', status: 'accepted' },
      { payment_id: 'pay-split', status: 'accepted' },
    ]);
    await issueStatements(deps(), { month: '2024-04', outDir: out });
    const a = await statement(statementFile(out, 'SM-A', '2024-04'));
    expect(a.rows.get('+ Released from hold (held on the previous statement)')).toBe(75);
    expect(a.rows.get(HELD)).toBe(-50);
    expect(a.held.map((r) => [r[0], r[1], r[3]])).toEqual([
      ['pay-split', 'the split of the payment is not the split ordered (reviewed: withheld)', 50],
    ]);
  });
});
