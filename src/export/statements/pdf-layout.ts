/**
 * Glyph layout of a statement PDF's figures and ids without shaping each one anew. pdfkit shapes every distinct
 * word through fontkit (script, features, lookups: tens of microseconds a word) and caches it per word; a
 * statement's amounts, dates, times, order ids and payment ids are nearly all distinct, so a large PDF spent a
 * good part of its time shaping them.
 *
 * A word made only of digits and the signs around them (no letter, so always shaped as the same script) is laid
 * out here as its characters' own layouts side by side, where the font was seen to do exactly that for each pair
 * of neighbours in the word (same glyphs, same advances, no kerning, offset or ligature). A word of ASCII letters,
 * digits and hyphens (an order id, a payment's UUID) is laid out from its characters and the kerning of each pair
 * of neighbours, where the font's tables show that is all fontkit can do to such a word (`idLayouter` below).
 * Either way the glyphs and positions are the ones pdfkit would have got, so the file's bytes are unchanged
 * (test/export/statement-pdf-layout.test.ts writes statements both ways and compares them;
 * test/export/statement-id-layout.test.ts compares the layouts of many generated words with fontkit's own). Any
 * other word goes to pdfkit's own layout.
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
  /** fontkit's font, and the factory from its units to pdfkit's (1000 / unitsPerEm) */
  readonly font?: FontkitFont;
  readonly scale?: number;
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

/** The run of a word built from its characters' runs. */
function composed(parts: readonly Run[]): Run {
  return runOf(
    parts.flatMap((p) => p.glyphs),
    parts.flatMap((p) => p.positions),
  );
}

/** A run of these glyphs at these positions, its width summed in the order fontkit sums it. */
function runOf(glyphs: readonly Glyph[], positions: readonly Position[]): Run {
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
  const ids = font.font && font.scale ? idLayouter(font.font, font.name, font.scale) : null;
  font.layoutRun = (text: string, features?: unknown): Run => {
    if (features || text.length < 2) return own(text, features);
    if (FIGURES.test(text)) {
      for (let i = 0; i + 1 < text.length; i++) if (!pairFits(text[i]!, text[i + 1]!)) return own(text, features);
      return composed([...text].map(charRun));
    }
    return (ids && ID_WORD.test(text) && ids(text)) || own(text, features);
  };
}

/** The part of pdfkit's embedded font its per-word cache lives in. */
interface CachedFont {
  layoutCache?: object;
  layoutRun(text: string, features?: unknown): Run;
}

// characters of the words kept in a font's layout cache before it starts over: each costs a glyph position of
// about 150 bytes, so a document's cache holds a few megabytes a font
export const CHARACTERS_KEPT = 50_000;
const BOUNDED = new WeakSet<object>();

/**
 * pdfkit keeps the layout of every distinct word a document writes, for as long as the document: a statement's
 * order ids and amounts are nearly all distinct, so a 100k-line PDF held a few hundred megabytes of laid-out
 * words. The cache only saves work (a word laid out again is laid out the same), so once the words it holds
 * have CHARACTERS_KEPT characters it starts over, counted by its misses (each a call of `layoutRun`). Counted by
 * characters, not words: a word's layout is a glyph and a position a character, and an order id up to 36 of
 * them (20,000 words a font held two 20k-line statements written at once at 730 MB of heap, against 264 MB so
 * bounded: docs/scale.md, "Statements' memory"). Once per font.
 */
export function boundLayoutCache(font: CachedFont | undefined): void {
  if (!font || BOUNDED.has(font) || !font.layoutCache) return;
  BOUNDED.add(font);
  const run = font.layoutRun.bind(font);
  let kept = 0;
  font.layoutRun = (text: string, features?: unknown): Run => {
    // a word with features is never cached by pdfkit
    if (!features) {
      kept += text.length;
      if (kept > CHARACTERS_KEPT) {
        font.layoutCache = Object.create(null) as object;
        kept = text.length;
      }
    }
    return run(text, features);
  };
}

