import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { DateTime } from 'luxon';
import { z } from 'zod';
import {
  type Checked,
  checkText,
  FREE_TEXT,
  NAME_TEXT,
  quoteForMessage,
  REFERENCE_TEXT,
  type TextPolicy,
} from '../../input-rules';
import { signedMinorUnits } from './amount';
import { bankDay } from './dates';
import { decodedText, encodingName, UndecodableBytes, UnknownEncoding } from './decode';
import { BankFileError, type BankFileItem, type BankFileParser, type ParsedEntry, type StatementHead } from './types';

/**
 * A bank's CSV export, read through a declared column mapping (`--mapping FILE`, docs/bank.md). A CSV has
 * no opening or closing balance of its own: the mapping must name the running balance column (the balance
 * after each row), and every row must agree with it, so the file foots like a statement.
 *
 * Bounds and text (docs/bank.md, "Limits", "Text fields"): a record at most MAX_RECORD characters; a header
 * naming a column twice is refused (the last would otherwise win); every cell, mapped or not, without NUL,
 * lone surrogates or control characters (line breaks and tabs kept) and at most 4,096 characters; the cells
 * kept through the policy of their field. The file is UTF-8 unless the mapping (or the import) names another
 * encoding.
 */

/** One record (a line, or several when a quoted cell holds line breaks). */
export const MAX_RECORD = 65_536;

/** Any cell of a row, mapped or not. */
const CELL_TEXT: TextPolicy = { maxLength: 4096, lineBreaks: true, tabs: true, empty: true };

export const csvMappingSchema = z
  .object({
    account: z.string().min(1),
    currency: z.string().regex(/^[A-Z]{3}$/),
    /** the statement's id; default `csv:<first booking day>..<last booking day>` */
    statementId: z.string().min(1).optional(),
    delimiter: z.string().length(1).default(','),
    decimal: z.enum(['.', ',']).default('.'),
    /** a thousands separator to strip from amounts (e.g. " " or "."), none by default */
    thousands: z.string().max(1).default(''),
    /** luxon format of the dates, e.g. dd.MM.yyyy */
    dateFormat: z.string().min(1).default('yyyy-MM-dd'),
    /** rows from the newest to the oldest (as many online banks export) */
    newestFirst: z.boolean().default(false),
    columns: z
      .object({
        bookingDate: z.string().min(1),
        valueDate: z.string().min(1).optional(),
        /** signed (negative is a debit), unless `direction` is given */
        amount: z.string().min(1),
        direction: z.string().min(1).optional(),
        balance: z.string().min(1),
        bankRef: z.string().min(1).optional(),
        endToEndId: z.string().min(1).optional(),
        remittance: z.string().min(1).optional(),
        counterpartyName: z.string().min(1).optional(),
        counterpartyAccount: z.string().min(1).optional(),
        /** the bank's transaction code or booking text (what tells a bank charge: docs/bank.md, "Bank charges") */
        transactionCode: z.string().min(1).optional(),
      })
      .strict(),
    /** the file's encoding (a WHATWG label: windows-1252, iso-8859-1, windows-1251 …); default UTF-8 */
    encoding: z
      .string()
      .refine((l) => encodingName(l) !== null, 'not an encoding recon can decode (e.g. utf-8, windows-1252)')
      .optional(),
    creditValues: z.array(z.string()).default(['C', 'CR', 'CRDT', 'credit']),
    debitValues: z.array(z.string()).default(['D', 'DR', 'DBIT', 'debit']),
  })
  .strict()
  // stripped from every amount before it is read: the decimal separator, a digit or a sign would change the value
  // (with "." for both, 10.50 read as 1,050.00, and balances alike, so the file still footed)
  .refine((m) => m.thousands !== m.decimal && !/[\d+-]/.test(m.thousands), {
    path: ['thousands'],
    message: 'a thousands separator cannot be the decimal separator, a digit or a sign',
  });

export type CsvMapping = z.infer<typeof csvMappingSchema>;

/** `encoding`: the import's, used when the mapping names none. */
export function parseCsv(input: Readable, file: string, mapping: CsvMapping, encoding = 'utf-8'): BankFileParser {
  return { [Symbol.asyncIterator]: () => run(input, file, mapping, encoding)[Symbol.asyncIterator]() };
}

