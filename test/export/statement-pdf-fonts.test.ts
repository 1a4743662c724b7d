import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { plainHeader } from '../../src/export/statements/figures';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import {
  figuresDigest,
  type StatementFigures,
  type StatementHeader,
  type StatementLine,
  type StatementMeta,
} from '../../src/export/statements/workbooks';

/**
 * A statement PDF's fonts are parsed once a process and shared by its documents (pdf-fonts.ts), each document
 * with glyphs of its own: every file must be byte for byte the one written with the fonts opened for it alone,
 * whatever the documents written before it asked of the same fonts (other letters, other ligatures, another
 * language), and the documents must indeed share one parse of each font.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-pdf-fonts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A statement of 60 lines whose order ids are `idOf(i)`: letters, ligatures ("ff", "fi") or Cyrillic. */
function statementOf(language: 'en' | 'uk', currency: string, name: string, idOf: (i: number) => string) {
  const lines = Array.from({ length: 60 }, (_, i) => {
    const share = BigInt(((i * 7919) % 100_000) * 10 ** (i % 5)) * (i % 7 === 6 ? -1n : 1n);
    const fee = BigInt((i * 37) % 5_000);
    return {
      at: new Date(Date.UTC(2025, 0, 1 + (i % 31), i % 24, (i * 7) % 60)),
      orderId: idOf(i),
      paymentId: `pay-${i}`,
      method: share < 0n ? 'refund' : 'purchase',
      status: i % 11 === 3 ? 'failure' : 'success',
      share,
      fee,
      reserve: 0n,
      net: share - fee,
      currency,
      eventIds: [],
      paidWith: i % 3 ? { payway: i % 4 ? 'card' : 'apple_pay', scheme: i % 2 ? 'visa' : 'mastercard' } : null,
      feeParts: i % 5 === 0 ? { fixed: fee / 3n, percent: fee - fee / 3n } : null,
    } as StatementLine;
  });
  const figures: StatementFigures[] = [
    {
      subMerchantId: `sm-${name}`,
      subMerchantName: name,
      currency,
      ...{ opening: 0n, gross: 0n, refunds: 0n, chargebacks: 0n, fees: 0n, reserveHeld: 0n, reserveReleased: 0n },
      ...{ netPayable: 0n, closing: 0n, operations: lines.length },
    },
  ];
  const meta: StatementMeta = {
    month: '2025-01',
    timezone: 'Europe/Kyiv',
    position: '1/1',
    figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', figures),
  };
  const header: StatementHeader = { ...plainHeader(meta), language, number: '0007' };
  const source = {
    figures,
    lines: async function* () {
      yield* lines;
    },
    reserve: [],
  };
  return { source, meta, header };
}

const STATEMENTS = [
  statementOf('uk', 'UAH', 'Квітка Flowers ТОВ', (i) => `замовлення-${i}-йїєґ`),
  // ï and ˘ are parts of ї and й, which the document before embeds as composites of them
  statementOf('en', 'EUR', 'Naïve Office˘Supplies Ltd', (i) => `off-fi-${i.toString(36)}-affix`),
  statementOf('uk', 'UAH', 'Щедрий Хліб', (i) => `ЩЮЯ-${i}`),
  statementOf('en', 'USD', 'Northwind', (i) => `SBX-${(i * 7919).toString(16).toUpperCase()}-${i}`),
];

describe('statement PDF: fonts parsed once a process', () => {
  it('writes every document as with its fonts opened for it alone, whatever was written before', async () => {
    const pdfkit = createRequire(import.meta.url)('pdfkit') as { prototype: { font: () => unknown } };
    const font = vi.spyOn(pdfkit.prototype, 'font');
    const shared: Buffer[] = [];
    // twice over, so that the fonts were used by every kind of document before each one is written again
    for (const [k, s] of [...STATEMENTS, ...STATEMENTS].entries()) {
      const file = path.join(dir, `shared-${k}.pdf`);
      await writeStatementPdf(file, s.source, s.meta, s.header);
      shared.push(readFileSync(file));
    }
    const documents = [...new Set(font.mock.contexts)] as { _fontFamilies: Record<string, { font: object }> }[];
    font.mockRestore();
    for (const [k, s] of [...STATEMENTS, ...STATEMENTS].entries()) {
      const file = path.join(dir, `own-${k}.pdf`);
      await writeStatementPdf(file, s.source, s.meta, s.header, { pdfkitFonts: true });
      expect(shared[k]!.equals(readFileSync(file)), `document ${k}`).toBe(true);
    }
    // each document its own view (glyphs), all views of one parse per font
    expect(documents).toHaveLength(8);
    for (const name of ['regular', 'bold']) {
      const views = documents.map((d) => d._fontFamilies[name]!.font);
      expect(new Set(views).size).toBe(8);
      expect(new Set(views.map((v) => Object.getPrototypeOf(v))).size).toBe(1);
    }
  }, 180_000);
});
