import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { parseCamt053 } from './camt053';
import { type CsvMapping, parseCsv } from './csv';
import { parseMt940 } from './mt940';
import { BankFileError, type BankFileParser, type BankFormat } from './types';

/**
 * A fresh parser over the file (the import reads a file twice: to check it whole, then to append it).
 * `encoding`: of an MT940 or CSV file (default UTF-8; a CSV mapping's own wins); a camt.053 declares its own.
 */
export function parserFor(
  file: string,
  format: BankFormat,
  mapping: CsvMapping | undefined,
  encoding?: string,
): BankFileParser {
  if (format === 'csv' && !mapping)
    throw new BankFileError(file, 'format', 'a CSV bank file needs a column mapping (--mapping FILE)');
  return PARSERS[format](createReadStream(file, { highWaterMark: 256 * 1024 }), file, mapping!, encoding);
}

/** One parser per format (a new format without its parser does not compile). */
const PARSERS: Record<
  BankFormat,
  (input: Readable, file: string, mapping: CsvMapping, encoding: string | undefined) => BankFileParser
> = {
  'camt.053': (input, file) => parseCamt053(input, file),
  mt940: (input, file, _mapping, encoding) => parseMt940(input, file, encoding),
  csv: (input, file, mapping, encoding) => parseCsv(input, file, mapping, encoding),
};

export async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}
