import { describe, expect, it } from 'vitest';
import { ordersReportData } from '../../src/export/nightly/orders-sheet';
import { appendAll, registerRows, subMerchant } from '../discrepancies/fixtures';
import { order, orderDiscrepancies, projectOrders } from '../orders/support';
import { useTestStore } from '../support/db';

/**
 * The nightly report's Orders sheet states the money in doubt of the day's orders and payments as it stood at the
 * end of the day, like the rest of the report (open.ts `openAt`): regenerated after a difference of the day was
 * resolved, it must still show that difference; it read the discrepancies' status now.
 */

const fx = useTestStore();
const day = { from: new Date('2024-03-01T00:00:00Z'), to: new Date('2024-03-02T00:00:00Z'), timezone: 'UTC' };
const placed = (orderId: string, amount: string, extra: Record<string, string> = {}) =>
  order({ order_id: orderId, amount, currency: 'UAH', created_at: '2024-03-01T08:00:00.000Z', split: '', ...extra });
const pay = (paymentId: string, orderId: string, dateTime: string, amount: bigint, observedAt: string) =>
  registerRows({ paymentId, orderId, dateTime, amount, receivers: [], reportId: `r-${paymentId}`, observedAt });

describe('the Orders sheet of a past day, a difference of the day resolved since', () => {
  it('shows the money in doubt as it stood at the end of the day', async () => {
    await appendAll(fx.store, [
      subMerchant('sm-a', 'Alpha Shop'),
      placed('ord-amount', '50.00'),
      pay('pay-amount', 'ord-amount', '2024-03-01T10:00:00.000Z', 49_00n, '2024-03-01T23:30:00.000Z'),
    ]);
    await projectOrders(fx.db.sql, fx.store);
    const [found] = (await orderDiscrepancies(fx.db.sql)).filter((d) => d.order_id === 'ord-amount');
    expect(found).toMatchObject({ type: 'amount_differs_from_order', status: 'open' });
    const written = await ordersReportData(fx.db.sql, day);
    const inDoubt = written?.day.find((r) => r.currency === 'UAH')?.inDoubt;
    expect(inDoubt).toBeGreaterThan(0n);

    // the next day the PSP's data moves on and the order is amended to what was paid: resolved then
    await appendAll(fx.store, [
      placed('ord-next', '20.00', { created_at: '2024-03-02T09:00:00.000Z' }),
      pay('pay-next', 'ord-next', '2024-03-02T10:00:00.000Z', 20_00n, '2024-03-02T23:30:00.000Z'),
      placed('ord-amount', '49.00', { amended_at: '2024-03-02T12:00:00Z' }),
    ]);
    await projectOrders(fx.db.sql, fx.store);
    const [after] = await fx.db.sql<{ status: string; resolved_at: Date | null }[]>`
      select status, resolved_at from recon.order_discrepancies where order_id = 'ord-amount'`;
    expect(after!.status).toBe('resolved');
    expect(after!.resolved_at!.getTime()).toBeGreaterThanOrEqual(day.to.getTime());

    // the day's sheet regenerated: its discrepancies as they stood that night (the orders themselves are read as
    // they are now: a known limit, docs/outputs.md)
    const doubtOf = (d: typeof written) => d?.day.map((r) => [r.currency, r.paymentsWithoutOrder, r.inDoubt] as const);
    expect(doubtOf(await ordersReportData(fx.db.sql, day))).toEqual(doubtOf(written));
  });
});
