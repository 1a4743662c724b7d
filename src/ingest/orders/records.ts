import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { ReconError } from '../../errors';
import { isPlainObject, parseJsonExact } from '../../psp/json';
import { ORDER_FIELDS } from './input';

/**
 * The flat layout most order exports have: one row per split part, the order's fields repeated on each
 * (src/ingest/orders/flat.ts groups them). A file is in one layout or the other, told by its columns.
 */
export const FLAT_FIELDS = [
  'order_id',
  'created_at',
  'currency',
  'order_amount',
  'sub_merchant_id',
  'part_amount',
  'customer_reference',
] as const;
/** the columns only the flat layout has */
const FLAT_ONLY = ['order_amount', 'part_amount', 'sub_merchant_id'];

/** What is wrong with a header (CSV) or a record's field names (NDJSON), in either layout; null when fine. */
export function columnsProblem(names: readonly string[]): string | null {
  const flat = names.some((n) => FLAT_ONLY.includes(n));
  const allowed: readonly string[] = flat ? FLAT_FIELDS : ORDER_FIELDS;
  const unknown = names.filter((n) => !allowed.includes(n));
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (unknown.length)
    return `unknown column ${unknown.map((u) => JSON.stringify(u)).join(', ')} (columns: ${ORDER_FIELDS.join(', ')}; or, one row per split part: ${FLAT_FIELDS.join(', ')})`;
  if (twice) return `column ${twice} appears twice`;
  if (!names.includes('order_id')) return 'the header has no order_id column';
  return null;
}

/** Whether a record is in the flat layout (one row per split part). */
export const isFlatRecord = (record: Readonly<Record<string, unknown>>): boolean => FLAT_ONLY.some((k) => k in record);

/**
 * Reads an order file record by record, never whole: CSV (header row, RFC 4180, csv-parse) or NDJSON
 * (one JSON object a line, numbers kept exact). Each record comes with the line it starts on; a record
 * that cannot be read at all comes as a problem naming the line (and the column when there is one).
 */

export type OrderFileFormat = 'csv' | 'ndjson';

export type FileRecord =
  | { readonly line: number; readonly record: Record<string, unknown> }
  | { readonly line: number; readonly field: string | null; readonly message: string };

export function formatOf(file: string, given?: string): OrderFileFormat | null {
  const f = (given ?? file.split('.').pop() ?? '').toLowerCase();
  if (f === 'csv') return 'csv';
  if (f === 'ndjson' || f === 'jsonl') return 'ndjson';
  return null;
}

export async function* orderRecords(file: string, format: OrderFileFormat): AsyncGenerator<FileRecord> {
  if (format === 'ndjson') yield* ndjsonRecords(file);
  else yield* csvRecords(file);
}

/** A file's bytes that are not UTF-8, with the line they are on: refused, never read with U+FFFD put in. */
export class NotUtf8Error extends ReconError {
  readonly code = 'ORDERS_NOT_UTF8';
  readonly kind = 'data';
  constructor(readonly line: number) {
    super('not UTF-8 text (save the file as UTF-8)');
    this.name = 'NotUtf8Error';
  }
}

/** The file's text chunk by chunk, decoded strictly (a stream never holds the whole file). */
export async function* strictUtf8(file: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let line = 1;
  const linesIn = (t: string) => t.split('\n').length - 1;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      // the valid prefix of this chunk tells the line of the first fault
      const prefix = new TextDecoder('utf-8').decode(chunk);
      const at = prefix.indexOf('\uFFFD');
      throw new NotUtf8Error(line + linesIn(at < 0 ? prefix : prefix.slice(0, at)));
    }
    line += linesIn(text);
    if (text) yield text;
  }
  try {
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch {
    throw new NotUtf8Error(line);
  }
}

async function* ndjsonRecords(file: string): AsyncGenerator<FileRecord> {
  const lines = createInterface({ input: Readable.from(strictUtf8(file)), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      const t = line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      if (t.trim() === '') continue;
      const p = parseJsonExact(t);
      if (!p.ok) yield { line, field: null, message: p.reason };
      else if (!isPlainObject(p.value)) yield { line, field: null, message: 'expected a JSON object' };
      else yield { line, record: p.value };
    }
  } catch (e) {
    if (!(e instanceof NotUtf8Error)) throw e;
    yield { line: e.line, field: null, message: e.message };
  }
}

async function* csvRecords(file: string): AsyncGenerator<FileRecord> {
  let headerProblem: string | null = null;
  const source = Readable.from(strictUtf8(file));
  const parser = source.pipe(
    parse({
      bom: true,
      info: true,
      raw: true,
      skip_empty_lines: true,
      relax_column_count: false,
      columns: (header: string[]) => {
        const names = header.map((h) => h.trim().toLowerCase());
        headerProblem = columnsProblem(names);
        return names;
      },
    }),
  );
  // pipe() does not pass a source's error on: a file that is not UTF-8 ends the parser with it
  source.on('error', (e) => parser.destroy(e));
  try {
    // the line a record starts on, counted from the raw text (csv-parse's own count is where it ends): the
    // header is line 1, then each record's raw text (empty lines skipped before it included) moves the count
    let cursor = 2;
    for await (const chunk of parser as AsyncIterable<{ record: Record<string, string>; raw: string }>) {
      const leading = /^(?:\r\n|\r|\n)*/.exec(chunk.raw)![0];
      const start = cursor + (leading.match(/\r\n|\r|\n/g)?.length ?? 0);
      cursor += chunk.raw.match(/\r\n|\r|\n/g)?.length ?? 0;
      if (!/(?:\r\n|\r|\n)$/.test(chunk.raw)) cursor++;
      if (headerProblem) {
        yield { line: 1, field: null, message: headerProblem };
        parser.destroy();
        return;
      }
      const record: Record<string, unknown> = {};
      // an empty cell is an absent field
      for (const [k, v] of Object.entries(chunk.record)) if (v.trim() !== '') record[k] = v.trim();
      yield { line: start, record };
    }
    if (headerProblem) yield { line: 1, field: null, message: headerProblem };
  } catch (e) {
    if (e instanceof NotUtf8Error) {
      yield { line: e.line, field: null, message: e.message };
      return;
    }
    const err = e as Error & { lines?: number; code?: string };
    yield { line: err.lines ?? 0, field: null, message: err.message.replace(/^Invalid Record Length: /, '') };
  }
}
