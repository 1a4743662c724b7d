import { isUtf8 } from 'node:buffer';
import { ReconError } from '../../errors';

/**
 * The bytes of a bank file as text, decoded as declared (docs/bank.md, "Encodings"): UTF-8 unless the file
 * says otherwise (an XML declaration, a byte-order mark) or the import is told otherwise (the CSV mapping's
 * `encoding`, `bank.encoding` in RECON_CONFIG, `--encoding`). UTF-8 is strict: bytes that are not UTF-8 are
 * refused, never turned into U+FFFD, since a name or a reference stored so can never be matched again. The
 * valid text before such bytes is yielded first, so that the reader can name the line they are on.
 */

/** Bytes that are not text in the encoding read: the reader names the line. */
export class UndecodableBytes extends ReconError {
  readonly code = 'BANK_FILE_UNDECODABLE';
  readonly kind = 'data';
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'UndecodableBytes';
  }
}

/** An encoding a file declares, or is configured with, that recon cannot decode. */
export class UnknownEncoding extends ReconError {
  readonly code = 'BANK_FILE_UNKNOWN_ENCODING';
  readonly kind = 'data';
  constructor(readonly label: string) {
    super(`encoding ${JSON.stringify(label.slice(0, 40))} is not one recon can decode`);
    this.name = 'UnknownEncoding';
  }
}

/** The WHATWG name of an encoding label (`latin1` → windows-1252), or null when there is no such encoding. */
export function encodingName(label: string): string | null {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return null;
  }
}

const isUtf8Name = (name: string): boolean => name === 'utf-8';

/**
 * `encoding`: a label (`utf-8`, `windows-1252`, `iso-8859-1` …), or `xml` to follow the file's byte-order
 * mark or XML declaration (UTF-8 when it has neither, as XML says).
 */
export async function* decodeBank(input: AsyncIterable<Buffer | string>, encoding: string): AsyncGenerator<string> {
  const chunks = input[Symbol.asyncIterator]();
  let first: Buffer = Buffer.alloc(0);
  let done = false;
  // enough of the head to read a byte-order mark and an XML declaration
  while (!done && first.length < 512 && (encoding !== 'xml' || !first.includes(0x3e))) {
    const r = await chunks.next();
    if (r.done) done = true;
    else first = Buffer.concat([first, toBuffer(r.value)]);
  }
  const name = encoding === 'xml' ? xmlEncoding(first) : encodingName(encoding);
  if (name === null) throw new UnknownEncoding(encoding);
  const rest: AsyncIterable<Buffer> = {
    async *[Symbol.asyncIterator]() {
      if (first.length > 0) yield first;
      if (done) return;
      for (let r = await chunks.next(); !r.done; r = await chunks.next()) yield toBuffer(r.value);
    },
  };
  yield* isUtf8Name(name) ? strictUtf8(rest) : declared(rest, name);
}

const toBuffer = (c: Buffer | string): Buffer => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c);

/** The encoding an XML file declares: its byte-order mark, else its declaration, else UTF-8. */
function xmlEncoding(head: Buffer): string | null {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const decl = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([^"']*)["']/.exec(head.toString('latin1'));
  if (!decl) return 'utf-8';
  const name = encodingName(decl[1]!);
  if (name === null) throw new UnknownEncoding(decl[1]!);
  return name;
}

/** UTF-8 checked chunk by chunk (a sequence cut by a chunk's end is carried to the next); no BOM. */
async function* strictUtf8(input: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let carry: Buffer | null = null;
  let start = true;
  for await (const chunk of input) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    const cut = incompleteTail(buf);
    const part = cut === buf.length ? buf : buf.subarray(0, cut);
    carry = cut === buf.length ? null : Buffer.from(buf.subarray(cut));
    let text = checkedUtf8(part);
    if (start && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      start = false;
    }
    if (text.length > 0) yield text;
  }
  if (carry) throw new UndecodableBytes(`bytes that are not UTF-8 at the end of the file (${hexBytes(carry)})`);
}

/** The text of bytes that must be UTF-8; throws after nothing, the reader having been given the valid part. */
function checkedUtf8(part: Buffer): string {
  if (isUtf8(part)) return part.toString('utf8');
  const bad = firstInvalid(part);
  throw new InvalidAt(part.subarray(0, bad).toString('utf8'), part.subarray(bad, bad + 4));
}

/** Valid text before invalid bytes: decodedText gives the text to the reader, then the refusal. */
export class InvalidAt extends ReconError {
  readonly code = 'BANK_FILE_NOT_UTF8';
  readonly kind = 'data';
  constructor(
    readonly valid: string,
    readonly bytes: Buffer,
  ) {
    super('bytes that are not UTF-8');
    this.name = 'InvalidAt';
  }
}

/** Where a chunk stops being whole sequences: the start of a sequence its end cuts, or its length. */
function incompleteTail(buf: Buffer): number {
  const n = buf.length;
  for (let k = 1; k <= 3 && k <= n; k++) {
    const b = buf[n - k]!;
    if ((b & 0xc0) === 0x80) continue;
    if (b < 0xc0) return n;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return need > k ? n - k : n;
  }
  return n;
}

/** The offset of the first byte that starts no valid UTF-8 sequence (only read when isUtf8 said no). */
function firstInvalid(buf: Buffer): number {
  const text = buf.toString('utf8');
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.codePointAt(i)!;
    if (c === 0xfffd && !(buf[bytes] === 0xef && buf[bytes + 1] === 0xbf && buf[bytes + 2] === 0xbd)) return bytes;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    bytes += size;
    if (size === 4) i++;
  }
  return buf.length;
}

const hexBytes = (b: Buffer): string =>
  [...b]
    .slice(0, 4)
    .map((x) => `0x${x.toString(16).toUpperCase().padStart(2, '0')}`)
    .join(' ');

/** A declared encoding other than UTF-8, through the platform's decoder. */
async function* declared(input: AsyncIterable<Buffer>, name: string): AsyncGenerator<string> {
  const decoder = new TextDecoder(name, { fatal: true });
  try {
    for await (const chunk of input) {
      const text = decoder.decode(chunk, { stream: true });
      if (text.length > 0) yield text;
    }
    const tail = decoder.decode();
    if (tail.length > 0) yield tail;
  } catch (e) {
    if (e instanceof TypeError) throw new UndecodableBytes(`bytes that are not ${name}`);
    throw e;
  }
}

/**
 * decodeBank with the refusal split in two: the valid text before bytes that are not UTF-8 is yielded, then
 * UndecodableBytes is thrown, so that the reader's own line count names the line of the bytes.
 */
export async function* decodedText(input: AsyncIterable<Buffer | string>, encoding: string): AsyncGenerator<string> {
  try {
    yield* decodeBank(input, encoding);
  } catch (e) {
    if (!(e instanceof InvalidAt)) throw e;
    if (e.valid.length > 0) yield e.valid;
    throw new UndecodableBytes(
      `bytes that are not UTF-8 (${hexBytes(e.bytes)}): declare the file's encoding (docs/bank.md, "Encodings")`,
    );
  }
}
