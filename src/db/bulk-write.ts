import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type postgres from 'postgres';

/**
 * The one bulk writer: of every projection (through src/projector/copy-rows.ts) and of the event store's bulk
 * append (its staging COPY). Plain inserts go with COPY (text format) inside the caller's transaction: several
 * times faster than a multi-row INSERT during a rebuild, and cheaper to build than parameters cast in SQL. An
 * upsert goes in one statement per 20,000 rows: one text[] parameter per column, `insert … select from
 * unnest(…)`. Every COPY goes through `copyFrom`, which guards against a refusal the driver never reports.
 *
 * A table is named as SQL already quoted (`qualified` in src/db/identifier.ts), columns by plain names.
 */

/** A transaction of the caller (COPY runs inside it: it is rolled back with it). */
export type Tx = postgres.TransactionSql<{ bigint: bigint }>;

/** A value to write: text-like values and bigint, a boolean, a plain object (jsonb), or an array (null elements NULL). */
export type Cell =
  | string
  | number
  | bigint
  | boolean
  | null
  | undefined
  | readonly (string | null)[]
  | Record<string, unknown>;

const SPECIAL = /[\\\t\n\r]/;
const PLAIN_ELEMENT = /^[A-Za-z0-9_.:@+-]+$/;

/**
 * An array element in quotes, its backslashes and quotes escaped. Split and joined rather than replaced by a
 * regular expression: an upsert's elements can be whole JSON texts (a payment's observations, some forty
 * quotes each), where `replace(/"/g, …)` took six times as long.
 */
function quotedElement(x: string): string {
  const slashed = x.includes('\\') ? x.split('\\').join('\\\\') : x;
  return `"${slashed.split('"').join('\\"')}"`;
}

/**
 * A PostgreSQL array literal of text elements (quoted unless plainly safe; null elements as NULL). Joined from
 * an array, not concatenated: a literal of thousands of long elements built by `+=` is a rope the driver then
 * flattens to measure and encode it.
 */
function arrayLiteral(xs: readonly (string | null)[]): string {
  const out: string[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    if (x === null) out[i] = 'NULL';
    else if (x.length && x.length < 64 && PLAIN_ELEMENT.test(x) && x.toUpperCase() !== 'NULL') out[i] = x;
    else out[i] = quotedElement(x);
  }
  return `{${out.join(',')}}`;
}

/** A cell as PostgreSQL's text input of its column (null for SQL null): the driver applies no type of its own. */
function cellText(v: Cell): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return arrayLiteral(v as readonly (string | null)[]);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** One value in COPY text format: backslash escapes; \N is null. */
export function copyCell(v: Cell): string {
  const s = cellText(v);
  return s === null ? '\\N' : copyField(s);
}

/** A text in COPY text format: backslash, tab and line ends escaped. */
export function copyField(s: string): string {
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
  await copyFrom(tx, table, columns, list);
}

/**
 * COPY of text in COPY text format from a source read as the copy goes (a generator may wait for its text to
 * be produced): the one place a COPY is started, so that a refusal always rejects.
 */
export async function copyFrom(
  tx: Tx,
  table: string,
  columns: readonly string[],
  source: Iterable<string | Buffer> | AsyncIterable<string | Buffer>,
): Promise<void> {
  // COPY takes no parameters: the table (quoted by the caller) and the column names are the statement's text
  const query = tx.unsafe(`copy ${table} (${columns.join(', ')}) from stdin`);
  const refused = refusalOf(query);
  // a COPY refused before it starts rejects through writable() as well: this one is then not awaited
  refused.catch(() => {});
  const target = await query.writable();
  await Promise.race([pipeline(Readable.from(source), target), refused]);
}

/**
 * The server's refusal of a COPY, as a rejected promise. postgres.js 3.4.9 never settles the writable of a
 * COPY the server refuses after its end (porsager/postgres#1173, unfixed at this version): the pipeline
 * waited for ever, the transaction never rolled back, and the connection stayed "idle in transaction
 * (aborted)" (issue 23: a NUL byte or a date 0000-01-01 in a bank entry stopped every projection for good).
 * The driver does hand the error to the query's own `reject` (already settled with the stream, so nobody
 * saw it): wrapping it makes the refusal reject here, the caller's transaction rolls back and the runner sets
 * the event aside. Remove with a driver that carries the fix (PR #1183).
 */
function refusalOf(query: object): Promise<never> {
  const q = query as { reject?: (e: unknown) => void };
  const original = q.reject;
  return new Promise<never>((_, reject) => {
    if (typeof original !== 'function') return;
    q.reject = (e: unknown) => {
      original(e);
      reject(e);
    };
  });
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
    // the values are parameters; the statement's text is the quoted table, column names and their types
    await tx.unsafe(
      `insert into ${table} (${names}) select ${select} from unnest(${unnest}) as u(${aliases}) ${onConflict}`,
      params as never[],
    );
  }
}
