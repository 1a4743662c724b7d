import { describe, expect, it } from 'vitest';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { DEFAULT_WRITE_OFF_ACCOUNT } from '../../src/config/write-off';
import { DEFAULT_EXCEPTION_POLICY } from '../../src/exceptions/severity';
import { writeOffLines, writeOffSideOf } from '../../src/journal-rules';
import { DISCREPANCY_TYPES } from '../../src/reconciliation/discrepancies/registry';

/**
 * The journal's rule for write-offs (src/journal-rules.ts): where the money of each type sits, so what a
 * write-off is booked against; the lines, balanced and exact; and the account, configured once
 * (src/config/write-off.ts).
 */

const sideOf = (type: string, over: Partial<Parameters<typeof writeOffSideOf>[0]> = {}) =>
  writeOffSideOf({ type, posId: 'DE89370400440532013000', receiverName: 'Alpha Shop', values: {}, ...over });

describe('write-offs in the journal', () => {
  it('every type is written off against where its money sits, or has no write-off', () => {
    const table = Object.fromEntries(
      DISCREPANCY_TYPES.map((t) => {
        const s = sideOf(t, t === 'payout_amount_mismatch' ? { values: { expected: '100', paid_out: '150' } } : {});
        return [
          t,
          s === null ? null : `${s.gain ? 'gain' : 'loss'} ${s.against}${s.receiverName ? ` (${s.receiverName})` : ''}`,
        ];
      }),
    );
    const bank = 'bank:DE89370400440532013000';
    expect(table).toEqual({
      missing_in_report: 'loss psp_clearing',
      missing_in_period: 'loss psp_clearing',
      missing_webhook: 'loss psp_clearing',
      status_mismatch: 'loss psp_clearing',
      amount_mismatch: 'loss psp_clearing',
      currency_mismatch: 'loss psp_clearing',
      fee_mismatch: 'loss psp_fees',
      split_mismatch: 'loss psp_clearing',
      unknown_sub_merchant: 'loss psp_clearing',
      duplicate: 'loss psp_clearing',
      report_count_mismatch: null,
      payout_missing: null,
      payout_amount_mismatch: 'loss payable (Alpha Shop)',
      payout_unexpected: `loss ${bank}`,
      payout_duplicate: 'loss payable (Alpha Shop)',
      payout_returned: null,
      settlement_missing: 'loss psp_clearing',
      settlement_short: 'loss psp_clearing',
      settlement_late: null,
      settlement_unexpected: `gain ${bank}`,
      // money that came: nothing is in doubt, so nothing to write off (its write-off only closes it)
      settlement_recovered: null,
      // a gain taken back: the credit is booked once by its match, or gone back to the bank
      settlement_gain_taken_back: null,
      order_not_at_psp: null,
      payment_without_order: 'loss psp_clearing',
      amount_differs_from_order: 'loss psp_clearing',
      split_differs_from_order: 'loss psp_clearing',
      fee_above_contract: 'loss psp_fees',
      fee_below_contract: 'loss psp_fees',
    });
    // a payout paid short: the rest is still owed, nothing is lost
    expect(sideOf('payout_amount_mismatch', { values: { expected: '150', paid_out: '100' } })).toBeNull();
    // a bank line's types need its account
    expect(sideOf('payout_unexpected', { posId: '' })).toBeNull();
  });

  it('books the amount exactly, balanced: a loss debits the write-off account, the gain credits it', () => {
    const loss = writeOffLines('expense:write-offs', sideOf('settlement_short')!, 4_800n);
    expect(loss).toEqual([
      { account: 'expense:write-offs', component: 'write_off', amount: 4_800n },
      { account: 'psp_clearing', component: 'write_off', amount: -4_800n },
    ]);
    const gain = writeOffLines('expense:write-offs', sideOf('settlement_unexpected')!, 777n);
    expect(gain).toEqual([
      { account: 'expense:write-offs', component: 'write_off', amount: -777n },
      { account: 'bank:DE89370400440532013000', component: 'write_off', amount: 777n },
    ]);
    const big = 9_223_372_036_854_775_807n;
    expect(writeOffLines('expense:write-offs', sideOf('fee_mismatch')!, big).reduce((s, l) => s + l.amount, 0n)).toBe(
      0n,
    );
  });

  it('the account: the exceptions policy default, or exceptions.writeOff.account; never one of the journal own', () => {
    expect(DEFAULT_WRITE_OFF_ACCOUNT).toBe(DEFAULT_EXCEPTION_POLICY.writeOff.account);
    const refused = (account: string) => exceptionsConfigFrom({ writeOff: { account } }).issues.join('\n');
    expect(refused('expense:bad-debts')).toBe('');
    expect(refused('psp_clearing')).toMatch(
      /exceptions\.writeOff\.account: psp_clearing is one of the journal's own accounts/,
    );
    expect(refused('bank:de89')).toMatch(/journal's own accounts/);
    expect(refused('Write Offs')).toMatch(/exceptions\.writeOff\.account: expected lower-case letters/);
  });
});
