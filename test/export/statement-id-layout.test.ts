import { createRequire } from 'node:module';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { describe, expect, it, vi } from 'vitest';
import {
  type FontkitFont,
  ID_WORD,
  idLayouter,
  idRulesOf,
  layFiguresByCharacter,
} from '../../src/export/statements/pdf-layout';

/**
 * A statement's order ids and payment ids are laid out from their characters and the kerning of each pair of
 * neighbours (pdf-layout.ts, `idLayouter`), not shaped by fontkit word by word. Here, for both fonts of the
 * statements, tens of thousands of generated words of the shapes a statement writes (UUIDs, order ids, random
 * words of ASCII letters, digits and hyphens of every length up to 40, mixed case) are laid out both ways and
 * compared field by field: glyph ids and code points, every position field, the run's width. The words a lookup
 * can change (DejaVu's ff, fi, fl ligatures) and words of other characters are left to fontkit.
 */

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONTS = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'];

interface PdfkitFont {
  readonly name: string;
  readonly scale: number;
  readonly font: FontkitFont;
  layoutRun(text: string): {
    glyphs: readonly { id: number; codePoints: readonly number[] }[];
    positions: readonly Record<string, number>[];
    advanceWidth: number;
  };
}

/** pdfkit's embedded font for `file`, in a document of its own. */
function pdfkitFont(file: string): { font: PdfkitFont; doc: PDFKit.PDFDocument } {
  const doc = new PDFDocument();
  doc.registerFont('f', path.join(FONT_DIR, file));
  doc.font('f');
  return { font: (doc as unknown as { _font: PdfkitFont })._font, doc };
}

/** A deterministic generator (mulberry32). */
function randomOf(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-';

function wordsOf(count: number, seed: number): string[] {
  const random = randomOf(seed);
  const pick = (chars: string, n: number) =>
    Array.from({ length: n }, () => chars[Math.floor(random() * chars.length)]).join('');
  const shapes = [
    // a payment's UUID
    () => [8, 4, 4, 4, 12].map((n) => pick(HEX, n)).join('-'),
    // an order id, as the demo's shops write them
    () => `SBX-${pick('0123456789ABCDEF', 6)}-${pick('0123456789', 6)}`,
    // any word of letters, digits and hyphens, 1 to 40 long
    () => pick(ALNUM, 1 + Math.floor(random() * 40)),
    // mixed case letters only, and ids in upper case
    () => pick('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 1 + Math.floor(random() * 40)),
    () =>
      [8, 4, 4, 4, 12]
        .map((n) => pick(HEX, n))
        .join('-')
        .toUpperCase(),
  ];
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length]!());
}

interface Laid {
  readonly glyphs: readonly { readonly id: number; readonly codePoints: readonly number[] }[];
  readonly positions: readonly object[];
  readonly advanceWidth: number;
}

/** Where two runs differ: glyph ids, code points, any position field (-0 is not 0), the run's width. */
function differences(mine: Laid, own: Laid): string[] {
  const out: string[] = [];
  if (mine.glyphs.length !== own.glyphs.length || mine.positions.length !== own.positions.length) return ['length'];
  mine.glyphs.forEach((g, i) => {
    const o = own.glyphs[i]!;
    if (g.id !== o.id) out.push(`glyph ${i}`);
    if (g.codePoints.join() !== o.codePoints.join()) out.push(`code points ${i}`);
  });
  mine.positions.forEach((mp, i) => {
    const p = mp as Record<string, number>;
    const o = own.positions[i] as Record<string, number>;
    for (const key of ['xAdvance', 'yAdvance', 'xOffset', 'yOffset', 'advanceWidth'])
      if (!Object.is(p[key], o[key])) out.push(`${key} ${i}`);
    if (Object.keys(p).length !== Object.keys(o).length) out.push(`fields ${i}`);
  });
  if (!Object.is(mine.advanceWidth, own.advanceWidth)) out.push('advanceWidth');
  return out;
}

