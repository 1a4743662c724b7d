import { describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as orders } from '../../projections/orders';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { waitVisible } from '../ledger/visible';
import { order } from '../orders/support';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from './fixtures';
import { inDoubtAsBigint } from '../support/in-doubt';

/**
 * Decisions on the orders leg (orders and journal projections): a payment without an order written off is
 * booked against the PSP receivable; the order placed while the write-off stands changes nothing; revoked, the
 * group is judged again at once and the discrepancy resolved, stamped by the revocation, the entry reversed.
 */

const fx = useTestStore();
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  projections: [journal, orders],
});
async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const PAID_AT = at('2024-03-10T10:00:00Z');
const seen = { reportId: 'rep-1', observedAt: at('2024-03-11T00:00:00Z') };
const rowOf = async () =>
  (
    await fx.db.sql<
      { id: string; type: string; status: string; resolved_by_event: string | null; amount_in_doubt: bigint }[]
    >`select * from recon.order_discrepancies where payment_id = 'pay-orphan' and type = 'payment_without_order'`
  ).map(inDoubtAsBigint)[0]!;

describe('decisions on the orders leg', () => {
  it('written off, then revoked once the order is known: resolved at once, the entry reversed', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      order({ order_id: 'ord-ok', amount: '10.00', currency: 'UAH', created_at: '2024-03-10T09:00:00Z' }),
      registerRows({
        paymentId: 'pay-orphan',
        orderId: 'ord-orphan',
        dateTime: PAID_AT,
        amount: 26_00n,
        receivers: [{ name: 'Alpha Shop', amount: 25_00n, fee: 1_00n }],
        ...seen,
      }),
      periodRow({
        paymentId: 'pay-orphan',
        orderId: 'ord-orphan',
        dateTime: PAID_AT,
        amount: 26_00n,
        status: 'success',
        ...seen,
      }),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 1,
      }),
    ]);
    await settle();
    const open = await rowOf();
    expect(open).toMatchObject({ type: 'payment_without_order', status: 'open', amount_in_doubt: 26_00n });
    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: open.id, note: 'never ordered', by: 'Olena', at: new Date('2024-03-15T09:00:00Z'), decision: 'write_off' },
    );
    expect(accepted.ok).toBe(true);
    await settle();
    // the order turns up while the write-off stands: frozen
    await appendAll(fx.store, [
      order({
        order_id: 'ord-orphan',
        amount: '26.00',
        currency: 'UAH',
        created_at: '2024-03-10T09:00:00Z',
        split: 'SM-A:26.00',
      }),
    ]);
    await settle();
    expect(await rowOf()).toMatchObject({ status: 'accepted' });
    const revoked = await revokeDecision(fx.store, {
      id: open.id,
      reason: 'the order was found',
      by: 'Petro',
      at: new Date('2024-03-16T09:00:00Z'),
    });
    await settle();
    expect(await rowOf()).toMatchObject({ status: 'resolved', resolved_by_event: revoked.ok ? revoked.eventId : '' });
    const lines = await fx.db.sql<{ kind: string; account: string; amount: bigint }[]>`
      select e.kind, l.account, l.amount from recon.journal_entries e join recon.journal_lines l using (entry_id)
      where e.row_key = ${`write_off:${open.id}`} order by e.commit_pos, l.line_no`;
    expect(lines).toEqual([
      { kind: 'write_off', account: 'expense:write-offs', amount: 26_00n },
      { kind: 'write_off', account: 'psp_clearing', amount: -26_00n },
      { kind: 'reversal', account: 'expense:write-offs', amount: -26_00n },
      { kind: 'reversal', account: 'psp_clearing', amount: 26_00n },
    ]);
  });

  it('a payment without an order accepted to pay, its amount grown since: the growth is held', async () => {
    const sale = (amount: bigint, reportId: string, observedAt: string) => [
      registerRows({
        paymentId: 'pay-more',
        orderId: 'ord-more',
        dateTime: PAID_AT,
        amount,
        receivers: [{ name: 'Alpha Shop', amount: amount - 1_00n, fee: 1_00n }],
        reportId,
        observedAt,
      }),
      periodRow({ paymentId: 'pay-more', orderId: 'ord-more', dateTime: PAID_AT, amount, reportId, observedAt }),
    ];
    await appendAll(fx.store, sale(30_00n, 'rep-2', at('2024-03-11T00:00:00Z')));
    await settle();
    const rowOfMore = async () =>
      (
        await fx.db.sql<{ id: string; status: string; amount_in_doubt: bigint; amount_in_doubt_now: bigint | null }[]>`
          select * from recon.order_discrepancies where payment_id = 'pay-more' and type = 'payment_without_order'`
      ).map(inDoubtAsBigint)[0]!;
    const open = await rowOfMore();
    expect(open).toMatchObject({ status: 'open', amount_in_doubt: 30_00n });
    const paid = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: open.id, note: 'a phone order', by: 'Olena', at: new Date('2024-03-20T09:00:00Z'), decision: 'pay' },
    );
    expect(paid.ok).toBe(true);
    await settle();
    const held = async () =>
      ((await heldAt(fx.db.sql, fx.store, (await ledgerPosition(fx.db.sql))!)) ?? [])
        .filter((h) => h.paymentId === 'pay-more')
        .map((h) => h.amount);
    expect(await held()).toEqual([]);
    // the PSP corrects the payment to 45.00: 15.00 more in doubt than was released
    await appendAll(fx.store, sale(45_00n, 'rep-3', at('2024-03-21T00:00:00Z')));
    await settle();
    expect(await rowOfMore()).toMatchObject({
      status: 'accepted',
      amount_in_doubt: 30_00n,
      amount_in_doubt_now: 45_00n,
    });
    expect(await held()).toEqual([15_00n]);
  });
});
