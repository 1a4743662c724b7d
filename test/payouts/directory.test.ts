import { describe, expect, it } from 'vitest';
import { parseSubMerchantCsv } from '../../src/ingest/sub-merchants';

describe('directory column payout_account', () => {
  it('is optional, normalised (spaces out, upper case) and checked', () => {
    const without = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days\nSM-A,Alpha Shop,30\n', 'd.csv');
    expect(without.ok && without.rows[0]).not.toHaveProperty('payoutAccount');
    const withIt = parseSubMerchantCsv(
      'sub_merchant_id,name,reserve_hold_days,payout_account\nSM-A,Alpha Shop,30,de89 3704 0044 0532 0130 00\nSM-B,Beta,30,\n',
      'd.csv',
    );
    expect(withIt.ok && withIt.rows.map((r) => r.payoutAccount)).toEqual(['DE89370400440532013000', undefined]);
    const bad = parseSubMerchantCsv(
      'sub_merchant_id,name,reserve_hold_days,payout_account\nSM-A,Alpha Shop,30,DE89-3704!\n',
      'd.csv',
    );
    expect(bad.ok ? [] : bad.issues).toEqual([
      {
        file: 'd.csv',
        line: 2,
        column: 'payout_account',
        message: 'not an IBAN or account number (5 to 34 letters and digits; spaces are ignored)',
      },
    ]);
  });
});
