import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
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
  const input = createReadStream(file, { highWaterMark: 256 * 1024 });
  if (format === 'camt.053') return parseCamt053(input, file);
  if (format === 'mt940') return parseMt940(input, file, encoding);
  if (!mapping) throw new BankFileError(file, 'format', 'a CSV bank file needs a column mapping (--mapping FILE)');
  return parseCsv(input, file, mapping, encoding);
}

export async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}
