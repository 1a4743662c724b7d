import { existsSync, statSync } from 'node:fs';
import type { BankAccount } from '../../config/bank';
import type { EventStore } from '../../store/types';
import { applyFile, type FileOutcome } from './apply';
import { checkFile, type StatementCheck } from './check';
import type { CsvMapping } from './csv';
import { detectFormat } from './detect';
import type { KnownEvents } from './known-events';
import { fileSha256 } from './open-file';
import type { BankFormat } from './types';

/**
 * `recon bank import`: every file is read and checked whole first; if any file has a problem (malformed, a
 * statement that does not foot, a currency that is not its account's), nothing of the import is appended.
 * Then each file is read again and appended (src/ingest/bank/apply.ts).
 */

export interface CheckedFile {
  readonly file: string;
  readonly format: BankFormat;
  readonly mapping: CsvMapping | undefined;
  readonly sha256: string;
  readonly statements: readonly StatementCheck[];
}

export class BankImportRefused extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `nothing imported: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'BankImportRefused';
  }
}

export interface BankImportOptions {
  readonly accounts: readonly BankAccount[];
  readonly format?: BankFormat;
  readonly mapping?: CsvMapping;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}

export async function checkBankFiles(files: readonly string[], opts: BankImportOptions): Promise<CheckedFile[]> {
  const checked: CheckedFile[] = [];
  const problems: string[] = [];
  for (const file of files) {
    opts.signal?.throwIfAborted();
    if (!existsSync(file) || !statSync(file).isFile()) {
      problems.push(`${file}: no such file`);
      continue;
    }
    const format = opts.format ?? detectFormat(file);
    const c = await checkFile(file, format, opts.mapping, opts.accounts);
    problems.push(...c.problems);
    if (c.problems.length === 0)
      checked.push({ file, format, mapping: opts.mapping, sha256: await fileSha256(file), statements: c.statements });
  }
  if (problems.length > 0) throw new BankImportRefused(problems);
  return checked;
}

export async function importBankFiles(
  store: EventStore,
  known: KnownEvents,
  files: readonly string[],
  opts: BankImportOptions,
): Promise<FileOutcome[]> {
  const checked = await checkBankFiles(files, opts);
  const out: FileOutcome[] = [];
  for (const f of checked)
    out.push(await applyFile(store, known, f, { batchSize: opts.batchSize, signal: opts.signal }));
  return out;
}
