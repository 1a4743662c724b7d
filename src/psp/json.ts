import { ReconError } from '../errors';
import { isLosslessNumber, isSafeNumber, parse as losslessParse, LosslessNumber } from 'lossless-json';

/**
 * Exact JSON for the PSP's data: numbers keep their source text (lossless-json), nesting is bounded,
 * and large arrays are read element by element in bounded memory.
 */

/** Deepest nesting accepted in one document (records are 1–3 levels deep; anything near 32 is an attack or a bug). */
export const MAX_JSON_DEPTH = 32;
/** Largest single array element accepted by the streaming reader (a register record is well under 4 KiB). */
export const MAX_ITEM_CHARS = 1_048_576;

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: string };

/** Depth of the deepest array/object in `text` (strings skipped); stops counting at `limit + 1`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/**
 * Parses JSON with every number kept as a `LosslessNumber` (its exact source text). The depth is
 * checked before parsing so that a hostile document cannot exhaust the stack. Duplicate keys with
 * different values are refused (which one the PSP meant is unknowable).
 */
export function parseJsonExact(text: string, opts: { maxDepth?: number } = {}): JsonParse {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  if (jsonDepth(text, maxDepth) > maxDepth) return { ok: false, reason: `nested deeper than ${maxDepth} levels` };
  try {
    return { ok: true, value: losslessParse(text) };
  } catch (e) {
    return { ok: false, reason: `invalid JSON: ${printable((e as Error).message.slice(0, 120))}` };
  }
}

/**
 * Control characters and surrogate halves written as `\uXXXX` text. lossless-json quotes the offending
 * character in its messages (a NUL, or half of an emoji), and a reason is stored: PostgreSQL refuses both.
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f\ud800-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v);
}

/**
 * Converts a lossless tree to plain JSON for event data: a number becomes a JS number when that is
 * exact (lossless-json's `isSafeNumber`), otherwise its source text as a string. The record's raw
 * text is kept beside it, so nothing is lost either way.
 */
export function toPlainJson(value: unknown): unknown {
  if (isLosslessNumber(value)) return isSafeNumber(value.value) ? Number(value.value) : value.value;
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toPlainJson(v);
    return out;
  }
  return value;
}

export { isLosslessNumber, LosslessNumber };

/** What `parseJsonFast` proved about a document besides its value. */
export interface FastParse {
  readonly value: unknown;
  /** The text has a `\u` escape or a surrogate code unit: its strings may hold NUL or unpaired surrogates. */
  readonly mayHaveUnstorableText: boolean;
}

// Characters that may continue a JSON number token.
const isNumberChar = (c: number) => (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69;

/**
 * `text[from, to)` is 1 to 15 digits without a leading zero, or the digit 0 alone when no minus comes before
 * it (`from` is past the minus): below 10^15 < 2^53, so `String(Number(token)) === token`.
 */
function plainShortInteger(text: string, from: number, to: number): boolean {
  const len = to - from;
  if (len < 1 || len > 15) return false;
  const first = text.charCodeAt(from);
  if (first === 48) return len === 1 && (from === 0 || text.charCodeAt(from - 1) !== 45);
  for (let k = from; k < to; k++) {
    const d = text.charCodeAt(k);
    if (d < 48 || d > 57) return false;
  }
  return true;
}

function membersOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) n += membersOf(v);
    return n;
  }
  // JSON.parse makes "__proto__" an own member; leave such a document to lossless-json.
  if (Object.hasOwn(value, '__proto__')) return -1;
  for (const k in value) {
    const inner = membersOf((value as Record<string, unknown>)[k]);
    if (inner < 0) return -1;
    n += 1 + inner;
  }
  return n;
}

/**
 * The fast path of `parseJsonExact` for records: the engine's `JSON.parse` (numbers as JS numbers), used
 * only when that is provably the same document as the lossless tree. One scan of the text checks that
 * every number token is exactly the shortest round-trip text of its double (`String(Number(t)) === t`:
 * no exponent, no trailing zero, no digit beyond a double's precision, no -0, no integer beyond 2^53), so
 * a number's text is `String(value)` and nothing was rounded; that nesting is within `maxDepth`; and that the tree has as
 * many members as the text has `name:` pairs (a repeated name, which JSON.parse would silently collapse,
 * is left to lossless-json's rule). Returns null whenever anything is unproven (including invalid JSON,
 * so that errors keep lossless-json's messages): the caller then takes the lossless path.
 */
