/**
 * Glyph layout of a statement PDF's figures without shaping each one anew. pdfkit shapes every distinct word
 * through fontkit (script, features, lookups: tens of microseconds a word) and caches it per word; a statement's
 * amounts, dates and times are nearly all distinct, so a 100k-line PDF spent a fifth of its time shaping them.
 *
 * A word made only of digits and the signs around them (no letter, so always shaped as the same script) is laid
 * out here as its characters' own layouts side by side, where the font was seen to do exactly that for each pair
 * of neighbours in the word (same glyphs, same advances, no kerning, offset or ligature): the same glyphs and
 * positions pdfkit would have got, so the file's bytes are unchanged (test/export/statement-pdf-layout.test.ts
 * writes a statement both ways and compares them). Any other word goes to pdfkit's own layout.
 */

interface Position {
  xAdvance: number;
  yAdvance: number;
  xOffset: number;
  yOffset: number;
  advanceWidth: number;
}

interface Glyph {
  readonly id: number;
  readonly codePoints: readonly number[];
}

interface Run {
  readonly glyphs: readonly Glyph[];
  readonly positions: readonly Position[];
  readonly advanceWidth: number;
}

/** The part of pdfkit's embedded font (its `_font`) this module wraps. */
interface LaidOutFont {
  readonly name: string;
  layoutRun(text: string, features?: unknown): Run;
}

// digits, the signs of amounts, dates and times, the spaces inside them; no letter (a letter decides the script)
const FIGURES = /^[0-9 ,.:+\-−\u00a0/()…]+$/;

/** Per font (by its PostScript name), whether a pair of characters lays out as the two side by side. */
const pairsByFont = new Map<string, Map<string, boolean>>();

const FAST = new WeakSet<object>();

function samePositions(a: readonly Position[], b: readonly Position[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (p, i) =>
        p.xAdvance === b[i]!.xAdvance &&
        p.yAdvance === b[i]!.yAdvance &&
        p.xOffset === b[i]!.xOffset &&
        p.yOffset === b[i]!.yOffset &&
        p.advanceWidth === b[i]!.advanceWidth,
    )
  );
}

function sameGlyphs(a: readonly Glyph[], b: readonly Glyph[]): boolean {
  return (
    a.length === b.length &&
    a.every((g, i) => g.id === b[i]!.id && g.codePoints.join(',') === b[i]!.codePoints.join(','))
  );
}

/** The run of a word built from its characters' runs; its width summed in the order fontkit sums it. */
function composed(parts: readonly Run[]): Run {
  const glyphs = parts.flatMap((p) => p.glyphs);
  const positions = parts.flatMap((p) => p.positions);
  return {
    glyphs,
    positions,
    get advanceWidth() {
      let width = 0;
      for (const p of positions) width += p.xAdvance;
      return width;
    },
  };
}

/** Makes `font` (a pdfkit document's current font) lay figures out from its characters; once per font. */
export function layFiguresByCharacter(font: LaidOutFont | undefined): void {
  if (!font || FAST.has(font)) return;
  FAST.add(font);
  const own = font.layoutRun.bind(font);
  const chars = new Map<string, Run>();
  const charRun = (c: string) => {
    let run = chars.get(c);
    if (!run) {
      run = own(c);
      chars.set(c, run);
    }
    return run;
  };
  let pairs = pairsByFont.get(font.name);
  if (!pairs) {
    pairs = new Map();
    pairsByFont.set(font.name, pairs);
  }
  const known = pairs;
  const pairFits = (a: string, b: string) => {
    const key = a + b;
    let ok = known.get(key);
    if (ok === undefined) {
      const whole = own(key);
      const side = [charRun(a), charRun(b)];
      ok =
        sameGlyphs(
          whole.glyphs,
          side.flatMap((r) => r.glyphs),
        ) &&
        samePositions(
          whole.positions,
          side.flatMap((r) => r.positions),
        );
      known.set(key, ok);
    }
    return ok;
  };
  font.layoutRun = (text: string, features?: unknown): Run => {
    if (features || text.length < 2 || !FIGURES.test(text)) return own(text, features);
    for (let i = 0; i + 1 < text.length; i++) if (!pairFits(text[i]!, text[i + 1]!)) return own(text, features);
    return composed([...text].map(charRun));
  };
}

/** The part of pdfkit's embedded font its per-word cache lives in. */
interface CachedFont {
  layoutCache?: object;
  layoutRun(text: string, features?: unknown): Run;
}

// words kept in a font's layout cache before it starts over
const WORDS_KEPT = 20_000;
const BOUNDED = new WeakSet<object>();

/**
 * pdfkit keeps the layout of every distinct word a document writes, for as long as the document: a statement's
 * order ids and amounts are nearly all distinct, so a 100k-line PDF held a few hundred megabytes of laid-out
 * words. The cache only saves work (a word laid out again is laid out the same), so once it holds WORDS_KEPT
 * words it starts over, counted by its misses (each a call of `layoutRun`). Once per font.
 */
export function boundLayoutCache(font: CachedFont | undefined): void {
  if (!font || BOUNDED.has(font) || !font.layoutCache) return;
  BOUNDED.add(font);
  const run = font.layoutRun.bind(font);
  let missed = 0;
  font.layoutRun = (text: string, features?: unknown): Run => {
    // a word with features is never cached by pdfkit
    if (!features && ++missed > WORDS_KEPT) {
      font.layoutCache = Object.create(null) as object;
      missed = 1;
    }
    return run(text, features);
  };
}
