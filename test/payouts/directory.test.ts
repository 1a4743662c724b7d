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

describe('directory column payout_bic', () => {
  const head = 'sub_merchant_id,name,reserve_hold_days,payout_account,payout_bic\n';
  const parse = (rows: string) => parseSubMerchantCsv(head + rows, 'd.csv');
  const issues = (rows: string) => {
    const r = parse(rows);
    return r.ok ? [] : r.issues.map((i) => [i.line, i.column, i.message]);
  };

  it('is optional, upper-cased, 8 or 11 characters, and kept with the account', () => {
    const r = parse(
      'SM-A,Alpha,30,40817810099910004312,sabrrumm\nSM-B,Beta,30,JP0001,BOTKJPJTXXX\nSM-C,Gamma,30,JP0002,\n',
    );
    expect(r.ok && r.rows.map((x) => [x.payoutAccount, x.payoutBic])).toEqual([
      ['40817810099910004312', 'SABRRUMM'],
      ['JP0001', 'BOTKJPJTXXX'],
      ['JP0002', undefined],
    ]);
  });

  it('refuses what is not a BIC, naming the line and column, and a BIC with no account', () => {
    expect(issues('SM-A,Alpha,30,JP0001,SABR\n')).toEqual([
      [2, 'payout_bic', '"SABR" is not a BIC (8 or 11 letters and digits: bank, country, place, branch)'],
    ]);
    expect(issues('SM-A,Alpha,30,JP0001,SABRRUMMXX\n')[0]?.[1]).toBe('payout_bic');
    expect(issues('SM-A,Alpha,30,JP0001,1ABRRUMM\n')[0]?.[1]).toBe('payout_bic');
    expect(issues('SM-A,Alpha,30,,SABRRUMM\n')).toEqual([
      [2, 'payout_bic', 'a BIC without a payout_account: whose bank would it be?'],
    ]);
  });

  it('quotes hostile text without letting it reorder or break the message', () => {
    const [[, column, message]] = issues('SM-A,Alpha,30,JP0001,SABR\u202EUMM\n') as [[number, string, string]];
    expect(column).toBe('payout_bic');
    expect(message).not.toContain('\u202E');
    const [[, , nul]] = issues('SM-A,Alpha,30,JP0001,"SAB\nRUMM"\n') as [[number, string, string]];
    expect(nul).not.toContain('\n');
  });
});