/*
 * Ids. fontkit shapes a word under the script of its first character that is not Common or Inherited, with the
 * features its shaper plans for that script (for Latin: fontkit's default shaper, the same global features on
 * every glyph), through the font's GSUB lookups (substitutions, ligatures) then its GPOS lookups (positions).
 * A word of ASCII letters, digits and hyphens with at least one letter is always Latin. For such a word, once
 * the font's tables show that
 *  - no GSUB lookup of those features can change a glyph of these characters, except where a word holds a
 *    given pair of neighbours (a ligature's first two glyphs) or a given character: such words go to fontkit;
 *  - every GPOS lookup of those features that can start at one of these glyphs adjusts that glyph alone
 *    (single) or it and the next one (pair: kerning), fontkit trying every glyph in turn;
 *  - no lookup that can touch them skips them (all are base glyphs, no lookup ignores base glyphs), and the
 *    font has no variations and no `kern` table in use,
 * each glyph's position is its own layout plus what the pair with its left neighbour adds to the right glyph
 * and what the pair with its right neighbour adds to the left one: fontkit's whole-word result, in integer font
 * units (so the sum's order does not matter), scaled as pdfkit scales it. Each pair is laid out once by fontkit
 * under the word's script (a pair like "05" alone would be shaped as another script) and must give the two
 * characters' own glyphs; its adjustments are kept per font.
 */

/** An id word: ASCII letters, digits, hyphens, at least one letter (which makes the word's script Latin). */
export const ID_WORD = /^[A-Za-z0-9-]*[A-Za-z][A-Za-z0-9-]*$/;
const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-';

interface Coverage {
  readonly version: number;
}
interface ClassDef {
  readonly version: number;
}
interface Rule {
  readonly backtrack?: readonly number[];
  readonly input?: readonly number[];
  readonly lookahead?: readonly number[];
  readonly classes?: readonly number[];
}
type RuleSets = readonly (readonly Rule[] | undefined | null)[];
/** The fields of fontkit's GSUB and GPOS subtables read here (fontkit's own names). */
interface SubTable {
  readonly version?: number;
  readonly lookupType?: number;
  readonly extension?: SubTable;
  readonly coverage?: Coverage;
  readonly markCoverage?: Coverage;
  readonly mark1Coverage?: Coverage;
  readonly ligatureSets?: { get(index: number): readonly { readonly components: readonly number[] }[] };
  readonly ruleSets?: RuleSets;
  readonly chainRuleSets?: RuleSets;
  readonly classSet?: RuleSets;
  readonly chainClassSet?: RuleSets;
  readonly classDef?: ClassDef;
  readonly inputClassDef?: ClassDef;
  readonly backtrackClassDef?: ClassDef;
  readonly lookaheadClassDef?: ClassDef;
  readonly coverages?: readonly Coverage[];
  readonly inputCoverage?: readonly Coverage[];
  readonly backtrackCoverage?: readonly Coverage[];
  readonly lookaheadCoverage?: readonly Coverage[];
}
interface Lookup {
  readonly lookupType: number;
  readonly flags?: { readonly flags?: { readonly ignoreBaseGlyphs?: boolean } };
  readonly subTables: readonly SubTable[];
}
/** fontkit's GSUB or GPOS processor (OTProcessor): the script's features, their lookups, coverage and classes. */
interface Processor {
  readonly variationsIndex: number;
  readonly features: Readonly<Record<string, unknown>>;
  selectScript(script: string): unknown;
  lookupsForFeatures(features: string[]): readonly { readonly lookup: Lookup }[];
  coverageIndex(coverage: Coverage, glyph: number): number;
  getClassID(glyph: number, classDef: ClassDef): number;
}
interface FontkitGlyph extends Glyph {
  readonly advanceWidth: number;
}
interface FontkitRun {
  readonly glyphs: readonly FontkitGlyph[];
  readonly positions: readonly Position[];
  readonly script: string;
  readonly features: Readonly<Record<string, unknown>>;
}
/** fontkit's font as this module reads it (`_layoutEngine.engine` is its OpenType engine). */
export interface FontkitFont {
  readonly morx?: unknown;
  readonly kern?: unknown;
  readonly GDEF?: { readonly glyphClassDef?: ClassDef; readonly itemVariationStore?: unknown };
  readonly _layoutEngine?: { readonly engine?: { GSUBProcessor?: Processor | null; GPOSProcessor?: Processor | null } };
  glyphForCodePoint(codePoint: number): { readonly id: number };
  layout(text: string, features?: unknown, script?: string): FontkitRun;
}

