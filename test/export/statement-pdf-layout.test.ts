import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { plainHeader } from '../../src/export/statements/figures';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import { layFiguresByCharacter } from '../../src/export/statements/pdf-layout';
import {
  figuresDigest,
  type StatementFigures,
  type StatementHeader,
  type StatementLine,
  type StatementMeta,
} from '../../src/export/statements/workbooks';

/**
 * A statement PDF's figures are laid out from their characters' layouts (pdf-layout.ts) instead of being shaped
 * word by word: the file must be byte for byte the one pdfkit writes shaping every word itself, in both
 * languages and for currencies of every exponent, and fontkit must not be asked to shape a figure again.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-pdf-layout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function figuresOf(currency: string, lines: readonly StatementLine[]): StatementFigures {
  const gross = lines.filter((l) => l.share > 0n).reduce((s, l) => s + l.share, 0n);
  const refunds = -lines.filter((l) => l.share < 0n).reduce((s, l) => s + l.share, 0n);
  const fees = lines.reduce((s, l) => s + l.fee, 0n);
  const reserveHeld = lines.reduce((s, l) => s + l.reserve, 0n);
  const netPayable = gross - refunds - fees - reserveHeld;
  return {
    subMerchantId: 'sm-layout',
    subMerchantName: 'Квітка Flowers ТОВ',
    currency,
    opening: -123_456n,
    gross,
    refunds,
    chargebacks: 0n,
    fees,
    reserveHeld,
    reserveReleased: 0n,
    netPayable,
    closing: -123_456n + netPayable,
    operations: lines.length,
  };
}

/**
 * A line's ids, distinct per line, from its number: a UUID for the payment; for the order (the operations
 * table's id, in a column 92 points wide) every other line one of the demo's shape (SBX-XXXXXX-NNNNNN), the
 * others lower-case hex in a UUID's first two groups (a shop may number its orders so).
 */
function idsOf(i: number): { orderId: string; paymentId: string } {
  const hex = createHash('sha256').update(`line ${i}`).digest('hex');
  const uuid = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join('-');
  const sbx = `SBX-${hex.slice(32, 38).toUpperCase()}-${String(i).padStart(6, '0')}`;
  return { orderId: i % 2 ? uuid.slice(0, 13) : sbx, paymentId: uuid };
}

/**
 * Amounts of every size and sign, fee parts on some lines, minutes across the day; with `count`, that many lines
 * with ids as the statements write them (UUIDs, SBX-XXXXXX-NNNNNN).
 */
function linesOf(currency: string, count?: number): StatementLine[] {
  return Array.from({ length: count ?? 150 }, (_, i) => {
    const share = BigInt(((i * 7919) % 100_000) * 10 ** (i % 7)) * (i % 9 === 8 ? -1n : 1n);
    const fee = BigInt((i * 37) % 5_000);
    const reserve = i % 4 === 0 ? 0n : BigInt((i * 13) % 900);
    return {
      at: new Date(Date.UTC(2025, 0, 1 + (i % 31), i % 24, (i * 7) % 60)),
      ...(count ? idsOf(i) : { orderId: `order-${i.toString(36)}`, paymentId: `pay-${i}` }),
      method: share < 0n ? 'refund' : 'purchase',
      status: 'success',
      share,
      fee,
      reserve,
      net: share - fee - reserve,
      currency,
      eventIds: [],
      paidWith: i % 3 ? { payway: 'card', scheme: i % 2 ? 'visa' : 'mastercard' } : null,
      feeParts: i % 5 === 0 ? { fixed: fee / 3n, percent: fee - fee / 3n } : null,
    } as StatementLine;
  });
}

/** The statement written with recon's shortcuts, with pdfkit shaping every word, and with pdfkit doing all. */
async function threeWays(
  language: 'en' | 'uk',
  currencies: readonly string[],
  count?: number,
): Promise<[Buffer, Buffer, Buffer]> {
  const lines = new Map(currencies.map((c) => [c, linesOf(c, count)]));
  const figs = currencies.map((c) => figuresOf(c, lines.get(c)!));
  const meta: StatementMeta = {
    month: '2025-01',
    timezone: 'Europe/Kyiv',
    position: '1/1',
    figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', figs),
  };
  const header: StatementHeader = { ...plainHeader(meta), language, number: '0042' };
  const source = {
    figures: figs,
    lines: async function* (c: string) {
      yield* lines.get(c)!;
    },
    reserve: [
      { heldOn: '2025-01-03', currency: currencies[0]!, held: 1_234_567n, releaseOn: '2025-04-03', released: 0n },
    ],
  };
  const fast = path.join(dir, `${language}-fast.pdf`);
  const shaped = path.join(dir, `${language}-shaped.pdf`);
  await writeStatementPdf(fast, source, meta, header);
  const own = path.join(dir, `${language}-pdfkit.pdf`);
  await writeStatementPdf(shaped, source, meta, header, { shapeEveryWord: true });
  await writeStatementPdf(own, source, meta, header, { shapeEveryWord: true, pdfkitText: true });
  return [readFileSync(fast), readFileSync(shaped), readFileSync(own)];
}

