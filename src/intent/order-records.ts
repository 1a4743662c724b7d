import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { isPlainObject, parseJsonExact } from '../psp/json';
import { ORDER_FIELDS } from './order-input';

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

async function* ndjsonRecords(file: string): AsyncGenerator<FileRecord> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of lines) {
    line++;
    const t = line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (t.trim() === '') continue;
    const p = parseJsonExact(t);
    if (!p.ok) yield { line, field: null, message: p.reason };
    else if (!isPlainObject(p.value)) yield { line, field: null, message: 'expected a JSON object' };
    else yield { line, record: p.value };
  }
}

async function* csvRecords(file: string): AsyncGenerator<FileRecord> {
  let headerProblem: string | null = null;
  const parser = createReadStream(file).pipe(
    parse({
      bom: true,
      info: true,
      skip_empty_lines: true,
      relax_column_count: false,
      columns: (header: string[]) => {
        const names = header.map((h) => h.trim().toLowerCase());
        const unknown = names.filter((n) => !(ORDER_FIELDS as readonly string[]).includes(n));
        const twice = names.find((n, i) => names.indexOf(n) !== i);
        if (unknown.length)
          headerProblem = `unknown column ${unknown.map((u) => JSON.stringify(u)).join(', ')} (columns: ${ORDER_FIELDS.join(', ')})`;
        else if (twice) headerProblem = `column ${twice} appears twice`;
        else if (!names.includes('order_id')) headerProblem = 'the header has no order_id column';
        return names;
      },
    }),
  );
  try {
    for await (const chunk of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      if (headerProblem) {
        yield { line: 1, field: null, message: headerProblem };
        parser.destroy();
        return;
      }
      const record: Record<string, unknown> = {};
      // an empty cell is an absent field
      for (const [k, v] of Object.entries(chunk.record)) if (v.trim() !== '') record[k] = v.trim();
      yield { line: chunk.info.lines, record };
    }
    if (headerProblem) yield { line: 1, field: null, message: headerProblem };
  } catch (e) {
    const err = e as Error & { lines?: number; code?: string };
    yield { line: err.lines ?? 0, field: null, message: err.message.replace(/^Invalid Record Length: /, '') };
  }
}
