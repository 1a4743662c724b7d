import { describe, expect, it } from 'vitest';
import { BankEntryBooked } from '../../src/events/bank-events';
import { dataOf, newEvent } from '../../src/events/catalog';
import { paidByBankOf } from '../../src/payout-runs/bank-paid';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import type { AppendRequest } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { projection as payoutsProjection } from '../../projections/payouts';
import { useTestStore } from '../support/db';
import { appendAll, bank, booked, issued, payee, TZ } from '../payouts/support';

/**
 * Review 16: the bank folds its 1.50 charge into a payout's debit of 101.50 (camt TxAmt 100.00 + Chrgs 1.50): the
 * payout is paid at 100.00, the charge a bank fee. When the bank then gives the debit back whole (a reversal of
 * its own booking, 101.50), the return was read at 101.50: the journal owed the payee 101.50 again and kept the
 * 1.50 booked as a bank fee the bank no longer took, the payout read as paid out −1.50, and the next draft of the
 * month asked the bank's charge for the payee. The charge given back is the bank's: the payee is owed 100.00.
 */

const fx = useTestStore();
const REF = 'RS-SM1-2024-10-EUR';
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: TZ,
  graceHours: 48,
  bank,
  projections: [journal, payoutsProjection],
});
async function project() {
  for (let i = 0; i < 100; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
  }
}

/** The line as a camt.053 entry of one transaction detail states it: the transfer and the charge included. */
const folded = (r: AppendRequest, transfer: bigint, charge: bigint): AppendRequest => ({
  ...r,
  events: r.events.map((e) =>
    newEvent(BankEntryBooked, {
      ...dataOf(BankEntryBooked, e as never),
      transactionAmount: transfer.toString(),
      charges: [{ amount: charge.toString(), currency: 'EUR', direction: null, included: true }],
    }),
  ),
});

const balances = async () =>
  Object.fromEntries(
    (
      await fx.db.sql<{ account: string; sum: string }[]>`
        select case when account like 'bank:%' then 'bank' else account end as account, sum(amount)::text as sum
        from recon.journal_lines group by 1 order by 1`
    ).map((r) => [r.account, BigInt(r.sum)]),
  );

describe('review16: a payout debit given back whole gives the bank its folded charge back, not the payee', () => {
  it('101.50 debited (100.00 + 1.50 charge), 101.50 given back: 100.00 owed again, no bank fee', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      issued('2024-10', '2024-11-01T08:00:00Z', [{ subMerchantId: 'SM1', reference: REF, payable: 100_00n }]),
      folded(
        booked({
          amount: 101_50n,
          bookingDate: '2024-11-04',
          remittance: REF,
          bankRef: 'T1',
          counterpartyName: 'Shop One',
        }),
        100_00n,
        1_50n,
      ),
    ]);
    await project();
    // paid at 100.00, the charge a bank fee
    expect(await balances()).toEqual({ bank: -101_50n, bank_fees: 1_50n, payable: 100_00n });

    await appendAll(fx.store, [
      booked({
        amount: 101_50n,
        direction: 'credit',
        isReturn: true,
        bookingDate: '2024-11-06',
        remittance: REF,
        bankRef: 'R1',
        counterpartyName: 'Shop One',
      }),
    ]);
    await project();
    // the payee's 100.00 is owed again, and the bank took no charge in the end
    expect(await balances()).toEqual({ bank: 0n, bank_fees: 0n, payable: 0n });
    const [p] = await fx.db.sql<{ status: string; paid_out: bigint; returned: bigint }[]>`
      select status, paid_out, returned from recon.payouts where reference = ${REF}`;
    expect(p).toEqual({ status: 'returned', paid_out: 0n, returned: 100_00n });
    // what a draft of the month asks again: the 100.00 that came back, not the bank's charge with it
    const paid = await paidByBankOf(fx.db.sql, fx.store, bank.payouts, TZ);
    expect(paid.returned?.get(REF)).toBe(100_00n);
    expect(paid.get(REF) ?? 0n).toBe(0n);

    // the bank takes its reversal back (a debit marked as a return, 101.50): paid again, its charge taken again
    await appendAll(fx.store, [
      booked({ amount: 101_50n, isReturn: true, bookingDate: '2024-11-07', remittance: REF, bankRef: 'R2' }),
    ]);
    await project();
    expect(await balances()).toEqual({ bank: -101_50n, bank_fees: 1_50n, payable: 100_00n });
  });
});
