import { describe, expect, it } from 'vitest';
import { formatAmount } from '../../src/export/statements/pdf';

/**
 * Review 6: recon keeps every amount in hundredths, and a percentage fee on a yen payment leaves a fraction of
 * a yen (2.9 % of 1,001 JPY is 29.03). The statement PDF showed a yen amount by cutting its last two digits:
 * 971.97 as "971", 0.50 as "0", so a statement's lines did not add up to its totals and 123.99 read as 123.
 * A whole number of yen is shown as before; one that is not keeps its hundredths, exactly.
 */

describe('review6: a fraction of a yen on the statement PDF', () => {
  it('is shown exactly, never cut', () => {
    expect(formatAmount(12399n, 'JPY')).toBe('123.99');
    expect(formatAmount(50n, 'JPY')).toBe('0.50');
    expect(formatAmount(-97197n, 'JPY', 'uk')).toBe('−971,97');
  });

  it('a whole number of yen, and the other currencies, as before', () => {
    expect(formatAmount(12300n, 'JPY')).toBe('123');
    expect(formatAmount(123456700n, 'JPY')).toBe('1,234,567');
    expect(formatAmount(12345n, 'KWD')).toBe('123.450');
    expect(formatAmount(123456n, 'EUR', 'uk')).toBe('1\u00a0234,56');
  });
});
