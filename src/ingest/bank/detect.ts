import { closeSync, openSync, readSync } from 'node:fs';
import type { BankFormat } from './types';

/**
 * The format of a bank file from its first bytes: XML is camt.053, `{1:` or a `:20:` field is MT940,
 * anything else CSV (which needs a mapping). `--format` overrides it.
 */
export function detectFormat(file: string): BankFormat {
  const fd = openSync(file, 'r');
  let text: string;
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    text = buf
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart();
  } finally {
    closeSync(fd);
  }
  if (text.startsWith('<')) return 'camt.053';
  if (text.startsWith('{1:') || /^:20:/m.test(text.slice(0, 512))) return 'mt940';
  return 'csv';
}

export const FORMAT_OPTION: Record<string, BankFormat> = {
  camt053: 'camt.053',
  'camt.053': 'camt.053',
  mt940: 'mt940',
  csv: 'csv',
};