/** The decoded text, counting lines so that bytes that are not text are refused naming their line. */
async function* textOf(input: Readable, file: string, encoding: string): AsyncGenerator<string> {
  let line = 1;
  try {
    for await (const t of decodedText(input as AsyncIterable<Buffer>, encoding)) {
      for (let i = t.indexOf('\n'); i >= 0; i = t.indexOf('\n', i + 1)) line++;
      yield t;
    }
  } catch (e) {
    if (e instanceof UndecodableBytes) throw new BankFileError(file, `line ${line}`, e.problem);
    if (e instanceof UnknownEncoding) throw new BankFileError(file, 'encoding', e.message);
    throw e;
  }
}

/** The header: each name once, each a storable text. */
function checkedHeader(file: string, header: string[]): string[] {
  const seen = new Set<string>();
  for (const name of header) {
    // a column without a name (a trailing delimiter) cannot be mapped: neither checked nor counted
    if (name.trim() === '') continue;
    const r = checkText(name, REFERENCE_TEXT);
    if (!r.ok) throw new BankFileError(file, 'line 1 (header)', `column ${quoteForMessage(name)}: ${r.reason}`);
    if (seen.has(name))
      throw new BankFileError(file, 'line 1 (header)', `column ${quoteForMessage(name)} appears twice in the header`);
    seen.add(name);
  }
  return header;
}

async function* run(
  input: Readable,
  file: string,
  m: CsvMapping,
  encoding: string,
): AsyncGenerator<readonly BankFileItem[]> {
  const head: StatementHead = {
    index: 0,
    statementId: m.statementId ?? null,
    account: m.account.replace(/\s+/g, '').toUpperCase(),
    currency: m.currency,
    where: 'line 1',
  };
  const source = Readable.from(textOf(input, file, m.encoding ?? encoding));
  const records = source.pipe(
    parse({
      delimiter: m.delimiter,
      bom: true,
      columns: (header: string[]) => checkedHeader(file, header),
      info: true,
      skip_empty_lines: true,
      trim: true,
      max_record_size: MAX_RECORD,
    }),
  );
  // pipe does not carry the source's error: a refused byte must end the reading, not stall it
  source.on('error', (e) => records.destroy(e));
  const days = new Map<string, Checked<string>>();
  const out: BankFileItem[] = [];
  let first: CsvRow | null = null;
  let last: CsvRow | null = null;
  try {
    for await (const rec of records as AsyncIterable<CsvRecord>) {
      const row = rowOf(file, m, days, rec, last);
      first ??= row;
      last = row;
      out.push({ kind: 'entry', head, entry: row.entry });
      if (out.length >= 1000) yield out.splice(0, out.length);
    }
  } catch (e) {
    if (e instanceof BankFileError) throw e;
    const lines = (e as { lines?: unknown }).lines;
    throw new BankFileError(file, typeof lines === 'number' ? `line ${lines}` : 'CSV', (e as Error).message);
  }
  if (first === null || last === null)
    throw new BankFileError(file, 'line 2', 'no rows: a CSV statement needs at least one row');
  out.push(statementOf(head, m, first, last));
  yield out;
}

type CsvRecord = { record: Record<string, string>; info: { lines: number } };

/** A row of the statement: its entry, and what the running balance is checked with. */
interface CsvRow {
  readonly line: number;
  readonly signed: bigint;
  readonly balance: bigint;
  readonly day: string;
  readonly entry: ParsedEntry;
}

/**
 * One record read through the mapping, every cell through its policy, its running balance following from the
 * previous row's (`last`, in the file's order); a problem names line and column.
 */
