import type { layFiguresByCharacter } from './pdf-layout';

/**
 * The cells of a statement PDF's tables: each a line of text fitted to its box, left or right aligned. A 100k-line
 * statement writes a million of them, so each is written with the least work that gives pdfkit's own bytes.
 *
 * pdfkit writes a line of text (`text` → `_line` → `_fragment`) as eight content operators: save, the page's
 * flip, begin text, the text matrix at the line's x and y, the font and size, the glyphs (`[<ids> kerning] TJ`),
 * end text, restore; each written as a Buffer of its own, the text encoded again every time and measured again
 * after. Only the glyphs depend on the text, and only the matrix on where it goes. So a text's glyph operators
 * are built once per font, as `_fragment` builds them, and each cell is written as the eight operators in one
 * write, the numbers formatted as pdfkit formats them. A text with a glyph moved off the line (which pdfkit
 * writes with matrices of its own) is left to pdfkit. test/export/statement-pdf-layout.test.ts writes statements
 * both ways (`cellsThroughPdfkit`) and compares every byte.
 */

/** pdfkit's document as this module reaches into it. */
export type Doc = PDFKit.PDFDocument & {
  _font?: Parameters<typeof layFiguresByCharacter>[0] & {
    readonly id: string;
    readonly ascender: number;
    ref(): unknown;
    encode(text: string): [string[], { xAdvance: number; advanceWidth: number; xOffset: number; yOffset: number }[]];
  };
  _fontSize: number;
  addContent(data: string): Doc;
  page: PDFKit.PDFPage & { fonts: Record<string, unknown> };
};

/**
 * Widths of strings at a font and size, measured once: a statement's method, status and payment-method words,
 * dates and headers come back on every row. Each font and size keeps at most KEPT strings (then starts over),
 * so a 100k-line statement's distinct amounts do not pile up.
 */
const KEPT = 20_000;
const widthsByFont = new WeakMap<object, Map<number, Map<string, number>>>();

/** Per font (a document's own), the glyph operators of each text written, or null: pdfkit writes it each time. */
const glyphsByFont = new WeakMap<object, Map<string, string | null>>();

/**
 * A row's cells gathered while it is drawn (`cellsOfRow`), written to the page in one write: pdfkit writes each
 * write as its text and a newline into the page's content, so the row's operators joined by newlines are the
 * same bytes as one write a cell, without a Buffer and a call through the page for each of them.
 */
const ROWS = new WeakMap<object, string[]>();

/** Draws a row's cells (`draw`), written to the page together (ROWS). */
export function cellsOfRow(doc: Doc, draw: () => void): void {
  const pending: string[] = [];
  ROWS.set(doc, pending);
  try {
    draw();
  } finally {
    ROWS.delete(doc);
    if (pending.length > 0) doc.addContent(pending.join('\n'));
  }
}

/** The row's cells gathered so far written out, before pdfkit writes anything of its own. */
function flushRow(doc: Doc): void {
  const pending = ROWS.get(doc);
  if (pending && pending.length > 0) {
    doc.addContent(pending.join('\n'));
    pending.length = 0;
  }
}

/** Documents whose every cell pdfkit writes through its own `text` (tests: the same bytes either way). */
const THROUGH_PDFKIT = new WeakSet<object>();

export function cellsThroughPdfkit(doc: object): void {
  THROUGH_PDFKIT.add(doc);
}

/** `text`'s width at the document's current font and size: pdfkit's own widthOfString, remembered. */
export function widthOf(doc: Doc, text: string): number {
  const font = doc._font;
  if (!font) return doc.widthOfString(text);
  let bySize = widthsByFont.get(font);
  if (!bySize) {
    bySize = new Map();
    widthsByFont.set(font, bySize);
  }
  let widths = bySize.get(doc._fontSize);
  if (!widths) {
    widths = new Map();
    bySize.set(doc._fontSize, widths);
  }
  let width = widths.get(text);
  if (width === undefined) {
    width = doc.widthOfString(text);
    if (widths.size >= KEPT) widths.clear();
    widths.set(text, width);
  }
  return width;
}

/**
 * A cell's text cut to its column with "…" (a text wider than its box would run into the next column), and
 * the width of what is written, without trailing spaces (what a right-aligned text is aligned by).
 */
function fitted(doc: Doc, text: string, width: number): { text: string; width: number } {
  const whole = widthOf(doc, text);
  if (whole <= width) return { text, width: /\s$/.test(text) ? widthOf(doc, text.trimEnd()) : whole };
  let cut = text;
  while (cut.length > 1 && doc.widthOfString(`${cut}…`) > width) cut = cut.slice(0, -1);
  const shown = `${cut.trimEnd()}…`;
  return { text: shown, width: widthOf(doc, shown) };
}

/** A number as pdfkit writes it in a content stream (PDFObject.number): rounded to six decimals. */
const num = (n: number): string => String(Math.round(n * 1e6) / 1e6);