export function parseJsonFast(text: string, maxDepth = MAX_JSON_DEPTH): FastParse | null {
  let depth = 0;
  let colons = 0;
  let suspect = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c === 34) {
      // A string: skip to its closing quote, noting escapes of code units and surrogates.
      for (i++; i < n; i++) {
        c = text.charCodeAt(i);
        if (c === 34) break;
        if (c === 92) {
          i++;
          if (text.charCodeAt(i) === 117 /* u */) suspect = true;
        } else if (c >= 0xd800 && c <= 0xdfff) suspect = true;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > maxDepth) return null;
    } else if (c === 125 || c === 93) depth--;
    else if (c === 58) colons++;
    else if ((c >= 48 && c <= 57) || c === 45) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      // Most tokens are integers of at most 15 digits, no leading zero, maybe a minus (amounts, epoch
      // milliseconds): such a token is its double's shortest text and a safe integer, proven without the
      // conversions below (issue 26). "-0" and anything else takes them.
      if (plainShortInteger(text, c === 45 ? i + 1 : i, j)) {
        i = j - 1;
        continue;
      }
      const token = text.slice(i, j);
      const num = Number(token);
      // toPlainJson keeps integers beyond 2^53 as text (isSafeNumber): leave those to the lossless path.
      if (String(num) !== token || (Number.isInteger(num) && !Number.isSafeInteger(num))) return null;
      i = j - 1;
    } else if (c >= 0xd800 && c <= 0xdfff) suspect = true;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (membersOf(value) !== colons) return null;
  return { value, mayHaveUnstorableText: suspect };
}

// ---------------------------------------------------------------------------------------------
// Streaming array reader

export class JsonStreamError extends ReconError {
  readonly kind = 'data';
  readonly code = 'PSP_BAD_RESPONSE';
  constructor(message: string) {
    super(message);
    this.name = 'JsonStreamError';
  }
}

const isWs = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

type Phase =
  | 'root' // before the root value
  | 'obj-key' // in the root object: expecting a key or '}'
  | 'obj-colon'
  | 'obj-value' // expecting a member value
  | 'obj-after' // expecting ',' or '}'
  | 'arr-first' // just after '[': an element or ']'
  | 'arr-next' // after ',': an element
  | 'arr-after' // after an element: ',' or ']'
  | 'done';

/** The value being read: an element, or an object member (or its key) skipped. */
interface OpenValue {
  kind: 'container' | 'string' | 'scalar';
  depth: number;
  inString: boolean;
  escape: boolean;
  capture: boolean;
  parts: string[];
  size: number;
  isKey: boolean;
}

/** Where a scanner stands in the document. */
interface ScanState {
  readonly maxItemChars: number;
  phase: Phase;
  rootIsObject: boolean;
  arrayFound: boolean;
  arrayDone: boolean;
  /** null when between values. */
  value: OpenValue | null;
  /** Characters consumed so far, for error messages. */
  offset: number;
}

/**
 * A push scanner over decoded text: feed it pieces, it returns the complete elements found so far.
 * It holds at most one element's text (plus a key being skipped) in memory.
 */
export function createArrayScanner(maxItemChars = MAX_ITEM_CHARS) {
  const st: ScanState = {
    maxItemChars,
    phase: 'root',
    rootIsObject: false,
    arrayFound: false,
    arrayDone: false,
    value: null,
    offset: 0,
  };
  return { push: (text: string): string[] => push(st, text), end: (): string[] => end(st) };
}

function fail(st: ScanState, msg: string): never {
  throw new JsonStreamError(`PSP response is not the expected JSON array: ${msg} (at character ${st.offset})`);
}

function startValue(st: ScanState, c: number, capture: boolean, isKey = false): void {
  const kind = c === 123 || c === 91 ? 'container' : c === 34 ? 'string' : 'scalar';
  if (kind === 'scalar' && !/[-0-9tfn]/.test(String.fromCharCode(c)))
    fail(st, `unexpected character ${JSON.stringify(String.fromCharCode(c))}`);
  // The first character is scanned (and kept) by scanValue, like every other.
  st.value = { kind, depth: 0, inString: false, escape: false, capture, parts: [], size: 0, isKey };
}

/** Scans `text` from `i` for the end of the value `v`; returns the index after it, or -1. */
function scanValue(v: OpenValue, text: string, i: number): number {
  if (v.kind === 'scalar') {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 44 || c === 93 || c === 125 || isWs(c)) return i;
    }
    return -1;
  }
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (v.inString) {
      if (v.escape) v.escape = false;
      else if (c === 92) v.escape = true;
      else if (c === 34) {
        v.inString = false;
        if (v.kind === 'string') return i + 1;
      }
    } else if (c === 34) v.inString = true;
    else if (c === 123 || c === 91) {
      // No depth limit here: this loop does not recurse, and the element's size is bounded. A deeply
      // nested element is handed on whole, so that its parser rejects that one record (raw kept)
      // instead of failing the whole report.
      v.depth++;
    } else if (c === 125 || c === 93) {
      v.depth--;
      if (v.depth === 0) return i + 1;
    }
  }
  return -1;
}

