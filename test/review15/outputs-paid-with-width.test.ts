import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/export/i18n/labels';
import { purchaseLine, workbookOfLines } from './statement-fixture';

/**
 * The Operations sheet's "Paid with" column was 22 characters wide in every language, so a card scheme the
 * statement knows printed cut against the Share amount beside it: "Google Pay · American Express" (29),
 * "Картка · American Express" (25). The column is sized, as Type and Status are, for the widest words the
 * statement's language writes for a known payway and scheme.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-paid-with-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAID: ReadonlyArray<{ payway: string; scheme: string | null }> = [
  { payway: 'card', scheme: 'visa' },
  { payway: 'card', scheme: 'amex' },
  { payway: 'apple_pay', scheme: 'amex' },
  { payway: 'google_pay', scheme: 'amex' },
  { payway: 'bank_transfer', scheme: null },
];

describe('review15: the statement’s Paid with column holds the words it prints', () => {
  it.each(['en', 'uk'] as const)('%s: as wide as its widest value and 2 more, as Type and Status', async (language) => {
    const lines = PAID.map((paidWith, i) => purchaseLine(i, { paidWith }));
    const wb = await workbookOfLines(path.join(dir, `s-${language}.xlsx`), lines, language);
    const ws = wb.worksheets[1]!;
    const col = (ws.getRow(1).values as unknown[]).indexOf(LABELS[language].paidWith);
    expect(col).toBeGreaterThan(0);
    const values: string[] = [];
    ws.eachRow((r, n) => {
      if (n > 1 && n <= lines.length + 1) values.push(String(r.getCell(col).value));
    });
    expect(values).toHaveLength(lines.length);
    expect(values.some((v) => v.includes('American Express'))).toBe(true);
    const widest = Math.max(...values.map((v) => v.length));
    // the lines hold the widest words a known payway and scheme give: the column fits them, and no more
    expect(ws.getColumn(col).width).toBe(widest + 2);
  });
});