/** The operators pdfkit writes for one line of text at (x, y) at the current font and size, given its glyphs. */
function operators(doc: Doc, font: NonNullable<Doc['_font']>, glyphs: string, x: number, y: number): string {
  const height = doc.page.height;
  // pdfkit's default baseline: the font's ascender below the top of the line
  const dy = (font.ascender / 1000) * doc._fontSize;
  return (
    `q\n1 0 0 -1 0 ${num(height)} cm\nBT\n1 0 0 1 ${num(x)} ${num(height - y - dy)} Tm\n` +
    `/${font.id} ${num(doc._fontSize)} Tf\n${glyphs}\nET\nQ`
  );
}

/**
 * The glyph operators of `text` at the current font, built as pdfkit's `_fragment` builds them: the font's
 * encoding of the text (which also adds its glyphs to the font's subset, as pdfkit's own first write would), in
 * runs of glyph ids each followed by its kerning. Null when a glyph is moved off the line (an x or y offset):
 * pdfkit then writes a matrix of its own for it, and writes that text itself.
 */
function glyphOperators(font: NonNullable<Doc['_font']>, text: string): string | null {
  const [encoded, positions] = font.encode(text);
  if (encoded.length === 0) return null;
  const runs: string[] = [];
  let last = 0;
  const run = (end: number) => {
    if (last < end) {
      const p = positions[end - 1]!;
      runs.push(`<${encoded.slice(last, end).join('')}> ${num(-(p.xAdvance - p.advanceWidth))}`);
    }
    last = end;
  };
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    if (p.xOffset || p.yOffset) return null;
    if (p.xAdvance - p.advanceWidth !== 0) run(i + 1);
  }
  run(positions.length);
  return `[${runs.join(' ')}] TJ`;
}

/**
 * The operators of one line of text at (x, y) from the page's top (pdfkit's coordinates), at the current font and
 * size, for a content stream of the document's own (a form written after its pages: the page footers' "of M").
 * A glyph pdfkit would move off the line is written on it. The font must be named in that stream's resources.
 */
export function textOperators(doc: Doc, text: string, x: number, y: number): string {
  const font = doc._font!;
  const glyphs = glyphOperators(font, text) ?? `[<${font.encode(text)[0].join('')}> 0] TJ`;
  return operators(doc, font, glyphs, x, y);
}

/** One line of text at (x, y), as pdfkit's `text(text, x, y, { lineBreak: false })` writes it. */
function line(doc: Doc, text: string, x: number, y: number): void {
  const font = doc._font;
  if (!font || THROUGH_PDFKIT.has(doc)) {
    flushRow(doc);
    doc.text(text, x, y, { lineBreak: false });
    return;
  }
  let known = glyphsByFont.get(font);
  if (!known) {
    known = new Map();
    glyphsByFont.set(font, known);
  }
  let glyphs = known.get(text);
  if (glyphs === undefined) {
    glyphs = glyphOperators(font, text);
    if (known.size >= KEPT) known.clear();
    known.set(text, glyphs);
  }
  if (glyphs === null) {
    flushRow(doc);
    doc.text(text, x, y, { lineBreak: false });
    return;
  }
  // pdfkit names the fonts each page uses (its resources) as it writes text
  if (doc.page.fonts[font.id] == null) doc.page.fonts[font.id] = font.ref();
  const ops = operators(doc, font, glyphs, x, y);
  const row = ROWS.get(doc);
  if (row) row.push(ops);
  else doc.addContent(ops);
  doc.x = x;
  doc.y = y;
}

/**
 * One line of text in a box `width` wide at (x, y), left or right aligned, written at its computed x without a
 * `width` option: given one, pdfkit runs its line wrapper (line breaking, every word measured again) even with
 * lineBreak off, all for a text already fitted to its box. The x is the one pdfkit would have computed
 * (x + (width − text's width) for right), so the page is the same. The table sets doc.x and doc.y itself.
 */
export function cell(doc: Doc, text: string, x: number, y: number, width: number, align: 'left' | 'right'): void {
  if (!text) return;
  const flat = text.includes('\n') ? text.replace(/\n/g, ' ') : text;
  // a right-aligned cell is a figure: cut with "…" it would state no amount at all, so it is written smaller
  const whole = align === 'right' ? widthOf(doc, flat) : 0;
  if (whole > width) {
    const size = doc._fontSize;
    doc.fontSize(Math.floor(((size * width) / whole) * 100) / 100);
    try {
      const fit = fitted(doc, flat, width);
      line(doc, fit.text, x + (width - fit.width), y);
    } finally {
      doc.fontSize(size);
    }
    return;
  }
  const fit = fitted(doc, flat, width);
  line(doc, fit.text, align === 'right' ? x + (width - fit.width) : x, y);
}

/** Words in lines no wider than `width` at the current font. */
export function wrapped(doc: PDFKit.PDFDocument, text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && doc.widthOfString(next) > width) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  return [...lines, line];
}
