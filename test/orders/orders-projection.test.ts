import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import {
  POS,
  appendAll,
  project,
  registerRows,
  subMerchant,
  syncCompleted,
  type Receiver,
} from '../discrepancies/fixtures';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { ordersReportData } from '../../src/export/nightly/orders-sheet';
import { nightlyReportData, writeNightlyReport } from '../../src/export/nightly/report';
import { explain } from '../../src/reconciliation/explain';
import { explanationText } from '../../src/reconciliation/explain-text';
import { createOrdersApi } from '../../src/http/orders-api';
import { createHttpApp } from '../../src/http/http-app';
import { asyncRoute } from '../../src/http/routes';
import { silentLogger } from '../../src/log';
import { GRACE, feeLine, order, orderDiscrepancies, projectOrders, rebuildOrders, snapshot } from './support';

/**
 * Orders against the PSP's register, each order or payment carrying one difference (issue 17). Contract:
 * sm-a pays 1.5 % + 1.00 on purchases in UAH, everyone else the default 2 %, rounded half-up.
 */
const CREATED = '2024-03-01T08:00:00.000Z';
const T = (h: number) => `2024-03-01T${String(h).padStart(2, '0')}:00:00.000Z`;
const SEEN = '2024-03-01T23:30:00.000Z';
const LATER = '2024-03-04T01:00:00.000Z'; // 65 h after the payments: past the 48 h grace

const NAMES: Record<string, string> = { 'sm-a': 'Alpha Shop', 'sm-b': 'Beta Store', 'sm-c': 'Gamma Goods' };
const fee = (sm: string, share: bigint) => {
  if (sm !== 'sm-a') return (share * 2n + 50n) / 100n;
  const p = share * 15n;
  return 100n + p / 1000n + ((p % 1000n) * 2n >= 1000n ? 1n : 0n);
};
const part = (sm: string, share: bigint, charged?: bigint): Receiver => {
  const f = charged ?? fee(sm, share);
  return { name: NAMES[sm]!, amount: share - f, fee: f };
};
const pay = (paymentId: string, orderId: string, hour: number, amount: bigint, receivers: Receiver[]) =>
  registerRows({ paymentId, orderId, dateTime: T(hour), amount, receivers, reportId: 'r1', observedAt: SEEN });
const placed = (orderId: string, amount: string, split: string, extra: Record<string, string> = {}) =>
  order({ order_id: orderId, amount, currency: 'UAH', created_at: CREATED, split, ...extra });

