import { describe, expect, it } from 'vitest';
import { money } from '../../src/console/i18n';

/**
 * Review 15: the console drew money with Intl's currency style, whose least decimals are ICU's display digits, 0 for
 * HUF and IQD: 1,234.50 HUF read "HUF 1,234.5", 1,234.00 HUF "HUF 1,234", and 10.05 KWD "KWD 10.05" where the
 * statement and the pain.001 file say 10.050. The console now shows each currency's ISO 4217 decimals.
 */

describe('review15: the console shows a currency with its ISO 4217 decimals', () => {
  it('HUF and IDR with two, IQD and KWD with three, in both languages', () => {
    expect(money(123_450n, 'HUF', 'en')).toBe('HUF\u00a01,234.50');
    expect(money(123_400n, 'HUF', 'uk')).toBe('1\u00a0234,00\u00a0HUF');
    expect(money(100n, 'IDR', 'en')).toBe('IDR\u00a01.00');
    expect(money(1_005n, 'IQD', 'en')).toBe('IQD\u00a010.050');
    expect(money(1_005n, 'KWD', 'uk')).toBe('10,050\u00a0KWD');
  });

  it('yen whole, a fraction of a yen still shown as given, euros and hryvnias as before', () => {
    expect(money(100_000n, 'JPY', 'en')).toBe('JP¥1,000');
    expect(money(100_050n, 'JPY', 'en')).toBe('JP¥1,000.5');
    expect(money(132_461n, 'UAH', 'uk')).toBe('1\u00a0324,61\u00a0₴');
    expect(money(-5n, 'EUR', 'en')).toBe('-€0.05');
  });
});
