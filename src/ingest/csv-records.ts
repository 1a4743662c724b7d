import { type CsvError, parse } from 'csv-parse/sync';

/**
 * The small CSV files recon reads whole (the sub-merchant directory, the fee contract): RFC 4180 records read
 * by csv-parse, as every CSV recon reads, each with the physical line it starts on, so that a refusal names it.
 */

export interface CsvRecord {
  readonly line: number;
  readonly fields: string[];
}

export type CsvRecords = { ok: true; records: CsvRecord[] } | { ok: false; line: number; message: string };

/** What a quoting fault means to the person who wrote the file (csv-parse's own words name its internals). */
const FAULTS: Readonly<Record<string, string>> = {
  INVALID_OPENING_QUOTE: 'a quote in the middle of an unquoted field (quote the whole field)',
  CSV_INVALID_CLOSING_QUOTE: 'unexpected character after a closing quote (a quote inside a quoted field is written "")',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed before the end of the file',
};

/** The text between two byte offsets, without the byte order mark csv-parse skipped at the start. */
const textOf = (bytes: Buffer, from: number, to: number) => {
  const t = bytes.toString('utf8', from, to);
  return from === 0 && t.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
};

const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;

/**
 * RFC 4180 records with the line each starts on; quoted fields may hold commas, quotes and line breaks. A line
 * break is CR LF, LF or CR; an empty line is skipped (a line of blanks is a record: the reader refuses its
 * field count); blanks before an opening quote are dropped (every reader trims its cells).
 *
 * Lines are counted as a text editor shows them: csv-parse counts the CR and the LF of a CR LF inside a quoted
 * field as two lines (and a lone CR as one), so its count is corrected by the CRs inside quotes read so far.
 */
export function parseCsvRecords(text: string): CsvRecords {
  const bytes = Buffer.from(text);
  const records: CsvRecord[] = [];
  let crsInQuotes = 0;
  let lastEnd = 0;
  let lastByte = 0;
  try {
    parse(bytes, {
      bom: true,
      info: true,
      ltrim: true,
      relax_column_count: true,
      record_delimiter: ['\r\n', '\n', '\r'],
      on_record: ({ record }: { record: string[] }, at: { lines: number; bytes: number }) => {
        const inside = record.join('');
        crsInQuotes += count(inside, /\r/g);
        lastEnd = at.lines - crsInQuotes;
        // csv-parse's skip_empty_lines skips a line of blanks too (ltrim empties it): only a line with nothing
        // on it is skipped here, as it always was
        const empty = record.length === 1 && /^[\r\n]*$/.test(textOf(bytes, lastByte, at.bytes));
        lastByte = at.bytes;
        if (!empty) records.push({ line: lastEnd - count(inside, /\n/g), fields: record });
        return null;
      },
    } as never);
    // blanks after the last line break end the file without a record in csv-parse: a record of one empty field
    const tail = textOf(bytes, lastByte, bytes.length);
    if (tail !== '' && tail.trim() === '') records.push({ line: lastEnd + 1, fields: [''] });
  } catch (e) {
    const err = e as CsvError & { lines?: number };
    const message = FAULTS[err.code] ?? err.message;
    // an unclosed quote runs to the end of the file: the line its record starts on is the one to name
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') return { ok: false, line: lastEnd + 1, message };
    // the record at fault starts after the last one read; its line breaks before the fault are all inside quotes
    const breaks = (err.lines ?? 1) - (lastEnd + crsInQuotes + 1);
    const before =
      bytes
        .toString('utf8', lastByte)
        .match(/[\r\n]/g)
        ?.slice(0, Math.max(0, breaks)) ?? [];
    return { ok: false, line: lastEnd + 1 + before.filter((c) => c === '\n').length, message };
  }
  return { ok: true, records };
}