let db: TestDatabase;
let store: EventStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('sm-a', NAMES['sm-a']!),
    subMerchant('sm-b', NAMES['sm-b']!),
    subMerchant('sm-c', NAMES['sm-c']!),
    feeLine({
      subMerchantId: '*',
      method: 'purchase',
      currency: 'UAH',
      percent: '2',
      fixed: '0',
      effectiveFrom: '2024-01-01',
      rounding: 'half_up',
    }),
    feeLine({
      subMerchantId: 'sm-a',
      method: 'purchase',
      currency: 'UAH',
      percent: '1.5',
      fixed: '100',
      effectiveFrom: '2024-01-01',
      rounding: 'half_up',
    }),
    // the payment arrives before its order
    pay('pay-early', 'ord-early', 9, 30_00n, [part('sm-b', 30_00n)]),
    placed('ord-ok', '100.00', 'sm-a:60.00;sm-b:40.00'),
    placed('ord-unpaid', '10.00', 'sm-b:10.00'),
    placed('ord-amount', '50.00', ''),
    placed('ord-receiver', '30.00', 'sm-a:30.00'),
    placed('ord-part', '100.00', 'sm-a:60.00;sm-b:40.00'),
    placed('ord-fee-above', '20.00', 'sm-b:20.00'),
    placed('ord-fee-below', '20.00', 'sm-b:20.00'),
    placed('ord-amended', '100.00', 'sm-a:60.00;sm-b:40.00'),
    placed('ord-amended', '80.00', 'sm-a:48.00;sm-b:32.00', { amended_at: '2024-03-01T08:30:00Z' }),
    placed('ord-cancelled', '15.00', 'sm-b:15.00'),
    order({ order_id: 'ord-cancelled', cancelled_at: '2024-03-01T08:45:00Z' }),
    pay('pay-ok', 'ord-ok', 9, 100_00n, [part('sm-a', 60_00n), part('sm-b', 40_00n)]),
    pay('pay-amount', 'ord-amount', 10, 49_00n, []),
    pay('pay-receiver', 'ord-receiver', 10, 30_00n, [part('sm-c', 30_00n)]),
    pay('pay-part', 'ord-part', 11, 100_00n, [part('sm-a', 61_00n), part('sm-b', 39_00n)]),
    pay('pay-fee-above', 'ord-fee-above', 11, 20_00n, [part('sm-b', 20_00n, 50n)]),
    pay('pay-fee-below', 'ord-fee-below', 12, 20_00n, [part('sm-b', 20_00n, 30n)]),
    pay('pay-orphan', 'ord-orphan', 12, 25_00n, [part('sm-b', 25_00n)]),
    pay('pay-amended', 'ord-amended', 12, 80_00n, [part('sm-a', 48_00n), part('sm-b', 32_00n)]),
    pay('pay-cancelled', 'ord-cancelled', 13, 15_00n, [part('sm-b', 15_00n)]),
    placed('ord-early', '30.00', 'sm-b:30.00'),
  ]);
  await projectOrders(db.sql, store);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('orders against the PSP, within the grace period', () => {
  it('finds the differences the register shows now, and nothing that waits for the grace period', async () => {
    const found = (await orderDiscrepancies(db.sql)).map((d) => `${d.type} ${d.order_id} ${d.status}`);
    expect(found).toEqual([
      'amount_differs_from_order ord-amount open',
      'fee_above_contract ord-fee-above open',
      'fee_below_contract ord-fee-below open',
      'split_differs_from_order ord-part open',
      'split_differs_from_order ord-receiver open',
    ]);
  });

  it('gives both sides and the difference', async () => {
    const d = await orderDiscrepancies(db.sql);
    const amount = d.find((x) => x.type === 'amount_differs_from_order')!;
    expect(amount.values).toMatchObject({ order_amount: '5000', psp_amount: '4900', difference: '-100' });
    const above = d.find((x) => x.type === 'fee_above_contract')!;
    expect(above.values).toMatchObject({ part: '2000', expected_fee: '40', charged_fee: '50', difference: '10' });
    expect(above.sub_merchant_id).toBe('sm-b');
    const below = d.find((x) => x.type === 'fee_below_contract')!;
    expect(below.values).toMatchObject({ expected_fee: '40', charged_fee: '30', difference: '-10' });
    const receiver = d.find((x) => x.order_id === 'ord-receiver')!;
    expect(receiver.values.parts).toEqual([
      {
        sub_merchant_id: 'sm-a',
        receiver_name: null,
        issue: 'not_paid',
        order_amount: '3000',
        psp_amount: null,
        difference: '-3000',
      },
      {
        sub_merchant_id: 'sm-c',
        receiver_name: 'Gamma Goods',
        issue: 'not_ordered',
        order_amount: null,
        psp_amount: '3000',
        difference: '3000',
      },
    ]);
    const parts = d.find((x) => x.order_id === 'ord-part')!;
    expect((parts.values.parts as { issue: string; difference: string }[]).map((p) => [p.issue, p.difference])).toEqual(
      [
        ['part_amount', '100'],
        ['part_amount', '-100'],
      ],
    );
  });

  it('matches each order to its payment once, amendments and late orders included', async () => {
    const rows = await db.sql<
      { order_id: string; state: string; amount: bigint; matched_payment_id: string | null; versions: number }[]
    >`
      select order_id, state, amount, matched_payment_id, versions from recon.orders order by order_id`;
    const by = new Map(rows.map((r) => [r.order_id, r]));
    expect(by.get('ord-amended')).toMatchObject({
      state: 'matched',
      amount: 8000n,
      matched_payment_id: 'pay-amended',
      versions: 2,
    });
    expect(by.get('ord-early')).toMatchObject({ state: 'matched', matched_payment_id: 'pay-early' });
    expect(by.get('ord-unpaid')).toMatchObject({ state: 'awaiting_psp', matched_payment_id: null });
    expect(by.get('ord-cancelled')).toMatchObject({ state: 'cancelled', matched_payment_id: null });
    const orphan = await db.sql`select role from recon.order_payments where payment_id = 'pay-orphan'`;
    expect(orphan).toEqual([{ role: 'no_order' }]);
  });
});

