import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { purchaseLine, workbookOfLines } from './statement-fixture';

/**
 * The Operations sheet's total line counted its lines with one word whatever the count: "Total (1 lines)", and in
 * Ukrainian "Разом (1 рядків)", "Разом (2 рядків)", "Разом (21 рядків)", where the language says 1 рядок, 2 рядки,
 * 5 рядків, 21 рядок. Each count now takes the form of its language's plural rules.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-plural-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function totalLabel(n: number, language: 'en' | 'uk'): Promise<string> {
  const lines = Array.from({ length: n }, (_, i) => purchaseLine(i));
  const wb = await workbookOfLines(path.join(dir, `s-${language}-${n}.xlsx`), lines, language);
  const sheet = wb.worksheets[1]!;
  const labels: string[] = [];
  sheet.eachRow((r) => {
    const v = String(r.getCell(1).value ?? '');
    if (/^(Total|Разом) \(/.test(v)) labels.push(v);
  });
  expect(labels, `${language} ${n}`).toHaveLength(1);
  return labels[0]!;
}

describe('review15: the Operations total counts its lines in the words of the statement’s language', () => {
  it.each([
    ['en', 1, 'Total (1 line)'],
    ['en', 2, 'Total (2 lines)'],
    ['en', 21, 'Total (21 lines)'],
    ['uk', 1, 'Разом (1 рядок)'],
    ['uk', 2, 'Разом (2 рядки)'],
    ['uk', 5, 'Разом (5 рядків)'],
    ['uk', 11, 'Разом (11 рядків)'],
    ['uk', 21, 'Разом (21 рядок)'],
    ['uk', 22, 'Разом (22 рядки)'],
  ] as const)('%s, a count of %i: %s', async (language, n, expected) => {
    expect(await totalLabel(n, language)).toBe(expected);
  });
});
