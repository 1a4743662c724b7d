import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Tx } from './projection';

/**
 * The bulk writer of every projection. Plain inserts go with COPY (text format) inside the caller's
 * transaction: several times faster than a multi-row INSERT during a rebuild, and cheaper to build than
 * parameters cast in SQL. An upsert goes in one statement per 20,000 rows: one text[] parameter per
 * column, `insert … select from unnest(…)`.
 */

/** A value to write: text-like values and bigint, a boolean, a plain object (jsonb), or a text array. */
export type Cell = string | number | bigint | boolean | null | undefined | readonly string[] | Record<string, unknown>;

const SPECIAL = /[\\\t\n\r]/;
const PLAIN_ELEMENT = /^[A-Za-z0-9_.:@+-]+$/;

/** A PostgreSQL array literal of text elements (quoted unless plainly safe; null elements as NULL). */
function arrayLiteral(xs: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    if (i) out += ',';
    if (x === null) out += 'NULL';
    else if (x.length && x.length < 64 && PLAIN_ELEMENT.test(x) && x.toUpperCase() !== 'NULL') out += x;
    else out += `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  return `${out}}`;
}

/** A cell as PostgreSQL's text input of its column (null for SQL null): the driver applies no type of its own. */
function cellText(v: Cell): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return arrayLiteral(v as readonly string[]);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** One value in COPY text format: backslash escapes; \N is null. */
export function copyCell(v: Cell): string {
  const s = cellText(v);
  if (s === null) return '\\N';
  return SPECIAL.test(s)
    ? s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : s;
}

const CHUNK = 262_144;

/**
 * COPY text built line by line, encoded at once into buffers of about 256 kB (one CopyData message each):
 * no long concatenated strings to flatten and encode later.
 */
export interface TextBuffer {
  /** appends one or more complete lines (each ending with \n, cells already escaped with copyCell) */
  add(text: string): void;
  chunks(): Buffer[];
}

export function createTextBuffer(): TextBuffer {
  const done: Buffer[] = [];
  let buf = Buffer.allocUnsafe(CHUNK);
  let used = 0;
  return {
    add(text) {
      // at most 3 bytes per UTF-16 unit
      if (used + text.length * 3 > buf.length) {
        if (used > 0) done.push(buf.subarray(0, used));
        buf = Buffer.allocUnsafe(Math.max(CHUNK, text.length * 3));
        used = 0;
      }
      used += buf.write(text, used);
    },
    chunks() {
      return used > 0 ? [...done, buf.subarray(0, used)] : done;
    },
  };
}

/** Inserts rows with COPY. `table` is already quoted (src/db/identifier.ts), `columns` are plain names. */
export async function copyRows(
  tx: Tx,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly Cell[])[],
): Promise<void> {
  if (rows.length === 0) return;
  const text = createTextBuffer();
  for (const r of rows) {
    let line = '';
    for (let i = 0; i < r.length; i++) line += (i ? '\t' : '') + copyCell(r[i]);
    text.add(`${line}\n`);
  }
  await copyText(tx, table, columns, text.chunks());
}

/** COPY of text already in COPY text format (complete lines); nothing is sent when there is none. */
export async function copyText(
  tx: Tx,
  table: string,
  columns: readonly string[],
  chunks: Iterable<string | Buffer>,
): Promise<void> {
  const list = Array.isArray(chunks) ? (chunks as Array<string | Buffer>) : [...chunks];
  if (list.length === 0) return;
  const target = await tx.unsafe(`copy ${table} (${columns.join(', ')}) from stdin`).writable();
  await pipeline(Readable.from(list), target);
}

export interface Column {
  readonly name: string;
  /** PostgreSQL type the text is cast to */
  readonly type: string;
}

/** `name type, …` (a table's column definitions) → the columns. */
export function columnsOf(definitions: string): Column[] {
  return definitions.split(',').map((c) => {
    const [name, type] = c.trim().split(/\s+/) as [string, string];
    return { name, type };
  });
}

/**
 * Inserts rows with an `on conflict …` clause, each column cast to its type in SQL (array-typed columns
 * travel as their literal: unnest would flatten them). The array literals are built here rather than by
 * the driver: most cells (ids, amounts, times) need no quoting.
 */
export async function upsertRows(
  tx: Tx,
  table: string,
  columns: readonly Column[],
  rows: readonly (readonly Cell[])[],
  onConflict: string,
): Promise<void> {
  const names = columns.map((c) => c.name).join(', ');
  const unnest = columns.map((_, k) => `$${k + 1}::text[]`).join(', ');
  const select = columns.map((c, k) => (c.type === 'text' ? `c${k}` : `c${k}::${c.type}`)).join(', ');
  const aliases = columns.map((_, k) => `c${k}`).join(', ');
  for (let i = 0; i < rows.length; i += 20_000) {
    const chunk = rows.slice(i, i + 20_000);
    const params = columns.map((_, c) => arrayLiteral(chunk.map((r) => cellText(r[c]))));
    await tx.unsafe(
      `insert into ${table} (${names}) select ${select} from unnest(${unnest}) as u(${aliases}) ${onConflict}`,
      params as never[],
    );
  }
}