describe('after the grace period', () => {
  beforeAll(async () => {
    await appendAll(store, [syncCompleted({ from: T(0), to: LATER, completedAt: LATER, reportId: 'r2' })]);
    await projectOrders(db.sql, store);
  });

  it('adds the order the PSP never saw and the payments with no order standing', async () => {
    const found = (await orderDiscrepancies(db.sql)).map((d) => `${d.type} ${d.order_id} ${d.payment_id}`);
    expect(found).toContain('order_not_at_psp ord-unpaid null');
    expect(found).toContain('payment_without_order ord-orphan pay-orphan');
    expect(found).toContain('payment_without_order ord-cancelled pay-cancelled');
    expect(found.filter((f) => f.startsWith('order_not_at_psp') || f.startsWith('payment_without_order'))).toHaveLength(
      3,
    );
  });

  it('resolves order_not_at_psp when the payment arrives, by that event', async () => {
    const late = pay('pay-unpaid', 'ord-unpaid', 14, 10_00n, [part('sm-b', 10_00n)]);
    await appendAll(store, [late]);
    await projectOrders(db.sql, store);
    const [d] = (await orderDiscrepancies(db.sql)).filter((x) => x.type === 'order_not_at_psp');
    expect(d!.status).toBe('resolved');
    expect(d!.resolved_by_event).toBe(late.events[0]!.id);
  });

  it("the nightly report's Orders and Fee differences sheets", async () => {
    const data = await ordersReportData(db.sql, {
      from: new Date('2024-03-01T00:00:00Z'),
      to: new Date('2024-03-02T00:00:00Z'),
      timezone: 'UTC',
    });
    expect(data?.day).toEqual([
      {
        currency: 'UAH',
        orders: 10,
        amount: 455_00n,
        matched: 9,
        awaitingPsp: 0,
        notAtPsp: 0,
        cancelled: 1,
        paymentsWithoutOrder: 2,
        // without order 25.00 + 15.00, amount 1.00, wrong receiver 30.00 + 30.00, parts 1.00 + 1.00, fees 0.10 + 0.10
        inDoubt: 103_20n,
      },
    ]);
    expect(data?.fees).toEqual([
      { subMerchantId: 'sm-b', month: '2024-03', currency: 'UAH', above: 1, below: 1, difference: 0n },
    ]);
    await project(db.sql, store); // the reconciliation views the rest of the report reads
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'recon-orders-report-')), 'nightly.xlsx');
    await writeNightlyReport(file, {
      ...(await nightlyReportData({ sql: db.sql, store }, { date: '2024-03-01', timezone: 'UTC', graceHours: GRACE })),
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const sheet = wb.getWorksheet('Orders')!;
    expect(sheet.getRow(2).values).toEqual([undefined, 'UAH', 10, 455, 9, 0, 0, 1, 2, 103.2]);
    expect(wb.getWorksheet('Fee differences')!.getRow(2).values).toEqual([
      undefined,
      'sm-b',
      '2024-03',
      'UAH',
      1,
      1,
      0,
    ]);
  });

  it('recon explain ORDER_ID shows the order beside the PSP observations; auditors read it over HTTP', async () => {
    const x = await explain({ sql: db.sql, store, posIds: [POS] }, 'ord-amount');
    expect(x.order?.order).toMatchObject({
      order_id: 'ord-amount',
      state: 'matched',
      amount: '5000',
      psp_amount: '4900',
    });
    expect(x.events.map((e) => e.type)).toEqual(expect.arrayContaining(['OrderPlaced', 'RegisterRecordObserved']));
    const text = explanationText(x);
    expect(text).toContain('order ord-amount: open, matched; 5000 UAH');
    expect(text).toContain('amount_differs_from_order open');
    expect(explanationText(await explain({ sql: db.sql, store, posIds: [POS] }, 'no-such-order'))).toBe(
      'nothing known about no-such-order\n',
    );

    const api = createOrdersApi({
      store,
      token: 'orders-token-0123456789',
      sql: db.sql,
      auditorToken: 'auditor-token-0123456789',
    });
    const app = createHttpApp({ routes: [asyncRoute('/api/orders', api, silentLogger)], log: silentLogger });
    const { url } = await app.listen(0);
    try {
      const get = (id: string, token: string) =>
        fetch(`${url}/api/orders/${id}`, { headers: { authorization: `Bearer ${token}` } });
      const r = await get('ord-receiver', 'auditor-token-0123456789');
      expect(r.status).toBe(200);
      const body = (await r.json()) as {
        order: { state: string };
        payments: { role: string }[];
        discrepancies: { type: string }[];
      };
      expect(body.order.state).toBe('matched');
      expect(body.payments.map((p) => p.role)).toEqual(['claimed']);
      expect(body.discrepancies.map((d) => d.type)).toEqual(['split_differs_from_order']);
      expect((await get('ord-receiver', 'orders-token-0123456789')).status).toBe(401);
      expect((await get('nope', 'auditor-token-0123456789')).status).toBe(404);
    } finally {
      await app.close({ graceMs: 1000 });
    }
  });

  it('re-importing the same orders changes nothing', async () => {
    const before = await snapshot(db.sql);
    const r = await store.appendMany([placed('ord-ok', '100.00', 'sm-a:60.00;sm-b:40.00')]);
    expect(r[0]!.duplicates).toBe(1);
    await projectOrders(db.sql, store);
    expect(await snapshot(db.sql)).toBe(before);
  });

  it('judging an order again with nothing new leaves its open discrepancy as it was', async () => {
    const [before] = (await orderDiscrepancies(db.sql)).filter((d) => d.type === 'amount_differs_from_order');
    // a directory event judges every order again, from the rows stored by an earlier batch (values read back from jsonb)
    await appendAll(store, [subMerchant('sm-z', 'Zeta Works')]);
    await projectOrders(db.sql, store);
    const [after] = (await orderDiscrepancies(db.sql)).filter((d) => d.type === 'amount_differs_from_order');
    expect(after).toEqual(before);
  });

  it('a replay from zero in any batch size gives the same rows', async () => {
    const live = await snapshot(db.sql);
    for (const size of [1, 7, 1000]) {
      await rebuildOrders(db.sql, store, size);
      expect(await snapshot(db.sql)).toBe(live);
    }
  }, 120_000);
});
