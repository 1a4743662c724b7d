import { ReconError } from '../../errors';
import { existsSync, statSync } from 'node:fs';
import { StoreError } from '../../store/errors';
import type { EventStore } from '../../store/types';
import { FilesRefused, importAsBulk, NotForBulk } from './bulk';
import { applyFile, type FileOutcome } from './apply';
import { checkFile } from './check';
import { detectFormat } from './detect';
import type { KnownEvents } from './known-events';
import { statementIds } from './statement-ids';
import { fileSha256 } from './open-file';
import { createSpool, type Spool } from './spool';
import type { BankImportOptions, CheckedFile } from './checked-file';

/**
 * `recon bank import`: every file is read and checked whole first; if any file has a problem (malformed, a
 * statement that does not foot, a currency that is not its account's), nothing of the import is appended.
 * On PostgreSQL the import is one bulk append that the first reading feeds as it goes
 * (src/ingest/bank/bulk.ts); otherwise, and for what the bulk leaves to it, the first reading keeps the
 * booked entries in a spool (src/ingest/bank/spool.ts) and the append reads them from there in batches
 * (src/ingest/bank/apply.ts). Either way a file is parsed once per path taken.
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

export type { BankImportOptions } from './checked-file';

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
    const c = await checkFile(file, format, opts.mapping, opts.accounts, spool ?? undefined, opts.encoding);
    await spool?.end();
    problems.push(...c.problems);
    if (c.problems.length === 0)
      checked.push({
        file,
        format,
        mapping: opts.mapping,
        encoding: opts.encoding,
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
  // EventStoreDB's appendBulk holds the whole import in memory: the batched import suits it better
  if (store.backend === 'postgres') {
    try {
      return await importAsBulk(store, files, opts, known.statements);
    } catch (e) {
      if (e instanceof FilesRefused) throw new BankImportRefused(e.problems);
      const overlap = e instanceof StoreError && e.code === 'EVENT_ID_CONFLICT';
      if (!(e instanceof NotForBulk) && !overlap) throw e;
      // nothing of the bulk was written: the batched import, which looks stored ids up, takes it
    }
  }
  return importInBatches(store, known, files, opts);
}

/** The import in batches, each one appendMany, from the spools of a first reading that checks every file. */
export async function importInBatches(
  store: EventStore,
  known: KnownEvents,
  files: readonly string[],
  opts: BankImportOptions,
): Promise<FileOutcome[]> {
  const spools: Spool[] = [];
  try {
    const checked = await checkBankFiles(files, opts, spools);
    const ids = statementIds(known.statements);
    const problems: string[] = [];
    for (const f of checked) problems.push(...(await ids.problems(f)));
    if (problems.length > 0) throw new BankImportRefused(problems);
    const out: FileOutcome[] = [];
    for (const f of checked)
      out.push(await applyFile(store, known, f, { batchSize: opts.batchSize, signal: opts.signal }));
    return out;
  } finally {
    for (const s of spools) s.remove();
  }
}
