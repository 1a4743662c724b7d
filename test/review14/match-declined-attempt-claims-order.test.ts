import { describe, expect, it } from 'vitest';
import { registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { useTestStore } from '../support/db';
import { projectionSpec } from '../support/projection-spec';
import { deps, order, orderDiscrepancies } from '../orders/support';

/**
 * A checkout declined at the first card and paid with the second: two PSP payments carry the order's id, the
 * first `failure`, the second `success`. The earliest payment claimed the order whatever its status, so the
 * declined attempt was the order's payment ("matched", no money) and the 50.00 that was paid was a
 * payment_without_order ("second_payment"), held on Beta Store's statement although its order is right there.
 */

const fx = useTestStore();
const T = (h: number) => `2024-03-01T${String(h).padStart(2, '0')}:00:00.000Z`;
const SEEN = '2024-03-01T23:30:00.000Z';
const LATER = '2024-03-04T01:00:00.000Z';
const attempt = (paymentId: string, hour: number, status: 'failure' | 'success') =>
  registerRows({
    paymentId,
    orderId: 'ord-retry',
    status,
    dateTime: T(hour),
    amount: 50_00n,
    receivers: [{ name: 'Beta Store', amount: 49_00n, fee: 1_00n }],
    reportId: 'r1',
    observedAt: SEEN,
  });

describe('a declined attempt does not take the order from the payment that paid it', () => {
  it('the successful retry is the order payment; the declined one is neither matched nor money without an order', async () => {
    const spec = projectionSpec(() => deps(fx.db.sql, fx.store));
    await spec
      .given(
        subMerchant('sm-b', 'Beta Store'),
        order({ order_id: 'ord-retry', amount: '50.00', currency: 'UAH', created_at: T(8), split: 'sm-b:50.00' }),
      )
      .when(
        attempt('pay-declined', 9, 'failure'),
        attempt('pay-paid', 10, 'success'),
        syncCompleted({ from: T(0), to: LATER, completedAt: LATER, reportId: 'r2' }),
      )
      .expect(async (sql, run) => {
        const open = (await orderDiscrepancies(sql)).filter((d) => d.status === 'open');
        expect(
          open.map((d) => `${d.type} ${d.payment_id}`),
          run,
        ).toEqual([]);
        const roles = await sql<{ payment_id: string; role: string }[]>`
          select payment_id, role from recon.order_payments where order_id = 'ord-retry' order by payment_id`;
        expect(
          roles.find((r) => r.payment_id === 'pay-paid'),
          run,
        ).toMatchObject({ role: 'claimed' });
        expect(roles.find((r) => r.payment_id === 'pay-declined')?.role, run).not.toBe('claimed');
        const [o] = await sql<{ state: string }[]>`select state from recon.orders where order_id = 'ord-retry'`;
        expect(o?.state, run).toBe('matched');
      });
  });
});
