import { describe, expect, it } from 'vitest';
import { plainHeader, type StatementFigures } from '../../src/export/statements/figures';
import { headerRows } from '../../src/export/statements/summary';

/** A correction names the statement it corrects with its date written as the document's language writes dates. */
describe('the line naming the statement a correction corrects', () => {
  const meta = { month: '2026-10', timezone: 'Europe/Kyiv', position: '1/1', figuresSha256: '' };
  const figures = [{ subMerchantId: 'sm-1', subMerchantName: 'Shop', currency: 'UAH' } as StatementFigures];
  const corrects = { number: '0001', issuedAt: new Date('2026-11-26T23:30:00Z') };
  const row = (language: 'en' | 'uk') => {
    const header = { ...plainHeader(meta), language, number: '0002', corrects };
    return headerRows(figures, meta, header).find(([, v]) => typeof v === 'string' && v.includes('0001'))?.[1];
  };

  it('in Ukrainian: the day as 27.11.2026 (Kyiv), as the issue date prints', () => {
    expect(row('uk')).toBe('виписку № 0001 від 27.11.2026');
  });
  it('in English: the ISO day', () => {
    expect(row('en')).toBe('Statement no. 0001 issued on 2026-11-27');
  });
});
