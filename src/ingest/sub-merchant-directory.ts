import { ReconError } from '../errors';
import { createHash } from 'node:crypto';
import type { Sql } from '../db/connect';
import type { Logger } from '../log';
import { storedClashes, storedDirectory } from './sub-merchant-clashes';
import type { EventStore } from '../store/types';
import {
  type CsvIssue,
  formatCsvIssue,
  importSubMerchants,
  readSubMerchantDirectory,
  type SubMerchantRow,
} from './sub-merchants';

/**
 * RECON_SUB_MERCHANTS in force: the one step every command and job that judges (start, the nightly and monthly
 * jobs, sync, project, statements, demo) runs before anything else. The whole directory is validated first, so a
 * malformed file is refused with every problem named (file, line, column) and nothing of it appended; then a
 * `SubMerchantRegistered` is appended per new or changed row (idempotent: a re-run appends nothing, a changed
 * row is a new version of that sub-merchant).
 */

export class SubMerchantDirectoryError extends ReconError {
  readonly code = 'SUB_MERCHANT_DIRECTORY_INVALID';
  readonly kind = 'data';
  constructor(
    readonly source: string,
    readonly issues: readonly CsvIssue[],
  ) {
    super(
      `RECON_SUB_MERCHANTS=${source}: the sub-merchant directory has ${issues.length} problem${issues.length === 1 ? '' : 's'} (nothing imported):\n` +
        issues.map((i) => `  ${formatCsvIssue(i)}`).join('\n'),
    );
    this.name = 'SubMerchantDirectoryError';
  }
}

export interface DirectoryVersion {
  readonly path: string;
  readonly files: number;
  readonly rows: number;
  /** first 12 hex digits of the SHA-256 of the rows' content (ids, names, hold days): changes with any value */
  readonly version: string;
}

export interface DirectoryApplied extends DirectoryVersion {
  readonly registered: number;
  readonly unchanged: number;
}

function versionOf(source: string, rows: readonly SubMerchantRow[]): DirectoryVersion {
  const content = [...rows]
    .sort((a, b) => (a.subMerchantId < b.subMerchantId ? -1 : a.subMerchantId > b.subMerchantId ? 1 : 0))
    .map((r) => [r.subMerchantId, r.name, r.reserveHoldDays]);
  return {
    path: source,
    files: new Set(rows.map((r) => r.file)).size,
    rows: rows.length,
    version: createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 12),
  };
}

/** The directory read and checked, without touching the store (what `recon config` shows). */
export function describeSubMerchantDirectory(source: string): DirectoryVersion {
  const r = readSubMerchantDirectory(source);
  if (!r.ok) throw new SubMerchantDirectoryError(source, r.issues);
  return versionOf(source, r.rows);
}

/** Imports RECON_SUB_MERCHANTS when set; undefined when it is not. */
export async function applySubMerchantDirectory(deps: {
  readonly store: EventStore;
  readonly source: string | undefined;
  readonly log: Logger;
  /** the read models' database: the rows are checked against the sub-merchants registered already */
  readonly sql?: Sql;
}): Promise<DirectoryApplied | undefined> {
  const { source, log } = deps;
  if (!source) return undefined;
  const r = readSubMerchantDirectory(source);
  if (!r.ok) throw new SubMerchantDirectoryError(source, r.issues);
  const clashes = deps.sql ? storedClashes(r.rows, await storedDirectory(deps.sql, deps.store)) : [];
  if (clashes.length) throw new SubMerchantDirectoryError(source, clashes);
  const imported = await importSubMerchants(deps.store, r.rows);
  const applied = { ...versionOf(source, r.rows), ...imported };
  log.info('sub-merchant directory in force', { ...applied });
  return applied;
}
