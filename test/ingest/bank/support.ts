import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseCamt053 } from '../../../src/ingest/bank/camt053';
import { parseMt940 } from '../../../src/ingest/bank/mt940';
import type { BankFileItem, BankFileParser, ParsedEntry, ParsedStatement } from '../../../src/ingest/bank/types';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const fixture = (name: string) => path.join(FIXTURES, name);

export async function collect(p: BankFileParser): Promise<{ statements: ParsedStatement[]; entries: ParsedEntry[] }> {
  const items: BankFileItem[] = [];
  for await (const batch of p) items.push(...batch);
  return {
    statements: items.flatMap((i) => (i.kind === 'statement' ? [i.statement] : [])),
    entries: items.flatMap((i) => (i.kind === 'entry' ? [i.entry] : [])),
  };
}

export const camtText = (text: string, file = 'test.xml') => collect(parseCamt053(Readable.from([text]), file));
export const mt940Text = (text: string, file = 'test.sta') => collect(parseMt940(Readable.from([text]), file));

let dir: string | undefined;
/** A file of this text in a temporary directory of the test run. */
export function tempFile(name: string, text: string | Buffer): string {
  dir ??= mkdtempSync(path.join(tmpdir(), 'recon-bank-'));
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}
