import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { boundLayoutCache, CHARACTERS_KEPT } from '../../src/export/statements/pdf-layout';

/**
 * pdfkit keeps the layout of every distinct word a document writes (its font's `layoutCache`); a statement's
 * order ids and amounts are nearly all distinct, so a long statement's PDF held its whole table's laid-out words.
 * Bounded (pdf-layout.ts), the cache never holds words of more than CHARACTERS_KEPT characters in all, however
 * many a document writes, and a word laid out after the cache started over is laid out as before.
 */

const require = createRequire(import.meta.url);
const FONT = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', 'DejaVuSans.ttf');

interface Run {
  glyphs: { id: number }[];
  positions: { xAdvance: number; xOffset: number }[];
  advanceWidth: number;
}
interface EmbeddedFont {
  layoutCache: Record<string, Run>;
  layout(text: string): Run;
}

function fontOf(bounded: boolean): EmbeddedFont {
  const doc = new PDFDocument({ size: 'A4' });
  doc.registerFont('regular', FONT);
  doc.font('regular');
  const font = (doc as unknown as { _font: EmbeddedFont })._font;
  if (bounded) boundLayoutCache(font as never);
  return font;
}

/** A statement row's words: a UUID (as an order id may be), an id of the demo's shape, an amount. */
function wordsOf(i: number): string[] {
  const hex = createHash('sha256').update(`word ${i}`).digest('hex');
  const uuid = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join('-');
  return [uuid, `SBX-${hex.slice(32, 38).toUpperCase()}-${String(i).padStart(6, '0')}`, `${i * 7},${i % 100}`];
}

const charactersHeld = (font: EmbeddedFont) => Object.keys(font.layoutCache).reduce((n, w) => n + w.length, 0);
const shape = (r: Run) => ({
  glyphs: r.glyphs.map((g) => g.id),
  positions: r.positions.map((p) => [p.xAdvance, p.xOffset]),
  width: r.advanceWidth,
});

describe("a statement PDF's layout cache", () => {
  it('never holds more than its bound of characters, however many distinct words are written', () => {
    const font = fontOf(true);
    let written = 0;
    let most = 0;
    for (let i = 0; i < 4_000; i++) {
      for (const w of wordsOf(i)) {
        font.layout(w);
        written += w.length;
      }
      if (i % 50 === 0) most = Math.max(most, charactersHeld(font));
    }
    most = Math.max(most, charactersHeld(font));
    // the words written are several times the bound: the cache started over, and stayed within it
    expect(written).toBeGreaterThan(4 * CHARACTERS_KEPT);
    expect(most).toBeLessThanOrEqual(CHARACTERS_KEPT);
    expect(most).toBeGreaterThan(CHARACTERS_KEPT / 2);
  });

  it('lays a word out the same after the cache started over as a font that keeps every word', () => {
    const bounded = fontOf(true);
    const kept = fontOf(false);
    const first = wordsOf(0);
    const before = first.map((w) => shape(bounded.layout(w)));
    for (let i = 1; i < 3_000; i++) for (const w of wordsOf(i)) bounded.layout(w);
    expect(Object.hasOwn(bounded.layoutCache, first[0]!)).toBe(false);
    expect(first.map((w) => shape(bounded.layout(w)))).toEqual(before);
    expect(first.map((w) => shape(kept.layout(w)))).toEqual(before);
  });
});