function keep(st: ScanState, v: OpenValue, piece: string): void {
  if (!v.capture) return;
  v.size += piece.length;
  if (v.size > st.maxItemChars) fail(st, `an element is larger than ${st.maxItemChars} characters`);
  v.parts.push(piece);
}

function push(st: ScanState, text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const v = st.value;
    if (v !== null) {
      const end = scanValue(v, text, i);
      if (end === -1) {
        keep(st, v, text.slice(i));
        st.offset += text.length - i;
        return out;
      }
      keep(st, v, text.slice(i, end));
      st.offset += end - i;
      i = end;
      st.value = null;
      if (v.capture) {
        out.push(v.parts.join(''));
        st.phase = 'arr-after';
      } else st.phase = v.isKey ? 'obj-colon' : 'obj-after';
      continue;
    }
    const c = text.charCodeAt(i);
    if (isWs(c)) {
      i++;
      st.offset++;
      continue;
    }
    // A value just started: its first character is scanned (and kept) by scanValue.
    if (structural(st, c)) continue;
    i++;
    st.offset++;
  }
  return out;
}

/** One character between values, read by the phase; true when it starts a value. */
function structural(st: ScanState, c: number): boolean {
  const ch = String.fromCharCode(c);
  switch (st.phase) {
    case 'root':
      if (c === 91) {
        st.phase = 'arr-first';
        st.arrayFound = true;
      } else if (c === 123) {
        st.rootIsObject = true;
        st.phase = 'obj-key';
      } else fail(st, `expected an array or an object, found ${JSON.stringify(ch)}`);
      return false;
    case 'obj-key':
      if (c === 125) {
        if (!st.arrayFound) fail(st, 'the object has no array member');
        st.phase = 'done';
      } else if (c === 34) {
        startValue(st, c, false, true);
        return true;
      } else fail(st, `expected a member name, found ${JSON.stringify(ch)}`);
      return false;
    case 'obj-colon':
      if (c !== 58) fail(st, `expected ':', found ${JSON.stringify(ch)}`);
      st.phase = 'obj-value';
      return false;
    case 'obj-value':
      if (c === 91 && !st.arrayFound) {
        st.arrayFound = true;
        st.phase = 'arr-first';
        return false;
      }
      // Any other member (and any array after the first) is skipped without being kept.
      startValue(st, c, false);
      return true;
    case 'obj-after':
      if (c === 44) st.phase = 'obj-key';
      else if (c === 125) {
        if (!st.arrayFound) fail(st, 'the object has no array member');
        st.phase = 'done';
      } else fail(st, `expected ',' or '}', found ${JSON.stringify(ch)}`);
      return false;
    case 'arr-first':
    case 'arr-next':
      if (c === 93 && st.phase === 'arr-first') {
        st.arrayDone = true;
        st.phase = st.rootIsObject ? 'obj-after' : 'done';
        return false;
      }
      startValue(st, c, true);
      return true;
    case 'arr-after':
      if (c === 44) st.phase = 'arr-next';
      else if (c === 93) {
        st.arrayDone = true;
        st.phase = st.rootIsObject ? 'obj-after' : 'done';
      } else fail(st, `expected ',' or ']', found ${JSON.stringify(ch)}`);
      return false;
    case 'done':
      return fail(st, `unexpected ${JSON.stringify(ch)} after the end of the document`);
  }
}

/** Call at the end of input: a scalar element ends there; anything else unfinished is truncation. */
function end(st: ScanState): string[] {
  const out: string[] = [];
  // A value still open (even a scalar: it cannot end a document inside an array) is truncation.
  if (st.phase !== 'done' || st.value !== null) {
    if (st.phase === 'root') fail(st, 'empty response');
    fail(
      st,
      st.arrayFound && !st.arrayDone
        ? 'truncated input: the document ends inside the array'
        : 'truncated input: the document is incomplete',
    );
  }
  return out;
}

/**
 * Yields the exact JSON text of each element of the top-level array of a streamed response. Two
 * shapes are accepted: a bare array `[...]`, and an object whose first array-valued member holds the
 * records (`{"count": 2, "records": [...]}`); other members of such an object are skipped. UTF-8 split
 * across chunks is decoded correctly; truncated input throws a `JsonStreamError`.
 */
export async function* jsonArrayItems(
  body: AsyncIterable<Uint8Array>,
  opts: { maxItemChars?: number } = {},
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  const scanner = createArrayScanner(opts.maxItemChars);
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw new JsonStreamError('PSP response is not valid UTF-8');
    }
  };
  for await (const chunk of body) {
    const text = decode(chunk);
    if (text.length > 0) yield* scanner.push(text);
  }
  const rest = decode();
  if (rest.length > 0) yield* scanner.push(rest);
  yield* scanner.end();
}
