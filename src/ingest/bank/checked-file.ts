import type { BankAccount } from '../../config/bank';
import type { StatementCheck } from './check';
import type { CsvMapping } from './csv';
import type { Spool } from './spool';
import type { BankFormat } from './types';

/** A file read whole and checked by the first reading of an import, ready to append. */
export interface CheckedFile {
  readonly file: string;
  readonly format: BankFormat;
  readonly mapping: CsvMapping | undefined;
  readonly encoding?: string;
  readonly sha256: string;
  readonly statements: readonly StatementCheck[];
  /** the booked entries kept by the first reading; null: the append reads the file again */
  readonly spool: Spool | null;
}

export interface BankImportOptions {
  readonly accounts: readonly BankAccount[];
  readonly format?: BankFormat;
  readonly mapping?: CsvMapping;
  /** of MT940 and CSV files (docs/bank.md, "Encodings"); default UTF-8 */
  readonly encoding?: string;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}
