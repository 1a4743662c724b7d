import { describe, expect, it } from 'vitest';
import { parseFeeContract } from '../../src/ingest/fee-contract';

/**
 * Review 5: the fee contract's header naming a column twice took the last one silently (a percent of 29 read
 * from the wrong column instead of 2.9), where the directory and the bank CSV refuse it; a percent of 100.9 was
 * taken although the message says 0 to 100 (only its integer part was compared).
 */

const HEADER = 'sub_merchant_id,method,currency,percent,fixed,effective_from';

describe('review5: the fee contract door', () => {
  it('a column named twice is refused at line 1, naming it', () => {
    const r = parseFeeContract(`${HEADER},percent\n*,purchase,EUR,2.9,0.30,2025-01-01,29\n`, 'fees.csv');
    expect(r).toEqual({
      ok: false,
      issues: [{ file: 'fees.csv', line: 1, column: null, message: expect.stringMatching(/named twice percent$/) }],
    });
  });

  it('a percent above 100 is refused, 100 itself taken', () => {
    for (const p of ['100.9', '100.000001', '101'])
      expect(parseFeeContract(`${HEADER}\n*,purchase,EUR,${p},0,2025-01-01\n`, 'fees.csv')).toMatchObject({
        ok: false,
        issues: [{ line: 2, column: 'percent' }],
      });
    for (const p of ['100', '100.000000', '0', '99.999999'])
      expect(parseFeeContract(`${HEADER}\n*,purchase,EUR,${p},0,2025-01-01\n`, 'fees.csv')).toMatchObject({ ok: true });
  });
});