describe('statement PDF: ids laid out from their characters and their pairs', () => {
  for (const file of FONTS) {
    it(`gives fontkit's own layout for 50,000 generated id words in ${file}, and leaves ligatures to it`, () => {
      const { font: reference, doc } = pdfkitFont(file);
      const { font, doc: other } = pdfkitFont(file);
      const lay = idLayouter(font.font, font.name, font.scale)!;
      expect(lay).not.toBeNull();
      let fast = 0;
      const wrong: string[] = [];
      let uuids = 0;
      let fastUuids = 0;
      const words = wordsOf(50_000, 26);
      for (const word of words) {
        if (!ID_WORD.test(word)) continue;
        const mine = lay(word);
        const uuid = /^[0-9a-f]{8}-/.test(word);
        if (uuid) uuids++;
        if (!mine) {
          // only a word holding a pair fontkit ligates (or one letter) is left to it
          expect(/f[fil]/.test(word) || word.length === 1, word).toBe(true);
          continue;
        }
        fast++;
        if (uuid) fastUuids++;
        const own = reference.layoutRun(word);
        const differs = differences(mine, own);
        if (differs.length > 0) wrong.push(`${word}: ${differs.join(', ')}`);
      }
      expect(wrong).toEqual([]);
      // most words take the fast path (a UUID is left to fontkit only when it holds "ff")
      expect(fast).toBeGreaterThan(words.length * 0.85);
      expect(fastUuids).toBeGreaterThan(uuids * 0.85);
      doc.end();
      other.end();
    }, 120_000);
  }

  it('kerns: the composed words carry pair adjustments (a path for kerning-free pairs only would miss them)', () => {
    const { font: reference, doc } = pdfkitFont('DejaVuSans.ttf');
    const own = reference.layoutRun('AV-To');
    const plain = [...'AV-To'].map((c) => reference.layoutRun(c).positions[0]!.xAdvance);
    expect(own.positions.map((p) => p.xAdvance)).not.toEqual(plain);
    const { font, doc: other } = pdfkitFont('DejaVuSans.ttf');
    const mine = idLayouter(font.font, font.name, font.scale)!('AV-To')!;
    expect(mine.positions).toEqual(own.positions);
    doc.end();
    other.end();
  });

  it("reads DejaVu's tables: its only changes to id characters are the ff, fi, fl ligatures", () => {
    for (const file of FONTS) {
      const { font, doc } = pdfkitFont(file);
      const rules = idRulesOf(font.font)!;
      expect(rules.script).toBe('latn');
      expect(rules.glyphs.size).toBe(0);
      const id = (c: string) => font.font.glyphForCodePoint(c.charCodeAt(0)).id;
      expect(rules.pairs).toEqual(new Set(['ff', 'fi', 'fl'].map((p) => id(p[0]!) * 65_536 + id(p[1]!))));
      doc.end();
    }
  });

  it('leaves to fontkit the words a ligature can change and the words of other characters', () => {
    const { font, doc } = pdfkitFont('DejaVuSans.ttf');
    const { font: reference, doc: other } = pdfkitFont('DejaVuSans.ttf');
    layFiguresByCharacter(font as unknown as Parameters<typeof layFiguresByCharacter>[0]);
    const layout = vi.spyOn(font.font as unknown as { layout: () => unknown }, 'layout');
    // warm: the characters and pairs of these words are laid out once
    for (const word of ['9f2c-ab01', 'SBX-91937E-008102']) font.layoutRun(word);
    layout.mockClear();
    font.layoutRun('9f2cab01-SBX');
    expect(layout).not.toHaveBeenCalled();
    // and a word whose characters and pairs are known, holding a ligature, is shaped by fontkit alone
    font.layoutRun('a-of');
    font.layoutRun('xff');
    layout.mockClear();
    font.layoutRun('off-a');
    expect(layout.mock.calls).toEqual([['off-a', undefined]]);
    for (const word of ['off-41a', 'fi-2', 'SBX-FF-fl', 'ff', 'Квітка', 'order 7', 'a_b', 'x.y']) {
      layout.mockClear();
      const mine = font.layoutRun(word);
      // its last call is pdfkit's own: the word, no script (what its characters and pairs took before it, if new)
      expect(layout.mock.calls.at(-1), word).toEqual([word, undefined]);
      const own = reference.layoutRun(word);
      expect(
        mine.glyphs.map((g) => g.id),
        word,
      ).toEqual(own.glyphs.map((g) => g.id));
      expect(mine.positions, word).toEqual(own.positions);
    }
    // a ligature: one glyph for two characters, as fontkit writes it
    expect(font.layoutRun('off-41a').glyphs.length).toBe(6);
    layout.mockRestore();
    doc.end();
    other.end();
  });
});
