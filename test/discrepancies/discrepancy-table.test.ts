import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { runProjections } from '../../src/projector/runner';
import {
  acceptDiscrepancy,
  discrepanciesCsv,
  discrepanciesTable,
  discrepancyJson,
  isKnownSubMerchant,
  listDiscrepancies,
  sortDiscrepancies,
  subMerchantNames,
  subMerchantsOf,
  type DiscrepancyRecord,
} from '../../src/reconciliation/discrepancy-queries';
import { whatDiffers } from '../../src/reconciliation/discrepancy-summary';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from './fixtures';

/**
 * What an operator reads in `recon discrepancies` (and the CSV and API): the amount, the order, every
 * sub-merchant the discrepancy touches by name, and what differs with each source's value and the difference;
 * sorted by amount or age. `accept` refuses a resolved discrepancy.
 */

let db: TestDatabase;
let store: EventStore;
let rows: DiscrepancyRecord[];

const T1 = at('2024-05-10T08:00:00Z');
const T2 = at('2024-05-10T09:00:00Z');
const T3 = at('2024-05-10T07:00:00Z');
const OBSERVED = at('2024-05-10T20:00:00Z');

async function project(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(
      {
        sql: db.sql,
        store,
        log: silentLogger,
        timezone: 'UTC',
        graceHours: 48,
        projections: [reconciliation, journal],
      },
      {},
    );
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const byType = (type: string) => rows.find((d) => d.type === type)!;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    subMerchant('sm-beta', 'Beta Shop'),
    // two receivers; the period states another merchant fee, the webhook another amount
    registerRows({
      paymentId: 'pay-m',
      orderId: 'ORDER-M',
      dateTime: T1,
      amount: 100_00n,
      receivers: [
        { name: 'Alpha Shop', amount: 59_00n, fee: 1_00n },
        { name: 'Beta Shop', amount: 40_00n, fee: 0n },
      ],
      reportId: 'r1',
      observedAt: OBSERVED,
    }),
    periodRow({
      paymentId: 'pay-m',
      orderId: 'ORDER-M',
      dateTime: T1,
      amount: 100_00n,
      merchantFee: 2_00n,
      reportId: 'r1',
      observedAt: OBSERVED,
    }),
    webhook({ paymentId: 'pay-m', orderId: 'ORDER-M', processedAt: T1, amount: 90_00n, fee: 1_00n, receivedAt: T1 }),
    // shares 40.00 of an amount of 50.00
    registerRows({
      paymentId: 'pay-s',
      orderId: 'ORDER-S',
      dateTime: T2,
      amount: 50_00n,
      receivers: [{ name: 'Alpha Shop', amount: 40_00n, fee: 0n }],
      reportId: 'r1',
      observedAt: OBSERVED,
    }),
    periodRow({
      paymentId: 'pay-s',
      orderId: 'ORDER-S',
      dateTime: T2,
      amount: 50_00n,
      merchantFee: 0n,
      reportId: 'r1',
      observedAt: OBSERVED,
    }),
    webhook({ paymentId: 'pay-s', orderId: 'ORDER-S', processedAt: T2, amount: 50_00n, fee: 0n, receivedAt: T2 }),
    // not in the register when the window was synced: missing_in_report, resolved below when the row comes
    periodRow({
      paymentId: 'pay-late',
      orderId: 'ORDER-L',
      dateTime: T3,
      amount: 7_00n,
      merchantFee: 0n,
      reportId: 'r1',
      observedAt: OBSERVED,
    }),
    webhook({ paymentId: 'pay-late', orderId: 'ORDER-L', processedAt: T3, amount: 7_00n, fee: 0n, receivedAt: T3 }),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r1',
    }),
  ]);
  await project();
  const r = await listDiscrepancies(db.sql, { timezone: 'UTC' });
  if (!r.ok) throw new Error(r.message);
  rows = r.value;
});

afterAll(async () => {
  await db?.drop();
});

describe('recon discrepancies', () => {
  it('lists every sub-merchant an operation-level discrepancy touches (table, CSV, API)', async () => {
    const amount = byType('amount_mismatch');
    expect(subMerchantsOf(amount)).toEqual(['sm-alpha', 'sm-beta']);
    expect(discrepancyJson(amount).sub_merchant_ids).toEqual(['sm-alpha', 'sm-beta']);
    const csv = discrepanciesCsv([amount]).split('\r\n');
    const header = csv[0]!.split(',');
    expect(header.slice(-2)).toEqual(['sub_merchant_ids', 'what_differs']);
    expect(csv[1]).toContain(',sm-alpha sm-beta,');
    const names = await subMerchantNames(db.sql, subMerchantsOf(amount));
    expect(discrepanciesTable([amount], names)).toContain('Alpha Shop, Beta Shop');
  });

  it('says what differs, with each source’s value and the difference', () => {
    expect(whatDiffers(byType('amount_mismatch'))).toBe(
      'amount: register 100.00 UAH, period 100.00 UAH, webhook 90.00 UAH; difference 10.00 UAH',
    );
    expect(whatDiffers(byType('fee_mismatch'))).toBe(
      'merchant fee: register 1.00 UAH, period 2.00 UAH, webhook 1.00 UAH; difference 1.00 UAH',
    );
    expect(whatDiffers(byType('split_mismatch'))).toBe(
      'receivers’ shares 40.00 UAH, amount 50.00 UAH; difference -10.00 UAH',
    );
  });

  it('prints amount, order id, sub-merchants and what differs; sorted by amount or by age', async () => {
    const names = await subMerchantNames(db.sql, [...new Set(rows.flatMap(subMerchantsOf))]);
    const table = discrepanciesTable(sortDiscrepancies(rows, 'amount'), names).split('\n');
    expect(table[0]).toMatch(
      /^\s*amount\s+order_id\s+sub-merchant\s+type\s+status\s+operation time\s+what differs\s+id$/,
    );
    expect(table[1]).toMatch(/^100\.00 UAH\s+ORDER-M\s+Alpha Shop, Beta Shop\s+/);
    const amounts = sortDiscrepancies(rows, 'amount').map((d) => d.payment_id);
    expect(amounts.indexOf('pay-m')).toBeLessThan(amounts.indexOf('pay-s'));
    expect(amounts.indexOf('pay-s')).toBeLessThan(amounts.indexOf('pay-late'));
    const ages = sortDiscrepancies(rows, 'age').map((d) => d.payment_id);
    expect(ages[0]).toBe('pay-late');
    expect(ages.at(-1)).toBe('pay-s');
  });

  it('knows which --sub-merchant ids the directory has (an unknown one is warned about)', async () => {
    expect(await isKnownSubMerchant(db.sql, 'sm-alpha')).toBe(true);
    expect(await isKnownSubMerchant(db.sql, 'sm-alhpa')).toBe(false);
  });

  it('accept refuses a resolved discrepancy', async () => {
    const missing = byType('missing_in_report');
    expect(missing.status).toBe('open');
    await appendAll(store, [
      registerRows({
        paymentId: 'pay-late',
        orderId: 'ORDER-L',
        dateTime: T3,
        amount: 7_00n,
        receivers: [{ name: 'Beta Shop', amount: 7_00n, fee: 0n }],
        reportId: 'r2',
        observedAt: at('2024-05-13T01:00:00Z'),
      }),
    ]);
    await project();
    const r = await acceptDiscrepancy(
      { sql: db.sql, store },
      { id: missing.id, note: 'late row', by: 'auditor', at: new Date('2024-05-14T00:00:00Z') },
    );
    expect(r).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });
    expect(await store.readStream(`discrepancy-${missing.id}`)).toEqual([]);
  });
});