describe('statement PDF: figures laid out from their characters, cells written from their glyphs', () => {
  it('writes the same bytes as pdfkit shaping every word and writing every cell (English, exponents 2, 0 and 3)', async () => {
    const [fast, shaped, own] = await threeWays('en', ['EUR', 'JPY', 'KWD']);
    expect(fast.length).toBeGreaterThan(10_000);
    expect(fast.equals(shaped)).toBe(true);
    expect(fast.equals(own)).toBe(true);
  }, 180_000);

  it('writes the same bytes in Ukrainian (no-break spaces between groups, comma decimals, dd.MM.yyyy)', async () => {
    const [fast, shaped, own] = await threeWays('uk', ['UAH']);
    expect(fast.equals(shaped)).toBe(true);
    expect(fast.equals(own)).toBe(true);
  }, 180_000);

  it('writes the same bytes for 2,000 lines of distinct order ids (ids laid out from their characters)', async () => {
    const [fast, shaped, own] = await threeWays('en', ['EUR'], 2_000);
    // some ids hold "ff", which fontkit ligates: those are left to it, and must come out the same too
    const ids = linesOf('EUR', 2_000).map((l) => l.orderId!);
    expect(ids.filter((id) => id.includes('ff')).length).toBeGreaterThan(20);
    expect(fast.length).toBeGreaterThan(100_000);
    expect(fast.equals(shaped)).toBe(true);
    expect(fast.equals(own)).toBe(true);
  }, 180_000);

  it("writes table cells from their glyph operators, not through pdfkit's text (titles, headings, footers still are)", async () => {
    const pdfkit = createRequire(import.meta.url)('pdfkit') as { prototype: { _fragment: () => void } };
    const fragment = vi.spyOn(pdfkit.prototype, '_fragment');
    await threeWays('en', ['EUR']);
    // pdfkit's calls per document, in the order the three were written
    const perDocument = new Map<unknown, number>();
    for (const doc of fragment.mock.contexts) perDocument.set(doc, (perDocument.get(doc) ?? 0) + 1);
    fragment.mockRestore();
    const [fast = 0, shaped = 0, own = 0] = perDocument.values();
    // shaping has nothing to do with how cells are written
    expect(shaped).toBe(fast);
    // 150 lines of ten cells and the tables above them: no cell goes through pdfkit's text, the rest does
    expect(fast).toBeLessThan(own * 0.1);
    expect(fast).toBeGreaterThan(0);
  }, 180_000);

  it('lays a figure out once from its characters, then without asking fontkit again; other words as before', () => {
    const require = createRequire(import.meta.url);
    const ttf = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', 'DejaVuSans.ttf');
    const doc = new PDFDocument();
    doc.registerFont('regular', ttf);
    doc.font('regular');
    const font = (doc as unknown as { _font: Parameters<typeof layFiguresByCharacter>[0] & { font: object } })._font;
    const shapedBefore = font!.layoutRun('−1,234.56');
    layFiguresByCharacter(font);
    const first = font!.layoutRun('−1,234.56');
    const layout = vi.spyOn(font!.font as { layout: () => unknown }, 'layout');
    const again = font!.layoutRun('−1,234.56');
    expect(layout).not.toHaveBeenCalled();
    for (const run of [first, again]) {
      expect(run.glyphs.map((g) => g.id)).toEqual(shapedBefore.glyphs.map((g) => g.id));
      expect(run.positions).toEqual(shapedBefore.positions);
      expect(run.advanceWidth).toBe(shapedBefore.advanceWidth);
    }
    // a word neither figures nor an id (statement-id-layout.test.ts) is shaped by fontkit as before
    font!.layoutRun('Квітка');
    expect(layout).toHaveBeenCalledTimes(1);
    doc.end();
  });
});
