import { ReconError } from '../../errors';
import type { BankFormat } from '../../events/bank-events';

/**
 * What the bank-file parsers (camt.053, MT940, CSV) hand to the import: statements and their entries,
 * amounts already in minor units. A parser yields the entries of a statement before the statement itself
 * (MT940 gives the closing balance after the entries), each entry pointing to its statement's head.
 */

export type { BankFormat };
export type Direction = 'credit' | 'debit';

/** What is known of a statement when its first entry is read. */
export interface StatementHead {
  /** ordinal of the statement in its file (0-based) */
  readonly index: number;
  statementId: string | null;
  /** as the file names it, normalised (upper case, no spaces) */
  account: string | null;
  currency: string | null;
  /** where the statement starts: "line 12" or "Stmt[3]" */
  readonly where: string;
}

export interface ParsedBalance {
  readonly amount: bigint;
  readonly date: string;
  readonly currency: string | null;
  readonly where: string;
}

export interface ParsedStatement extends StatementHead {
  readonly opening: ParsedBalance | null;
  readonly closing: ParsedBalance | null;
}

/**
 * A charge the bank states for a transfer (camt.053 `Chrgs/Rcrd`, or `Chrgs` itself in .001.02), as the file
 * writes it: whether it is folded into the entry's amount is decided by the read models
 * (src/reconciliation/bank-charges.ts, `foldedChargeOf`), never here.
 */
export interface ParsedCharge {
  readonly amount: bigint;
  /** the `Amt`'s `Ccy`, null when the file gives none */
  readonly currency: string | null;
  readonly direction: Direction | null;
  /** camt `ChrgInclInd`: the charge is included in the entry's amount (true) or not (false); null: not said */
  readonly included: boolean | null;
}

/** One transaction detail of an entry: one for a single payment, several for a batch. */
export interface ParsedDetail {
  /** null when the file gives no amount for the detail (then the entry's amount, for a single detail) */
  readonly amount: bigint | null;
  readonly direction: Direction | null;
  readonly endToEndId: string | null;
  readonly remittance: string | null;
  readonly counterpartyName: string | null;
  readonly counterpartyAccount: string | null;
  readonly isReturn: boolean;
  readonly transactionCode: string | null;
  readonly bankRef: string | null;
  /** the charges the file states for this transfer (camt `TxDtls/Chrgs`); absent or empty when none */
  readonly charges?: readonly ParsedCharge[];
}

export interface ParsedEntry {
  readonly amount: bigint;
  readonly direction: Direction;
  readonly currency: string | null;
  /** booked, pending (camt PDNG) or information only (camt INFO): only booked entries are booked */
  readonly status: 'booked' | 'pending' | 'info';
  readonly bookingDate: string | null;
  readonly valueDate: string | null;
  readonly bankRef: string | null;
  readonly isReversal: boolean;
  readonly transactionCode: string | null;
  readonly details: readonly ParsedDetail[];
  /** free text of the entry itself (camt AddtlNtryInf), used when no detail carries remittance */
  readonly info: string | null;
  /** the charges the file states at the entry's level (camt `Ntry/Chrgs`); absent or empty when none */
  readonly charges?: readonly ParsedCharge[];
  /** "line 40" or "Stmt[0]/Ntry[12]" */
  readonly where: string;
}

export type BankFileItem =
  | { readonly kind: 'entry'; readonly head: StatementHead; readonly entry: ParsedEntry }
  | { readonly kind: 'statement'; readonly statement: ParsedStatement };

/** Items in the order of the file, in groups (one per chunk read), so that a large file is never held. */
export type BankFileParser = AsyncIterable<readonly BankFileItem[]>;

/** A file that cannot be read as its format: names the file and the line or element. */
export class BankFileError extends ReconError {
  readonly code = 'BANK_FILE_INVALID';
  readonly kind = 'data';
  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${file}: ${where}: ${problem}`);
    this.name = 'BankFileError';
  }
}
