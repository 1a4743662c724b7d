import { ReconError } from '../../errors';
import { existsSync, statSync } from 'node:fs';
import type { BankAccount } from '../../config/bank';
import type { EventStore } from '../../store/types';
import { applyFile, type FileOutcome } from './apply';
import { checkFile } from './check';
import type { CsvMapping } from './csv';
import { detectFormat } from './detect';
import type { KnownEvents } from './known-events';
import { fileSha256 } from './open-file';
import { createSpool, type Spool } from './spool';
import type { BankFormat } from './types';
import type { CheckedFile } from './checked-file';

/**
 * `recon bank import`: every file is read and checked whole first; if any file has a problem (malformed, a
 * statement that does not foot, a currency that is not its account's), nothing of the import is appended.
 * The first reading keeps the booked entries in a spool (src/ingest/bank/spool.ts); the append then reads
 * them from there (src/ingest/bank/apply.ts), so a file is parsed once.
 */

export class BankImportRefused extends ReconError {
  readonly code = 'BANK_IMPORT_REFUSED';
  readonly kind = 'data';
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

/**
 * `spools`: where the spools of the files are listed as they are made (the caller removes them, refused
 * or not); without it the files are only checked.
 */
export async function checkBankFiles(
  files: readonly string[],
  opts: BankImportOptions,
  spools?: Spool[],
): Promise<CheckedFile[]> {
  const checked: CheckedFile[] = [];
  const problems: string[] = [];
  for (const file of files) {
    opts.signal?.throwIfAborted();
    if (!existsSync(file) || !statSync(file).isFile()) {
      problems.push(`${file}: no such file`);
      continue;
    }
    const format = opts.format ?? detectFormat(file);
    const spool = spools && problems.length === 0 ? createSpool() : null;
    if (spool) spools!.push(spool);
    const c = await checkFile(file, format, opts.mapping, opts.accounts, spool ?? undefined);
    await spool?.end();
    problems.push(...c.problems);
    if (c.problems.length === 0)
      checked.push({
        file,
        format,
        mapping: opts.mapping,
        sha256: await fileSha256(file),
        statements: c.statements,
        spool,
      });
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
  const spools: Spool[] = [];
  try {
    const checked = await checkBankFiles(files, opts, spools);
    const out: FileOutcome[] = [];
    for (const f of checked)
      out.push(await applyFile(store, known, f, { batchSize: opts.batchSize, signal: opts.signal }));
    return out;
  } finally {
    for (const s of spools) s.remove();
  }
}