/** What fontkit's lookups can do to a word of id characters: glyphs and neighbour pairs that send it to fontkit. */
interface IdRules {
  readonly script: string;
  /** glyph ids a lookup may change */
  readonly glyphs: Set<number>;
  /** pairs of glyph ids (first × 65536 + second) a lookup may join */
  readonly pairs: Set<number>;
}

const pairKey = (a: number, b: number) => a * 65_536 + b;

/** The alphabet's glyphs that `coverage` holds. */
function covered(proc: Processor, coverage: Coverage | undefined, alphabet: ReadonlySet<number>): number[] {
  return coverage ? [...alphabet].filter((g) => proc.coverageIndex(coverage, g) >= 0) : [];
}

/**
 * The alphabet's glyphs at which a (chaining) context subtable could match a word of alphabet glyphs only: a
 * rule matches only if each glyph or class or coverage it asks for is one an alphabet glyph has. Null when the
 * subtable has a shape not read here.
 */
function contextStarts(proc: Processor, t: SubTable, chained: boolean, alphabet: ReadonlySet<number>): number[] | null {
  const first = t.version === 3 ? (chained ? t.inputCoverage?.[0] : t.coverages?.[0]) : t.coverage;
  const starts = covered(proc, first, alphabet);
  if (starts.length === 0) return [];
  if (t.version === 3) {
    const all = chained
      ? [...(t.backtrackCoverage ?? []), ...(t.inputCoverage ?? []), ...(t.lookaheadCoverage ?? [])]
      : (t.coverages ?? []);
    return all.every((c) => covered(proc, c, alphabet).length > 0) ? starts : [];
  }
  const sets = t.version === 1 ? (chained ? t.chainRuleSets : t.ruleSets) : chained ? t.chainClassSet : t.classSet;
  if (!Array.isArray(sets)) return null;
  const inputDef = chained ? t.inputClassDef : t.classDef;
  const classes = (def: ClassDef | undefined) => new Set(def ? [...alphabet].map((g) => proc.getClassID(g, def)) : []);
  const [back, input, ahead] = [classes(t.backtrackClassDef), classes(inputDef), classes(t.lookaheadClassDef)];
  const can = (rule: Rule) =>
    t.version === 1
      ? [...(rule.backtrack ?? []), ...(rule.input ?? []), ...(rule.lookahead ?? [])].every((g) => alphabet.has(g))
      : (rule.backtrack ?? []).every((c) => back.has(c)) &&
        (chained ? (rule.input ?? []) : (rule.classes ?? [])).every((c) => input.has(c)) &&
        (rule.lookahead ?? []).every((c) => ahead.has(c));
  if (t.version !== 1 && (t.version !== 2 || !inputDef)) return null;
  return starts.filter((g) => {
    const index = t.version === 1 ? proc.coverageIndex(first!, g) : proc.getClassID(g, inputDef!);
    return (sets[index] ?? []).some(can);
  });
}

/** Adds what a GSUB subtable can do to alphabet words to `rules`; false when it cannot be told. */
function gsubReach(proc: Processor, type: number, t: SubTable, alphabet: ReadonlySet<number>, rules: IdRules): boolean {
  if (type === 7)
    return t.extension && t.lookupType ? gsubReach(proc, t.lookupType, t.extension, alphabet, rules) : false;
  if (type === 1 || type === 2 || type === 3) {
    for (const g of covered(proc, t.coverage, alphabet)) rules.glyphs.add(g);
    return true;
  }
  if (type === 4) {
    if (!t.ligatureSets || !t.coverage) return false;
    for (const g of covered(proc, t.coverage, alphabet))
      for (const { components } of t.ligatureSets.get(proc.coverageIndex(t.coverage, g))) {
        if (!components.every((c) => alphabet.has(c))) continue;
        if (components.length === 0) rules.glyphs.add(g);
        else rules.pairs.add(pairKey(g, components[0]!));
      }
    return true;
  }
  if (type === 5 || type === 6) {
    const starts = contextStarts(proc, t, type === 6, alphabet);
    for (const g of starts ?? []) rules.glyphs.add(g);
    return starts !== null;
  }
  return false;
}

