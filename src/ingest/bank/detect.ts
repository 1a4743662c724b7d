import { closeSync, openSync, readSync } from 'node:fs';
import { BANK_FORMATS } from '../../events/bank-events';
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
    const head = buf.subarray(0, n - (n % 2));
    // a UTF-16 file (an XML statement may be one) shows its format only once decoded
    const utf16 =
      head[0] === 0xff && head[1] === 0xfe
        ? head
        : head[0] === 0xfe && head[1] === 0xff
          ? Buffer.from(head).swap16()
          : null;
    text = (utf16 ? utf16.toString('utf16le') : buf.subarray(0, n).toString('utf8')).replace(/^\uFEFF/, '').trimStart();
  } finally {
    closeSync(fd);
  }
  if (text.startsWith('<')) return 'camt.053';
  if (text.startsWith('{1:') || /^:20:/m.test(text.slice(0, 512))) return 'mt940';
  return 'csv';
}

/** A format as `--format` spells it: its name without dots (camt053), so that a shell never needs quotes. */
const optionName = (format: BankFormat): string => format.replace(/\./g, '');

/** What `--format` accepts: each format by its option name, and by its own name too (camt.053). */
export const FORMAT_OPTION: Readonly<Record<string, BankFormat>> = Object.fromEntries(
  BANK_FORMATS.flatMap((f) => [
    [optionName(f), f],
    [f, f],
  ]),
);

/** The formats as `--format` names them, for help and refusals: "camt053, mt940 or csv". */
export const FORMAT_OPTION_NAMES = (() => {
  const names = BANK_FORMATS.map(optionName);
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
})();
