import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * A statement PDF's fonts parsed once a process rather than once a document. pdfkit opens each font file anew
 * for every document (fontkit reads the file's tables as they are first asked for): a statement's first lines
 * of text decoded the fonts' kerning and substitution lookups, and its end decoded the glyph tables again to
 * embed the subset, some 25–40 ms of CPU a PDF whatever its length (docs/scale.md, "Statements, sixth session").
 *
 * What a document may share is what fontkit decodes from the file and never changes: its tables (`_tables`,
 * lookups decoded on first use and kept in them). What it must not share is what depends on the order in which
 * the document asks for glyphs: fontkit keeps a glyph object per glyph id, made with the characters of the
 * first request (pdfkit writes them in the PDF's ToUnicode map), and its layout engine finds glyphs through
 * that cache. So each document gets a view of the parsed font with a glyph cache and a layout engine of its
 * own (made on its first layout, on the view), and a subset of its own: every glyph object the document sees
 * is made in its own order, as with a font opened for it alone. The file's bytes are the same
 * (test/export/statement-pdf-fonts.test.ts writes statements both ways; scripts/compare-outputs.ts).
 */

/** The part of fontkit's font this module relies on. */
interface ParsedFont {
  _glyphs: Record<number, unknown>;
  createSubset(): unknown;
}

/** pdfkit's embedded font (its `_font`): the fontkit font it lays out with and the subset it embeds. */
interface EmbeddedFont {
  font: ParsedFont;
  subset: unknown;
}

const require = createRequire(import.meta.url);

/** fontkit as pdfkit itself requires it (the same module, so the same font class). */
let fontkitLoaded: { create(bytes: Uint8Array): ParsedFont } | undefined;
const fontkit = () =>
  (fontkitLoaded ??= createRequire(require.resolve('pdfkit'))('fontkit') as { create(b: Uint8Array): ParsedFont });

const files = new Map<string, { bytes: Buffer; parsed?: ParsedFont }>();

function fileOf(path: string) {
  let f = files.get(path);
  if (!f) {
    f = { bytes: readFileSync(path) };
    files.set(path, f);
  }
  return f;
}

/** A font file's bytes, read once: what a document registers the font with (pdfkit reads a path each time). */
export function fontBytes(path: string): Buffer {
  return fileOf(path).bytes;
}

const viewed = new WeakSet<object>();

/** Documents whose fonts are opened by pdfkit alone (tests: the same bytes either way). */
const OWN_FONTS = new WeakSet<object>();

export function fontsOpenedByPdfkit(doc: object): void {
  OWN_FONTS.add(doc);
}

/**
 * Makes `font` (a document's font, just opened by pdfkit from `path`) lay out and embed through a view of the
 * font parsed once for the process. Once per font, before it lays out any text.
 */
export function shareParsedFont(doc: object, font: EmbeddedFont | undefined, path: string): void {
  if (!font || viewed.has(font) || OWN_FONTS.has(doc)) return;
  viewed.add(font);
  const file = fileOf(path);
  file.parsed ??= fontkit().create(file.bytes);
  const view = Object.create(file.parsed) as ParsedFont;
  view._glyphs = {};
  font.font = view;
  font.subset = view.createSubset();
}
