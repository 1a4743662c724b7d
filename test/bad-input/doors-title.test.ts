import { describe, expect, it } from 'vitest';
import type { StatementFigures } from '../../src/export/statements/figures';
import type { StatementHeader } from '../../src/export/statements/figures';
import { statementTitle } from '../../src/export/statements/workbooks';

/**
 * A receiver the directory does not know reaches a statement by the PSP's name alone, which no door checked
 * for documents: its title is one line, without overrides or control characters, and bounded (issue 23).
 */
describe('a statement titled by the PSP’s receiver name', () => {
  const header = { language: 'en', recipient: { legalName: null }, number: '0001' } as unknown as StatementHeader;
  const meta = { month: '2026-10', timezone: 'UTC', position: '1/1', figuresSha256: '' };
  const title = (name: string) => statementTitle([{ subMerchantName: name } as StatementFigures], meta, header);

  it.each([
    ['Evil\r\nSub-merchant: Someone Else', 'Evil Sub-merchant: Someone Else'],
    ['\u202Eskoob\u202C Shop', 'skoob Shop'],
    ['\u001b[31mRed\u0007', '[31mRed'],
  ])('%j prints as %j', (name, shown) => {
    expect(title(name)).toBe(`Payout statement no. 0001, 2026-10 — ${shown}`);
  });

  it('a 10,000-character name is cut to 200 with an ellipsis', () => {
    const t = title('N'.repeat(10_000));
    const name = t.slice(t.indexOf('— ') + 2);
    expect(name).toHaveLength(200);
    expect(name.endsWith('…')).toBe(true);
  });
});