function rowOf(
  file: string,
  m: CsvMapping,
  days: Map<string, Checked<string>>,
  rec: CsvRecord,
  last: CsvRow | null,
): CsvRow {
  const line = rec.info.lines;
  const { fail, cell, money, day } = cellsOf(file, m, days, rec);
  const c = m.columns;
  let signed = money(c.amount);
  if (c.direction !== undefined) {
    const dir = cell(c.direction) ?? '';
    if (signed < 0n) fail(c.amount, 'a negative amount beside a direction column');
    if (m.debitValues.includes(dir)) signed = -signed;
    else if (!m.creditValues.includes(dir))
      fail(
        c.direction,
        `expected one of ${[...m.creditValues, ...m.debitValues].join(', ')}, got ${JSON.stringify(dir)}`,
      );
  }
  const balance = money(c.balance);
  const bookingDate = day(c.bookingDate);
  if (last !== null) {
    const expected: bigint = m.newestFirst ? last.balance - last.signed : last.balance + signed;
    if (expected !== balance)
      fail(
        c.balance,
        `the running balance does not follow from line ${last.line}: expected ${expected}, got ${balance} (minor units)`,
      );
  }
  const entry: ParsedEntry = {
    amount: signed < 0n ? -signed : signed,
    direction: signed < 0n ? 'debit' : 'credit',
    currency: m.currency,
    status: 'booked',
    bookingDate,
    valueDate: c.valueDate ? day(c.valueDate) : null,
    bankRef: cell(c.bankRef, REFERENCE_TEXT),
    isReversal: false,
    transactionCode: cell(c.transactionCode),
    info: null,
    details: [
      {
        amount: null,
        direction: null,
        endToEndId: cell(c.endToEndId, REFERENCE_TEXT),
        remittance: cell(c.remittance, FREE_TEXT),
        counterpartyName: cell(c.counterpartyName, NAME_TEXT),
        counterpartyAccount: cell(c.counterpartyAccount, REFERENCE_TEXT)?.replace(/\s+/g, '').toUpperCase() ?? null,
        isReturn: false,
        transactionCode: cell(c.transactionCode),
        bankRef: null,
      },
    ],
    where: `line ${line}`,
  };
  return { line, signed, balance, day: bookingDate, entry };
}

/** The readers of one record's cells: each refusal names the record's line and the column. */
function cellsOf(file: string, m: CsvMapping, days: Map<string, Checked<string>>, rec: CsvRecord) {
  const line = rec.info.lines;
  const fail = (column: string, problem: string): never => {
    throw new BankFileError(file, `line ${line}, column ${JSON.stringify(column)}`, problem);
  };
  for (const column in rec.record) {
    const r = checkText(rec.record[column]!, CELL_TEXT);
    if (!r.ok) fail(column, r.reason);
  }
  const cell = (column: string | undefined, policy?: TextPolicy): string | null => {
    if (column === undefined) return null;
    // own cells only: `constructor` or `toString` would otherwise read what every object inherits
    const v = Object.hasOwn(rec.record, column) ? rec.record[column] : undefined;
    if (v === undefined) fail(column, 'no such column in the header');
    const t = v!.trim();
    if (t === '') return null;
    if (policy === undefined) return t;
    const r = checkText(t, policy);
    return r.ok ? r.value : fail(column, r.reason);
  };
  const money = (column: string): bigint => {
    const raw = (cell(column) ?? fail(column, 'empty')).split(m.thousands || '\u0000').join('');
    const v = signedMinorUnits(raw, m.decimal);
    return typeof v === 'string' ? fail(column, v) : v;
  };
  const day = (column: string): string => {
    const raw = cell(column) ?? fail(column, 'empty');
    let d = days.get(raw);
    if (d === undefined) {
      // setZone: a date written with the bank's offset keeps its day as written (as camt's DtTm), not UTC's
      const read = DateTime.fromFormat(raw, m.dateFormat, { zone: 'UTC', setZone: true });
      d = read.isValid
        ? bankDay(read.toISODate()!)
        : { ok: false, reason: `not a date in the format ${m.dateFormat}: ${quoteForMessage(raw)}` };
      if (days.size > 10_000) days.clear();
      days.set(raw, d);
    }
    return d.ok ? d.value : fail(column, d.reason);
  };
  return { fail, cell, money, day };
}

/** The statement the rows make: opening before the oldest row, closing after the newest. */
function statementOf(head: StatementHead, m: CsvMapping, first: CsvRow, last: CsvRow): BankFileItem {
  const [oldest, newest] = m.newestFirst ? [last, first] : [first, last];
  head.statementId ??= `csv:${oldest.day}..${newest.day}`;
  return {
    kind: 'statement',
    statement: {
      ...head,
      opening: { amount: oldest.balance - oldest.signed, date: oldest.day, currency: m.currency, where: 'line 2' },
      closing: { amount: newest.balance, date: newest.day, currency: m.currency, where: `line ${last.line}` },
    },
  };
}
