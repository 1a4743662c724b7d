import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { DateTime } from 'luxon';
import { z } from 'zod';
import { signedMinorUnits } from './amount';
import { BankFileError, type BankFileItem, type BankFileParser, type ParsedEntry, type StatementHead } from './types';

/**
 * A bank's CSV export, read through a declared column mapping (`--mapping FILE`, docs/bank.md). A CSV has
 * no opening or closing balance of its own: the mapping must name the running balance column (the balance
 * after each row), and every row must agree with it, so the file foots like a statement.
 */

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
    creditValues: z.array(z.string()).default(['C', 'CR', 'CRDT', 'credit']),
    debitValues: z.array(z.string()).default(['D', 'DR', 'DBIT', 'debit']),
  })
  .strict();

export type CsvMapping = z.infer<typeof csvMappingSchema>;

export function parseCsv(input: Readable, file: string, mapping: CsvMapping): BankFileParser {
  return { [Symbol.asyncIterator]: () => run(input, file, mapping)[Symbol.asyncIterator]() };
}

async function* run(input: Readable, file: string, m: CsvMapping): AsyncGenerator<readonly BankFileItem[]> {
  const head: StatementHead = {
    index: 0,
    statementId: m.statementId ?? null,
    account: m.account.replace(/\s+/g, '').toUpperCase(),
    currency: m.currency,
    where: 'line 1',
  };
  const records = input.pipe(
    parse({ delimiter: m.delimiter, bom: true, columns: true, info: true, skip_empty_lines: true, trim: true }),
  );
  const out: BankFileItem[] = [];
  let first: { day: string; balance: bigint; signed: bigint } | null = null;
  let last: { day: string; balance: bigint; line: number; signed: bigint } | null = null;
  try {
    for await (const rec of records as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      const line = rec.info.lines;
      const fail = (column: string, problem: string): never => {
        throw new BankFileError(file, `line ${line}, column ${JSON.stringify(column)}`, problem);
      };
      const cell = (column: string | undefined): string | null => {
        if (column === undefined) return null;
        const v = rec.record[column];
        if (v === undefined) fail(column, 'no such column in the header');
        return v!.trim() === '' ? null : v!.trim();
      };
      const money = (column: string): bigint => {
        const raw = (cell(column) ?? fail(column, 'empty')).split(m.thousands || '\u0000').join('');
        const v = signedMinorUnits(raw, m.decimal);
        return typeof v === 'string' ? fail(column, v) : v;
      };
      const day = (column: string): string => {
        const raw = cell(column) ?? fail(column, 'empty');
        const d = DateTime.fromFormat(raw, m.dateFormat, { zone: 'UTC' });
        return d.isValid
          ? d.toISODate()!
          : fail(column, `not a date in the format ${m.dateFormat}: ${JSON.stringify(raw)}`);
      };
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
        // the running balance must follow from the previous row, in the file's order
        const expected: bigint = m.newestFirst ? last.balance - last.signed : last.balance + signed;
        if (expected !== balance)
          fail(
            c.balance,
            `the running balance does not follow from line ${last.line}: expected ${expected}, got ${balance} (minor units)`,
          );
      }
      first ??= { day: bookingDate, balance, signed };
      last = { day: bookingDate, balance, line, signed };
      const entry: ParsedEntry = {
        amount: signed < 0n ? -signed : signed,
        direction: signed < 0n ? 'debit' : 'credit',
        currency: m.currency,
        status: 'booked',
        bookingDate,
        valueDate: c.valueDate ? day(c.valueDate) : null,
        bankRef: cell(c.bankRef),
        isReversal: false,
        transactionCode: cell(c.transactionCode),
        info: null,
        details: [
          {
            amount: null,
            direction: null,
            endToEndId: cell(c.endToEndId),
            remittance: cell(c.remittance),
            counterpartyName: cell(c.counterpartyName),
            counterpartyAccount: cell(c.counterpartyAccount)?.replace(/\s+/g, '').toUpperCase() ?? null,
            isReturn: false,
            transactionCode: cell(c.transactionCode),
            bankRef: null,
          },
        ],
        where: `line ${line}`,
      };
      out.push({ kind: 'entry', head, entry });
      if (out.length >= 1000) yield out.splice(0, out.length);
    }
  } catch (e) {
    if (e instanceof BankFileError) throw e;
    throw new BankFileError(file, 'CSV', (e as Error).message);
  }
  if (first === null || last === null)
    throw new BankFileError(file, 'line 2', 'no rows: a CSV statement needs at least one row');
  const [oldest, newest] = m.newestFirst ? [last, first] : [first, last];
  const oldestSigned = m.newestFirst ? last.signed : first.signed;
  head.statementId ??= `csv:${oldest.day}..${newest.day}`;
  out.push({
    kind: 'statement',
    statement: {
      ...head,
      opening: { amount: oldest.balance - oldestSigned, date: oldest.day, currency: m.currency, where: 'line 2' },
      closing: { amount: newest.balance, date: newest.day, currency: m.currency, where: `line ${last.line}` },
    },
  });
  yield out;
}
