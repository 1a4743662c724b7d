import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderDetail } from '../../src/reconciliation/orders/queries';
import { appendAll, subMerchant } from '../discrepancies/fixtures';
import { betaOrder, betaPayment, projectOrders } from '../orders/support';
import { type CollatedDatabase, createCollatedDatabase } from '../support/collated-db';

/**
 * Review 16: an order's payments (`recon orders show`, the order in `recon explain`) were listed by time, then
 * by payment id in the database server's collation: on an operator's server collating in en-US (DATABASE_URL)
 * two payments of one time came as "pay-b", "PAY-C", on the embedded server (C) the other way round. They
 * follow the code unit order now, as the statements do.
 */

const PAYMENTS = ['pay-b', 'PAY-C', 'pay-a'];
const byCodeUnit = (xs: readonly string[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const made: CollatedDatabase[] = [];
afterAll(async () => {
  for (const d of made) await d.drop();
});

async function payments(locale: 'C' | 'icu'): Promise<string[]> {
  const d = await createCollatedDatabase(locale);
  made.push(d);
  await appendAll(d.store, [
    subMerchant('sm-b', 'Beta Store'),
    betaOrder('order-1', '2024-03-10T09:00:00Z'),
    ...PAYMENTS.map((id) => betaPayment(id, 'order-1', '2024-03-10T10:00:00.000Z', '2024-03-11T00:00:00.000Z')),
  ]);
  await projectOrders(d.sql, d.store);
  const detail = await orderDetail(d.sql, 'order-1');
  return (detail?.payments ?? []).map((p) => String(p.payment_id));
}

describe("review16: an order's payments on a server that collates by locale", () => {
  let c: string[];
  beforeAll(async () => {
    c = await payments('C');
  }, 120_000);

  it('are listed by payment id in code unit order on the C server', () => {
    expect(c).toEqual(byCodeUnit(PAYMENTS));
  });

  it('are listed in the same order on an en-US (ICU) server', async () => {
    expect(await payments('icu')).toEqual(c);
  }, 120_000);
});