/** Whether a GPOS subtable does to alphabet words nothing but adjust a glyph (single) or a glyph and the next (pair). */
function gposLocal(proc: Processor, type: number, t: SubTable, alphabet: ReadonlySet<number>): boolean {
  if (type === 9) return t.extension && t.lookupType ? gposLocal(proc, t.lookupType, t.extension, alphabet) : false;
  if (type === 1 || type === 2) return true;
  if (type >= 3 && type <= 6)
    return covered(proc, t.coverage ?? t.markCoverage ?? t.mark1Coverage, alphabet).length === 0;
  if (type === 7 || type === 8) return contextStarts(proc, t, type === 8, alphabet)?.length === 0;
  return false;
}

/** Whether any subtable of `lookup` can start at an alphabet glyph (then it must not skip base glyphs). */
function touches(proc: Processor, lookup: Lookup, alphabet: ReadonlySet<number>): boolean {
  return lookup.subTables.some((t) => {
    const inner = t.extension ?? t;
    const first =
      inner.coverage ?? inner.markCoverage ?? inner.mark1Coverage ?? inner.inputCoverage?.[0] ?? inner.coverages?.[0];
    return !first || covered(proc, first, alphabet).length > 0;
  });
}

/**
 * The rules for laying ids out in `font` without fontkit, or null when its tables do not show the layout of an
 * id to be its characters' and their pairs' (see above). Read from fontkit's own processors, for the script and
 * features fontkit shapes a Latin word with.
 */
export function idRulesOf(font: FontkitFont): IdRules | null {
  const engine = font._layoutEngine?.engine;
  const gsub = engine?.GSUBProcessor ?? null;
  const gpos = engine?.GPOSProcessor ?? null;
  const classDef = font.GDEF?.glyphClassDef;
  if (font.morx || !engine || !(gsub || gpos) || !classDef || font.GDEF?.itemVariationStore) return null;
  const probe = font.layout('a');
  const rules: IdRules = { script: probe.script, glyphs: new Set(), pairs: new Set() };
  const features = Object.keys(probe.features);
  const alphabet = new Set([...ID_CHARS].map((c) => font.glyphForCodePoint(c.charCodeAt(0)).id));
  const anyProc = (gsub ?? gpos)!;
  // one glyph per character, each a base glyph (no lookup flag then skips some of them and not others)
  if (alphabet.size !== ID_CHARS.length || alphabet.has(0)) return null;
  if ([...alphabet].some((g) => anyProc.getClassID(g, classDef) !== 1)) return null;
  for (const [proc, isGsub] of [
    [gsub, true],
    [gpos, false],
  ] as const) {
    if (!proc) continue;
    proc.selectScript(rules.script);
    if (proc.variationsIndex !== -1) return null;
    for (const { lookup } of proc.lookupsForFeatures(features)) {
      if (lookup.flags?.flags?.ignoreBaseGlyphs && touches(proc, lookup, alphabet)) return null;
      for (const t of lookup.subTables)
        if (
          isGsub
            ? !gsubReach(proc, lookup.lookupType, t, alphabet, rules)
            : !gposLocal(proc, lookup.lookupType, t, alphabet)
        )
          return null;
    }
  }
  // fontkit kerns with the `kern` table only when the script's GPOS features have no kerning
  if (font.kern && !(gpos && 'kern' in gpos.features)) return null;
  return rules;
}

/** A character's layout in font units, under the ids' script. */
interface Char {
  readonly glyph: FontkitGlyph;
  readonly at: readonly [number, number, number, number];
}
/** What a pair adds to its left glyph and to its right one (xAdvance, yAdvance, xOffset, yOffset each). */
type PairDelta = readonly [number, number, number, number, number, number, number, number];

const fields = (p: Position) => [p.xAdvance, p.yAdvance, p.xOffset, p.yOffset] as const;

/** What the pair laid out as `whole` adds to its characters' own layouts. */
function pairDelta(whole: FontkitRun, left: Char, right: Char): number[] {
  const [l, r] = [fields(whole.positions[0]!), fields(whole.positions[1]!)];
  return [0, 1, 2, 3].map((k) => l[k]! - left.at[k]!).concat([0, 1, 2, 3].map((k) => r[k]! - right.at[k]!));
}

/** Per font (by its PostScript name): its id rules (null: none) and the adjustments of each pair of characters. */
const idsByFont = new Map<string, { rules: IdRules | null; pairs: (PairDelta | null | undefined)[] }>();

/**
 * A function laying an id word out as fontkit would in `font` (pdfkit's font `name`, at pdfkit's `scale`), or
 * null for a word it leaves to fontkit (a pair or character a lookup may change, a pair not laid out as its
 * characters). Null when the font's tables do not allow it at all.
 */
export function idLayouter(font: FontkitFont, name: string, scale: number): ((text: string) => Run | null) | null {
  let known = idsByFont.get(name);
  if (!known) {
    known = { rules: idRulesOf(font), pairs: [] };
    idsByFont.set(name, known);
  }
  const { rules, pairs } = known;
  if (!rules) return null;
  // glyph objects are this font's own (pdfkit reads their ids, code points and widths when it writes them)
  const chars: (Char | null | undefined)[] = [];
  const charOf = (code: number): Char | null => {
    let c = chars[code];
    if (c === undefined) {
      const run = font.layout(String.fromCharCode(code), undefined, rules.script);
      const glyph = run.glyphs[0]!;
      const at = fields(run.positions[0]!);
      const own = font.glyphForCodePoint(code).id;
      const fits = run.glyphs.length === 1 && glyph.id === own && !rules.glyphs.has(own);
      c = fits && at.every(Number.isInteger) ? { glyph, at } : null;
      chars[code] = c;
    }
    return c;
  };
  const pairOf = (a: number, b: number): PairDelta | null => {
    const key = a * 128 + b;
    let d = pairs[key];
    if (d === undefined) {
      const [ca, cb] = [charOf(a)!, charOf(b)!];
      // a pair a ligature may join is not laid out: the word goes to fontkit whole
      const whole = rules.pairs.has(pairKey(ca.glyph.id, cb.glyph.id))
        ? null
        : font.layout(String.fromCharCode(a, b), undefined, rules.script);
      const fits =
        whole !== null &&
        whole.glyphs.length === 2 &&
        whole.glyphs[0]!.id === ca.glyph.id &&
        whole.glyphs[1]!.id === cb.glyph.id;
      const delta = fits ? pairDelta(whole, ca, cb) : [];
      d = fits && delta.every(Number.isInteger) ? (delta as unknown as PairDelta) : null;
      pairs[key] = d;
    }
    return d;
  };
  return (text) => layId(text, charOf, pairOf, scale);
}

/** An id word's run: each glyph at its own layout plus its pairs' adjustments, scaled as pdfkit scales them. */
function layId(
  text: string,
  charOf: (code: number) => Char | null,
  pairOf: (a: number, b: number) => PairDelta | null,
  scale: number,
): Run | null {
  const n = text.length;
  const glyphs: Glyph[] = new Array(n);
  const positions: Position[] = new Array(n);
  let code = text.charCodeAt(0);
  let c = charOf(code);
  // what the pair on the left adds to the current glyph
  let [cx, cy, cxo, cyo] = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    if (!c) return null;
    let [x, y, xo, yo] = c.at;
    x += cx;
    y += cy;
    xo += cxo;
    yo += cyo;
    let next: Char | null = null;
    if (i + 1 < n) {
      const nextCode = text.charCodeAt(i + 1);
      next = charOf(nextCode);
      const d = next && pairOf(code, nextCode);
      if (!d) return null;
      x += d[0];
      y += d[1];
      xo += d[2];
      yo += d[3];
      [cx, cy, cxo, cyo] = [d[4], d[5], d[6], d[7]];
      code = nextCode;
    }
    glyphs[i] = c.glyph;
    positions[i] = {
      xAdvance: x * scale,
      yAdvance: y * scale,
      xOffset: xo * scale,
      yOffset: yo * scale,
      advanceWidth: c.glyph.advanceWidth * scale,
    };
    c = next;
  }
  return runOf(glyphs, positions);
}
